"""The session bridge: AgentSession events into the app's message pump, batched, until closed.

The bridge is the app's only subscriber to the session. Each event is queued (consecutive text or
thinking deltas merged into one :class:`StreamDelta`) and at most one :class:`SessionEventsPosted`
wake-up is in flight, spaced by a 60th of a second, so a fast stream costs a few Textual messages
instead of one per delta. :meth:`SessionBridge.close` unsubscribes and drops what is queued; the
app calls it before it closes the session and before its screen is torn down, so no event ever
reaches widgets that are gone.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Literal, Protocol

from textual.message import Message

from pi_coder.agent.events import MessageUpdate
from pi_coder.ai.events import TextDeltaEvent, ThinkingDeltaEvent
from pi_coder.core.events import AutoCompactionEnd, Event

__all__ = ["EventSource", "SessionBridge", "SessionEventsPosted", "StreamDelta"]

DRAIN_INTERVAL = 1 / 60


class StreamDelta:
    """Consecutive text or thinking deltas of one content block, without their partial messages."""

    __slots__ = ("content_index", "kind", "parts")
    type = "stream_delta"

    def __init__(self, kind: Literal["text_delta", "thinking_delta"], content_index: int, parts: list[str]) -> None:
        self.kind = kind
        self.content_index = content_index
        self.parts = parts


class SessionEventsPosted(Message):
    """Session events wait in the bridge's queue: take them with :meth:`SessionBridge.drain`."""


class EventSource(Protocol):
    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]: ...


class _Target(Protocol):
    def post_message(self, message: Message) -> bool: ...


class SessionBridge:
    """Subscribes to ``source`` at once and posts :class:`SessionEventsPosted` to ``target``."""

    def __init__(self, source: EventSource, target: _Target) -> None:
        self._target = target
        self._events: deque[Event | StreamDelta] = deque()
        self._posted = False
        self._last_drain = 0.0
        self._closed = False
        self.compaction_error_reported = False
        """An ``auto_compaction_end`` with an error arrived (so /compact does not report it twice)."""
        self._unsubscribe: Callable[[], None] | None = source.subscribe(self._on_event)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def pending(self) -> bool:
        """True while events wait to be rendered."""
        return bool(self._events)

    def close(self) -> None:
        """Unsubscribe and forget queued events (idempotent)."""
        self._closed = True
        self._events.clear()
        if self._unsubscribe is not None:
            unsubscribe, self._unsubscribe = self._unsubscribe, None
            unsubscribe()

    def _on_event(self, event: Event) -> None:
        if self._closed:
            return
        if isinstance(event, AutoCompactionEnd) and event.error_message:
            self.compaction_error_reported = True
        queued: Event | StreamDelta = event
        if isinstance(event, MessageUpdate):
            # Keep only the delta text: the event's partial message may be a fresh copy of the
            # whole answer, and holding hundreds of those until the next drain is costly.
            ame = event.assistant_message_event
            if isinstance(ame, TextDeltaEvent | ThinkingDeltaEvent):
                events = self._events
                last = events[-1] if events else None
                index = ame.content_index
                if isinstance(last, StreamDelta) and last.kind == ame.type and last.content_index == index:
                    last.parts.append(ame.delta)
                    return
                queued = StreamDelta(ame.type, index, [ame.delta])
        self._events.append(queued)
        if self._posted:
            return
        self._posted = True
        delay = self._last_drain + DRAIN_INTERVAL - time.monotonic()
        if delay <= 0:
            self._post()
        else:
            asyncio.get_running_loop().call_later(delay, self._post)

    def _post(self) -> None:
        if not self._closed:
            self._target.post_message(SessionEventsPosted())

    def drain(self) -> list[Event | StreamDelta]:
        """The queued events, in order (empty once closed); the next event posts a new wake-up."""
        self._posted = False
        self._last_drain = time.monotonic()
        events = list(self._events)
        self._events.clear()
        return events
