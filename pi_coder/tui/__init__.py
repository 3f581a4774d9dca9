"""The interactive terminal UI (the only package that imports textual).

Importing this package is cheap; Textual loads when ``run_tui`` or ``PiApp`` is first used.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.tui.app import PiApp

__all__ = ["PiApp", "run_tui"]


def run_tui(
    session: AgentSession,
    *,
    initial_messages: Sequence[str] = (),
    startup_notices: Sequence[str] = (),
    **options: Any,
) -> int:
    """Run the TUI on ``session`` until the user quits.

    Args:
        session: The AgentSession to drive.
        initial_messages: Prompts to send once the screen is up (``pi "message"``).
        startup_notices: Warning lines to show at the top (from the CLI).
        **options: Further ``PiApp`` keyword arguments (``hide_thinking=``, ``resume=``...).

    The keymap (the ``[keybindings]`` settings) and the theme (the ``theme`` setting, with this
    run's ``--theme``/``--no-themes``) are set up here and handed to ``PiApp`` ready.

    Returns:
        The process exit code.
    """
    _forget_stale_size()
    from pi_coder.tui.app import PiApp
    from pi_coder.tui.keybindings import load_keybindings
    from pi_coder.tui.theming import session_themes

    if options.get("keymap") is None:
        options["keymap"] = load_keybindings(session.settings)
    if options.get("themes") is None:
        options["themes"] = session_themes(session)
    app = PiApp(session, initial_messages=initial_messages, startup_notices=startup_notices, **options)
    app.run()
    from pi_coder.tui.exit_output import write_exit_output

    write_exit_output(app.exit_transcript, resume_hint(session))
    return app.return_code or 0


def _forget_stale_size() -> None:
    """Drop ``COLUMNS``/``LINES`` so the terminal's real size (and its resizes) rule, as in Pi.

    Shells and Python parents that imported readline export them; Rich and Textual would take
    them as the screen size. Commands the agent runs then see the real size too.
    """
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)


def resume_hint(session: AgentSession) -> str:
    """Pi's "To resume this session: pi --session <id>", or "" when no session file was written."""
    path = session.session_file
    session_id = session.session_id
    if not path or not session_id or not os.path.exists(path):
        return ""
    return f"To resume this session: pi --session {session_id}"


def __getattr__(name: str) -> Any:
    if name == "PiApp":
        from pi_coder.tui.app import PiApp

        return PiApp
    raise AttributeError(name)
