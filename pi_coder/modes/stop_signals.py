"""Stopping on SIGINT, SIGTERM and SIGHUP without leaving processes behind.

The bash tool runs each command in its own process group, so a signal that kills ``pi`` does
not reach the command: a ``kill <pi>`` or a closed terminal would orphan it. The print and RPC
modes therefore catch these signals while they run (``StopSignals``): the first one aborts the
session (the tool kills its process group and the session records the abort) and the mode
exits with ``128 + signal``. Outside those runs (start-up, the TUI), ``install_backstop``
makes SIGTERM and SIGHUP kill the running commands' process groups before ``pi`` dies, and
whatever else registered with ``on_backstop`` (the MCP servers' process groups: a server that
ignores stdin EOF, or one still initializing, would otherwise outlive a closed terminal).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from pi_coder.tools import kill_running_commands as kill_shell_commands

if TYPE_CHECKING:
    import asyncio
    from types import FrameType

_SignalHandler: TypeAlias = "Callable[[int, FrameType | None], object] | int | signal.Handlers | None"
"""What ``signal.getsignal`` returns and ``signal.signal`` takes."""

__all__ = [
    "STOP_SIGNALS",
    "StopNow",
    "StopSignals",
    "exit_code_for",
    "install_backstop",
    "kill_running_commands",
    "on_backstop",
]

STOP_SIGNALS: tuple[int, ...] = tuple(
    sig for sig in (getattr(signal, name, None) for name in ("SIGINT", "SIGTERM", "SIGHUP")) if sig is not None
)
"""The signals that stop a run (those that exist on this platform)."""

_BACKSTOP_SIGNALS = tuple(sig for sig in STOP_SIGNALS if sig != signal.SIGINT)


def exit_code_for(signum: int) -> int:
    """The shell convention for a run stopped by ``signum``: 130 for SIGINT, 143 for SIGTERM."""
    return 128 + signum


_BACKSTOP_ACTIONS: list[Callable[[], None]] = []


def on_backstop(action: Callable[[], None]) -> None:
    """Run ``action`` (quick, signal-safe: e.g. SIGKILL some process groups) when SIGTERM or SIGHUP
    ends ``pi`` through the backstop. Registering the same action twice runs it once."""
    if action not in _BACKSTOP_ACTIONS:
        _BACKSTOP_ACTIONS.append(action)


def kill_running_commands() -> None:
    """SIGKILL the process groups of shell commands still running (bash tool, ``!cmd``)."""
    kill_shell_commands()


def _backstop(signum: int, frame: FrameType | None) -> None:
    kill_running_commands()
    for action in list(_BACKSTOP_ACTIONS):
        with contextlib.suppress(Exception):
            action()
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


class StopNow(KeyboardInterrupt):
    """Raised in the main thread by a stop signal while the event loop has not taken the first
    one (something blocks it, e.g. an extension handler in ``time.sleep``): the mode unwinds,
    closes the session and exits with ``128 + signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


BLOCKED_GRACE = 2.0
"""Seconds a blocked event loop gets to take a SIGTERM/SIGHUP before ``StopNow`` is raised."""


class StopSignals:
    """While installed, the first stop signal calls ``on_stop(signum)`` inside the event loop.

    The handlers are removed once the loop takes the signal, so a second one acts as before
    (Ctrl+C raises ``KeyboardInterrupt``; SIGTERM/SIGHUP go to the backstop): a stuck abort can
    still be interrupted. When the loop is blocked (a synchronous extension handler), a second
    signal, or a SIGTERM/SIGHUP not taken within ``BLOCKED_GRACE`` seconds, raises
    :class:`StopNow` in the main thread.
    """

    def __init__(self, on_stop: Callable[[int], None]) -> None:
        self._on_stop = on_stop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, _SignalHandler] = {}
        self._pending: int | None = None
        self.received: int | None = None
        """The signal that stopped the run, if one did."""

    def install(self) -> None:
        """Install the handlers for the running loop (no-op off the main thread)."""
        import asyncio

        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            try:
                previous = signal.getsignal(sig)
                signal.signal(sig, self._handle)
            except (ValueError, OSError):
                continue
            self._previous[sig] = previous
        if self._previous:
            self._loop = loop

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        """Python-level handler: runs in the main thread between bytecodes, even inside ``time.sleep``."""
        loop = self._loop
        if loop is None or loop.is_closed():
            raise StopNow(signum)
        if self._pending is not None:  # the loop did not take the first signal: it is blocked
            self.received = self._pending
            raise StopNow(self._pending)
        self._pending = signum
        loop.call_soon_threadsafe(self._fire, signum)
        if signum != signal.SIGINT:
            import threading

            timer = threading.Timer(BLOCKED_GRACE, self._nudge, (signum,))
            timer.daemon = True
            timer.start()

    def _nudge(self, signum: int) -> None:
        if self._pending == signum and self._loop is not None:
            with contextlib.suppress(OSError, ValueError):
                import threading

                main = threading.main_thread().ident
                if main is not None:
                    signal.pthread_kill(main, signum)

    def _fire(self, signum: int) -> None:
        self._pending = None
        if self._loop is None:
            return
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
                signal.signal(sig, previous)
        self._previous.clear()
