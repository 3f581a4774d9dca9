"""``pi -e ext.py --help`` lists the extension's flags under "Extension options" (real processes)."""

from __future__ import annotations

from tests.extensions.conftest import write_ext
from tests.modes.pirun import PiHome

EXT = """
def extension(pi):
    pi.register_flag("shout", description="Answer in capitals")
    pi.register_flag("persona", description="Who to be", type="str")
"""


def test_help_lists_extension_flags(pi: PiHome) -> None:
    ext = write_ext(pi.project, "flags", EXT)
    run = pi.run("-e", str(ext), "--help")
    assert run.returncode == 0, run.stderr
    section = run.stdout.split("Extension options:", 1)[1]
    assert "--shout" in section and "Answer in capitals" in section
    assert "--persona VALUE" in section and "Who to be" in section
    assert "--shout" not in run.stdout.split("Extension options:", 1)[0]


def test_help_builtin_flag_and_plain_help(pi: PiHome) -> None:
    run = pi.run("-e", "builtin:plan-mode", "--help")
    assert run.returncode == 0, run.stderr
    assert "--plan" in run.stdout.split("Extension options:", 1)[1]
    plain = pi.run("--help")
    assert plain.returncode == 0 and "Extension options" not in plain.stdout


def test_help_with_a_broken_extension_still_prints(pi: PiHome) -> None:
    ext = write_ext(pi.project, "broken", "def extension(pi):\n    raise RuntimeError('boom')\n")
    run = pi.run("-e", str(ext), "--help")
    assert run.returncode == 0
    assert "Usage: pi" in run.stdout and "boom" in run.stderr
