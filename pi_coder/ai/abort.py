"""AbortController and AbortSignal: cooperative cancellation, as in the web platform.

Defined in the provider layer because providers honour the signal; ``pi_coder.agent``
re-exports both names.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING

__all__ = ["AbortController", "AbortSignal"]


if TYPE_CHECKING:
    import asyncio


def running_loop() -> asyncio.AbstractEventLoop:
    """``asyncio.get_running_loop()``; asyncio is imported on first use, not when this layer is
    imported (``import pi_coder.ai`` is ~40 ms cheaper for callers that never start a loop)."""
    import asyncio

    return asyncio.get_running_loop()


class AbortSignal:
    """Read side of an abort: ``aborted``, ``reason``, ``await wait()`` and listeners."""

    __slots__ = ("_aborted", "_reason", "_listeners", "_waiters")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._listeners: list[Callable[[], object]] = []
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> object:
        return self._reason

    def add_listener(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` once when the signal aborts (at once if it already has)."""
        if self._aborted:
            _call(callback)
        else:
            self._listeners.append(callback)

    def remove_listener(self, callback: Callable[[], object]) -> None:
        try:
            self._listeners.remove(callback)
        except ValueError:
            pass

    async def wait(self) -> None:
        """Return when the signal is aborted."""
        if self._aborted:
            return
        fut = running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        finally:
            if fut in self._waiters:
                self._waiters.remove(fut)

    def _abort(self, reason: object) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        listeners, self._listeners = self._listeners, []
        for fut in self._waiters:
            if not fut.done():
                fut.set_result(None)
        for callback in listeners:
            _call(callback)


def _call(callback: Callable[[], object]) -> None:
    result = callback()
    if inspect.isawaitable(result):
        import asyncio

        asyncio.ensure_future(result)


class AbortController:
    """Owns an ``AbortSignal``; ``abort(reason)`` fires it once."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: object = None) -> None:
        self.signal._abort(reason if reason is not None else "aborted")
