"""EventHub: the session's subscribers and how events reach them.

``AgentSession`` is an ``EventHub``: every agent event it re-emits and every session event of
its own (``core/events.py``) goes through :meth:`EventHub.emit` (awaited, in subscription
order) or :meth:`EventHub.emit_nowait` (from synchronous code). See docs/session-host.md.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from types import CoroutineType

from pi_coder.core.events import Event

__all__ = ["EventHub", "Listener"]

_log = logging.getLogger(__name__)

Listener = Callable[[Event], Awaitable[None] | None]
"""``listener(event)``; may be async (awaited in order)."""


class EventHub:
    """An ordered list of listeners; async listeners started from sync code are tracked until done."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._background: set[asyncio.Future[None]] = set()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every agent and session event; returns the unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def emit(self, event: Event) -> None:
        """Send ``event`` to every listener in order, awaiting async ones."""
        for listener in tuple(self._listeners):
            result = listener(event)
            if result is not None and (type(result) is CoroutineType or inspect.isawaitable(result)):
                await result

    def emit_nowait(self, event: Event) -> None:
        """``emit`` from synchronous code: sync listeners run now, async ones are scheduled."""
        for listener in tuple(self._listeners):
            result = listener(event)
            if result is not None and inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._background.add(task)
                task.add_done_callback(self._listener_done)

    def _listener_done(self, task: asyncio.Future[None]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("session event listener failed", exc_info=task.exception())

    async def drain_listeners(self) -> None:
        """Wait for the async listeners ``emit_nowait`` started (errors are logged, not raised)."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
