"""Stopping on SIGINT, SIGTERM and SIGHUP without leaving processes behind.

The bash tool runs each command in its own process group, so a signal that kills ``pi`` does
not reach the command: a ``kill <pi>`` or a closed terminal would orphan it. The print and RPC
modes therefore catch these signals while they run (``StopSignals``): the first one aborts the
session (the tool kills its process group and the session records the abort) and the mode
exits with ``128 + signal``. Outside those runs (start-up, the TUI), ``install_backstop``
makes SIGTERM and SIGHUP kill the running commands' process groups before ``pi`` dies.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_coder.tools import kill_running_commands as kill_shell_commands

if TYPE_CHECKING:
    import asyncio

__all__ = ["STOP_SIGNALS", "StopSignals", "exit_code_for", "install_backstop", "kill_running_commands"]

STOP_SIGNALS: tuple[int, ...] = tuple(
    sig for sig in (getattr(signal, name, None) for name in ("SIGINT", "SIGTERM", "SIGHUP")) if sig is not None
)
"""The signals that stop a run (those that exist on this platform)."""

_BACKSTOP_SIGNALS = tuple(sig for sig in STOP_SIGNALS if sig != signal.SIGINT)


def exit_code_for(signum: int) -> int:
    """The shell convention for a run stopped by ``signum``: 130 for SIGINT, 143 for SIGTERM."""
    return 128 + signum


def kill_running_commands() -> None:
    """SIGKILL the process groups of shell commands still running (bash tool, ``!cmd``)."""
    kill_shell_commands()


def _backstop(signum: int, frame: Any) -> None:
    kill_running_commands()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def install_backstop() -> None:
    """Make SIGTERM and SIGHUP kill running commands before the default action ends ``pi``.

    Signals whose handler is not the default (set by an embedding program) are left alone.
    """
    for sig in _BACKSTOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            if signal.getsignal(sig) == signal.SIG_DFL:
                signal.signal(sig, _backstop)


class StopSignals:
    """While installed, the first stop signal calls ``on_stop(signum)`` inside the event loop.

    The handlers are removed at the first signal, so a second one acts as before (Ctrl+C
    raises ``KeyboardInterrupt``; SIGTERM/SIGHUP go to the backstop): a stuck abort can
    still be interrupted.
    """

    def __init__(self, on_stop: Callable[[int], None]) -> None:
        self._on_stop = on_stop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, Any] = {}
        self.received: int | None = None
        """The signal that stopped the run, if one did."""

    def install(self) -> None:
        """Install the handlers on the running loop (no-op off the main thread or on Windows)."""
        import asyncio

        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            try:
                previous = signal.getsignal(sig)
                loop.add_signal_handler(sig, self._fire, sig)
            except (NotImplementedError, RuntimeError, ValueError):
                continue
            self._previous[sig] = previous
        if self._previous:
            self._loop = loop

    def _fire(self, signum: int) -> None:
        self.received = signum
        self.uninstall()
        self._on_stop(signum)

    def uninstall(self) -> None:
        """Give each signal back its previous handler."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        for sig, previous in self._previous.items():
            if sig == signal.SIGINT or previous is None:
                # asyncio.run's own SIGINT handler would only cancel the main task; a second
                # Ctrl+C must stop at once.
                previous = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
            with contextlib.suppress(ValueError, OSError, RuntimeError):
                loop.remove_signal_handler(sig)
                signal.signal(sig, previous)
        self._previous.clear()
