"""README's "Flags (Pi 1.6 parity)" table agrees with the parser and with Pi 1.6's flag list.

Every flag the parser knows is in the table; a row marked "no" names flags the parser rejects;
every flag of Pi 1.6's ``--help`` is in the table. When Pi 1.6 is installed at /tmp/pi16 its
``--help`` is read too, so a flag list copied wrongly here is caught.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from pi_coder import cli

README = Path(__file__).resolve().parents[1] / "README.md"
PI16 = Path("/tmp/pi16/node_modules/@earendil-works/pi-coding-agent/dist/cli.js")
NODE = Path("/tmp/pi16/node_modules/.bin/node")

PI16_FLAGS = frozenset(
    """--provider --model --api-key --system-prompt --append-system-prompt --mode --print -p --continue -c
    --resume -r --session --session-id --fork --session-dir --no-session --name -n --models --no-tools -nt
    --no-builtin-tools -nbt --tools -t --exclude-tools -xt --thinking --extension -e --no-extensions -ne
    --no-mcp --skill --no-skills -ns --prompt-template --no-prompt-templates -np --theme --use-theme
    --no-themes --no-context-files -nc --export --list-models --verbose --tui-mode --approve -a --no-approve
    -na --offline --help -h --version -v""".split()
)
"""The options of Pi 1.6's ``pi --help`` (without ``--``)."""


def _table() -> dict[str, str]:
    """Flag -> status text, from the README table."""
    text = README.read_text(encoding="utf-8")
    section = text.split("### Flags (Pi 1.6 parity)", 1)[1].split("\n\n", 2)[2]
    rows: dict[str, str] = {}
    for line in section.splitlines()[2:]:  # after the header and the |---| line
        if not line.startswith("| `"):
            break
        flags_cell, status = (cell.strip() for cell in line.strip("|").split("|", 1))
        for flag in re.findall(r"`(-{1,2}[a-z][a-z-]*)`", flags_cell):
            assert flag not in rows, f"{flag} is listed twice"
            rows[flag] = status.strip(" |")
    return rows


def test_every_parser_flag_is_in_the_table_with_a_true_status() -> None:
    table = _table()
    parser_flags = set(cli._BY_FLAG)
    assert parser_flags - set(table) == set(), "flags missing from README's parity table"
    for flag, status in table.items():
        if status.startswith("no"):
            assert flag not in parser_flags, f"{flag} is marked 'no' but the parser accepts it"
        else:
            assert flag in parser_flags, f"{flag} is marked '{status}' but the parser does not know it"
        if status == "pi_coder only":
            assert flag not in PI16_FLAGS, f"{flag} is a Pi 1.6 flag"


def test_every_pi16_flag_is_in_the_table() -> None:
    assert PI16_FLAGS - set(_table()) == set()


@pytest.mark.skipif(not (PI16.exists() and NODE.exists()), reason="Pi 1.6 is not installed at /tmp/pi16")
def test_the_pi16_flag_list_matches_pi16s_own_help(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", ""), "PI_OFFLINE": "1"}
    done = subprocess.run([str(NODE), str(PI16), "--help"], env=env, capture_output=True, text=True, timeout=120)
    options = done.stdout.split("Options:", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"^\s{2}(-{1,2}[a-z][a-z-]*)(?:, (-[a-z]+))?", options, re.M))
    found = {flag for pair in listed for flag in pair if flag}
    assert found == PI16_FLAGS
