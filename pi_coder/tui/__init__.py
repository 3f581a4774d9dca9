"""The interactive terminal UI (the only package that imports textual).

Importing this package is cheap; Textual loads when ``run_tui`` or ``PiApp`` is first used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.tui.app import PiApp

__all__ = ["PiApp", "run_tui"]


def run_tui(
    session: Any,
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
        **options: Further ``PiApp`` keyword arguments (``keybindings=``, ``hide_thinking=``...).

    Returns:
        The process exit code.
    """
    from pi_coder.tui.app import PiApp

    app = PiApp(session, initial_messages=initial_messages, startup_notices=startup_notices, **options)
    app.run()
    return app.return_code or 0


def __getattr__(name: str) -> Any:
    if name == "PiApp":
        from pi_coder.tui.app import PiApp

        return PiApp
    raise AttributeError(name)
