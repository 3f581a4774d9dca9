"""The assistant streaming protocol: events and the event stream."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Literal, TypeAlias, TypeVar

from pi_coder.ai._sse import ServerSentEvent
from pi_coder.ai.abort import running_loop as _running_loop
from pi_coder.ai.types import AssistantMessage, PiModel, ToolCall
from pi_coder.json_types import JsonObject

__all__ = [
    "ServerSentEvent",
    "AssistantMessageEvent",
    "AssistantMessageEventStream",
    "DoneEvent",
    "ErrorEvent",
    "EventStream",
    "StartEvent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingStartEvent",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "event_to_json",
]


if TYPE_CHECKING:
    import asyncio



@dataclass(slots=True, kw_only=True)
class StartEvent:
    partial: AssistantMessage
    type: Literal["start"] = "start"


@dataclass(slots=True, kw_only=True)
class TextStartEvent:
    content_index: int
    partial: AssistantMessage
    type: Literal["text_start"] = "text_start"


@dataclass(slots=True, kw_only=True)
class TextDeltaEvent:
    content_index: int
    delta: str
    partial: AssistantMessage
    type: Literal["text_delta"] = "text_delta"


@dataclass(slots=True, kw_only=True)
class TextEndEvent:
    content_index: int
    content: str
    partial: AssistantMessage
    type: Literal["text_end"] = "text_end"


@dataclass(slots=True, kw_only=True)
class ThinkingStartEvent:
    content_index: int
    partial: AssistantMessage
    type: Literal["thinking_start"] = "thinking_start"


@dataclass(slots=True, kw_only=True)
class ThinkingDeltaEvent:
    content_index: int
    delta: str
    partial: AssistantMessage
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(slots=True, kw_only=True)
class ThinkingEndEvent:
    content_index: int
    content: str
    partial: AssistantMessage
    type: Literal["thinking_end"] = "thinking_end"


@dataclass(slots=True, kw_only=True)
class ToolCallStartEvent:
    content_index: int
    partial: AssistantMessage
    type: Literal["toolcall_start"] = "toolcall_start"


@dataclass(slots=True, kw_only=True)
class ToolCallDeltaEvent:
    content_index: int
    delta: str
    partial: AssistantMessage
    type: Literal["toolcall_delta"] = "toolcall_delta"


@dataclass(slots=True, kw_only=True)
class ToolCallEndEvent:
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage
    type: Literal["toolcall_end"] = "toolcall_end"


@dataclass(slots=True, kw_only=True)
class DoneEvent:
    reason: Literal["stop", "length", "toolUse", "deferred"]
    message: AssistantMessage
    type: Literal["done"] = "done"


@dataclass(slots=True, kw_only=True)
class ErrorEvent:
    reason: Literal["error", "aborted"]
    error: AssistantMessage
    type: Literal["error"] = "error"


AssistantMessageEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)

_CAMEL = {"content_index": "contentIndex", "tool_call": "toolCall"}


def event_to_json(event: AssistantMessageEvent, *, include_partial: bool = True) -> JsonObject:
    """Pi's JSON form of a streaming event (camelCase keys, messages by alias)."""
    out: JsonObject = {}
    for name in event.__slots__:
        if name == "partial" and not include_partial:
            continue
        value = getattr(event, name)  # the event's own fields, by their slot names
        out[_CAMEL.get(name, name)] = value.to_json_dict() if isinstance(value, PiModel) else value
    return out


T = TypeVar("T")
R = TypeVar("R")

class EventStream(Generic[T, R]):
    """A push-based async event stream with a final result.

    ``push`` is ignored once the stream is done; a terminal event marks it done and resolves
    the result. Iteration yields events in push order and stops when the stream is done and
    drained. ``result()`` does not raise for failures encoded as events; it waits until a result
    is known. ``fail(exc)`` is for programming errors only: it raises ``exc`` to the consumer from
    iteration and from ``result()`` instead of leaving it hanging.
    """

    __slots__ = (
        "_is_complete",
        "_extract",
        "_queue",
        "_waiter",
        "_done",
        "_has_result",
        "_result_value",
        "_result_waiters",
        "_exception",
    )

    def __init__(self, is_complete: Callable[[T], bool], extract_result: Callable[[T], R]) -> None:
        self._is_complete = is_complete
        self._extract = extract_result
        self._queue: deque[T] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._done = False
        self._has_result = False
        self._result_value: R | None = None
        self._result_waiters: list[asyncio.Future[None]] = []
        self._exception: BaseException | None = None

    @property
    def done(self) -> bool:
        return self._done

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _settle(self) -> None:
        for fut in self._result_waiters:
            if not fut.done():
                fut.set_result(None)
        self._result_waiters.clear()

    def _set_result(self, value: R) -> None:
        if not self._has_result:
            self._has_result = True
            self._result_value = value
            self._settle()

    def push(self, event: T) -> None:
        if self._done:
            return
        if self._is_complete(event):
            self._done = True
            self._set_result(self._extract(event))
        self._queue.append(event)
        self._wake()

    def push_update(self, event: T) -> None:
        """``push`` for an event that is never terminal (a provider's deltas): fewer calls per event."""
        if not self._done:
            self._queue.append(event)
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def end(self, result: R | None = None) -> None:
        self._done = True
        if result is not None:
            self._set_result(result)
        self._wake()

    def fail(self, exc: BaseException) -> None:
        if self._has_result:
            self._done = True
            self._wake()
            return
        self._done = True
        self._exception = exc
        self._settle()
        self._wake()

    def __aiter__(self) -> AsyncIterator[T]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[T]:
        queue = self._queue
        while True:
            if queue:
                yield queue.popleft()
                continue
            if self._done:
                if self._exception is not None:
                    raise self._exception
                return
            self._waiter = _running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def result(self) -> R:
        while not self._has_result:
            if self._exception is not None:
                raise self._exception
            fut = _running_loop().create_future()
            self._result_waiters.append(fut)
            await fut
        return self._result_value  # type: ignore[return-value]


def _is_terminal(event: AssistantMessageEvent) -> bool:
    return event.type == "done" or event.type == "error"


def _final_message(event: AssistantMessageEvent) -> AssistantMessage:
    if isinstance(event, DoneEvent):
        return event.message
    assert isinstance(event, ErrorEvent)
    return event.error


class AssistantMessageEventStream(EventStream[AssistantMessageEvent, AssistantMessage]):
    """Stream of assistant events; ``await result()`` gives the final AssistantMessage."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(_is_terminal, _final_message)
