"""``pi -r -p``: a numbered list of this folder's sessions, read from the terminal (the TUI has its own picker)."""

from __future__ import annotations

import sys
from pathlib import Path

from pi_coder.errors import UserError

__all__ = ["pick_session"]

_SHOWN = 20


def _line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def pick_session(cwd: str, session_dir: str | None) -> Path:
    """Show the most recent sessions of ``cwd`` and return the chosen file.

    Raises:
        UserError: stdin is not a terminal, or there are no sessions.
        StartupExit: Nothing was chosen ("No session selected", exit 0).
    """
    from pi_coder.modes.options import StartupExit
    from pi_coder.session.listing import list_sessions

    if sys.stdin is None or not sys.stdin.isatty():
        raise UserError("--resume needs a terminal to pick a session; use --session <id> or -c instead")
    sessions = list_sessions(cwd, session_dir)
    if not sessions:
        raise UserError("No sessions in this folder yet")
    out = sys.stderr
    print("Resume Session (Current Folder)", file=out)
    for index, info in enumerate(sessions[:_SHOWN], start=1):
        when = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
        title = info.name or info.first_message
        print(f"{index:>3}. {when}  {info.message_count:>4} msgs  {_line(title, 70)}", file=out)
    try:
        answer = input(f"Session number (1-{min(len(sessions), _SHOWN)}, Enter to cancel): ").strip()
    except EOFError:
        answer = ""
    if not answer.isdigit() or not 1 <= int(answer) <= min(len(sessions), _SHOWN):
        raise StartupExit(0, "No session selected")
    return sessions[int(answer) - 1].path
