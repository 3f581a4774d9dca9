"""Coalesce bursts of updates into at most ``fps`` refreshes per second."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable

from textual.timer import Timer
from textual.widget import Widget

FRAME_SECONDS = 1 / 30
MAX_FRAME_SECONDS = 0.25


class Throttle:
    """Calls ``callback`` on ``widget``'s message pump, at most once per frame.

    ``request()`` is cheap: the first request of a frame schedules one call; later ones in the same
    frame ride along. ``flush()`` runs the callback now if a call is pending.
    """

    def __init__(
        self, widget: Widget, callback: Callable[[], Awaitable[None] | None], frame: float = FRAME_SECONDS
    ) -> None:
        self._widget = widget
        self._callback = callback
        self.frame = frame
        self._timer: Timer | None = None
        self._last = 0.0
        self._pending = False

    @property
    def pending(self) -> bool:
        return self._pending

    def request(self) -> None:
        self._pending = True
        if self._timer is None:
            delay = max(0.001, self.frame - (time.monotonic() - self._last))
            self._timer = self._widget.set_timer(delay, self._fire, name="throttle")

    async def _fire(self) -> None:
        self._timer = None
        await self.flush()

    async def flush(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if not self._pending:
            return
        self._pending = False
        self._last = time.monotonic()
        result = self._callback()
        if inspect.isawaitable(result):
            await result

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._pending = False
