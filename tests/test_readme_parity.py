"""README's parity tables (slash commands, RPC commands) against the code's command registries.

A command added to or removed from ``pi_coder.tui.commands.COMMANDS`` or
``pi_coder.modes.rpc_commands.COMMANDS`` without its README row fails here, as does a row whose
argument hint differs from the command's. The Pi 1.6 columns are checked against Pi's own docs
when they are present (``/tmp/pi16``), else against the lists below (taken from those docs).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pi_coder.modes.rpc_commands import COMMANDS as RPC_COMMANDS
from pi_coder.tui.commands import COMMANDS as SLASH_COMMANDS

README = Path(__file__).parent.parent / "README.md"
PI_DOCS = Path("/tmp/pi16/node_modules/@earendil-works/pi-coding-agent/docs")

PI16_SLASH = {
    "settings", "model", "thinking", "scoped-models", "login", "logout", "llama", "new", "resume", "name",
    "session", "tree", "fork", "clone", "compact", "import", "copy", "export", "share", "bug", "trust", "mcp",
    "reload", "hotkeys", "changelog", "quit",
}  # fmt: skip
PI16_RPC = {
    "prompt", "steer", "follow_up", "abort", "clear_queue", "new_session", "get_state", "get_messages",
    "set_model", "cycle_model", "get_available_models", "set_thinking_level", "cycle_thinking_level",
    "get_available_thinking_levels", "set_steering_mode", "set_follow_up_mode", "compact", "set_auto_compaction",
    "set_auto_retry", "abort_retry", "bash", "abort_bash", "get_session_stats", "export_html", "switch_session",
    "fork", "clone", "get_fork_messages", "get_entries", "get_tree", "get_last_assistant_text", "set_session_name",
    "get_commands",
}  # fmt: skip


def _table(after: str) -> list[list[str]]:
    """The cells of the first Markdown table after the line containing ``after``."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if set("".join(cells)) <= set("-: "):
            continue
        rows.append(cells)
    return rows[1:]  # without the header


def _slash_rows() -> dict[str, tuple[str, str, str]]:
    """``name -> (args hint, Pi 1.6 cell, pi_coder cell)``."""
    out = {}
    for cells in _table("Slash commands (this table"):
        match = re.fullmatch(r"`/([a-z-]+)\s*(.*?)`", cells[0])
        assert match, f"README slash row not of the form `/name [args]`: {cells[0]}"
        out[match.group(1)] = (match.group(2), cells[1], cells[2])
    return out


def _names(cell: str) -> set[str]:
    return set(re.findall(r"`([a-z_]+)`", re.sub(r"\([^)]*\)", "", cell)))


def test_slash_table_matches_the_tui_registry() -> None:
    rows = _slash_rows()
    ours = {name for name, (_, _, here) in rows.items() if here == "✓"}
    assert ours == {command.name for command in SLASH_COMMANDS}
    for command in SLASH_COMMANDS:
        assert rows[command.name][0] == command.args_hint, f"/{command.name}: README hint differs from the code"
    assert {name for name, (_, pi, _) in rows.items() if pi == "✓"} == PI16_SLASH
    assert all(here in ("✓", "–") and pi in ("✓", "–", "hidden") for _, pi, here in rows.values())


def test_rpc_table_matches_the_rpc_registry() -> None:
    both: set[str] = set()
    ours_only: set[str] = set()
    pi_only: set[str] = set()
    for cells in _table("while streaming events:"):
        names, pi, here = _names(cells[0]), cells[1], cells[2]
        target = both if (pi, here) == ("✓", "✓") else ours_only if here == "✓" else pi_only
        assert not names & (both | ours_only | pi_only), f"listed twice: {names}"
        target |= names
    assert both | ours_only == set(RPC_COMMANDS)
    assert both | pi_only == PI16_RPC


@pytest.mark.skipif(not PI_DOCS.is_dir(), reason="Pi 1.6's docs are not unpacked in /tmp/pi16")
def test_the_pi16_lists_match_pis_docs() -> None:
    slash = (PI_DOCS / "slash-commands.md").read_text(encoding="utf-8")
    assert set(re.findall(r"^\| `/([a-z-]+)", slash, re.MULTILINE)) == PI16_SLASH
    rpc = (PI_DOCS / "rpc.md").read_text(encoding="utf-8")
    anchors = rpc[rpc.index("## Moved reference anchors") : rpc.index("Command details moved")]
    assert set(re.findall(r'<a id="([a-z_]+)"></a>', anchors)) == PI16_RPC
