"""The event bus extensions of one runtime share (``pi.events``, docs/extensions-runtime.md#other-methods)."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["EventBus"]

ErrorSink = Callable[[str, BaseException], None]


class EventBus:
    """``on(channel, fn) -> unsubscribe`` and ``emit(channel, data)``; async handlers are scheduled."""

    def __init__(self, on_error: ErrorSink) -> None:
        self._handlers: dict[str, list[Callable[[Any], Any]]] = {}
        self._on_error = on_error
        self._tasks: set[asyncio.Task[Any]] = set()

    def on(self, channel: str, handler: Callable[[Any], Any]) -> Callable[[], None]:
        handlers = self._handlers.setdefault(channel, [])
        handlers.append(handler)

        def unsubscribe() -> None:
            if handler in handlers:
                handlers.remove(handler)

        return unsubscribe

    def emit(self, channel: str, data: Any = None) -> None:
        for handler in tuple(self._handlers.get(channel, ())):
            try:
                result = handler(data)
            except Exception as exc:
                self._on_error(channel, exc)
                continue
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._tasks.add(task)
                task.add_done_callback(functools.partial(self._done, channel))

    def _done(self, channel: str, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._on_error(channel, task.exception())  # type: ignore[arg-type]
