"""Agent events and the event stream returned by ``agent_loop``.

Each event is a slotted dataclass whose ``type`` is Pi's event name; payloads are snake_case
attributes, and ``to_json_dict()`` gives Pi's camelCase JSON form (used by JSON and RPC modes).
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import Literal, TypeAlias

from pi_coder.agent.types import AgentMessage, AgentToolResult
from pi_coder.ai.events import AssistantMessageEvent, EventStream, event_to_json
from pi_coder.ai.types import AssistantMessage, ToolResultMessage
from pi_coder.json_types import JsonDumpable, JsonObject, JsonValue, to_json_value

__all__ = [
    "AgentEnd",
    "AgentEvent",
    "AgentEventStream",
    "AgentStart",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "TurnEnd",
    "TurnStart",
    "message_to_json",
]


def message_to_json(message: AgentMessage) -> JsonValue:
    """JSON form of any agent message: pydantic messages by alias, dataclasses as dicts."""
    if isinstance(message, JsonDumpable):
        return message.to_json_dict()
    if dataclasses.is_dataclass(message) and not isinstance(message, type):
        return to_json_value(dataclasses.asdict(message))
    return to_json_value(message)


@dataclass(slots=True, kw_only=True)
class AgentStart:
    """First event of a run."""

    type: Literal["agent_start"] = "agent_start"

    def to_json_dict(self) -> JsonObject:
        return {"type": self.type}


@dataclass(slots=True, kw_only=True)
class AgentEnd:
    """Last event of a run; nothing follows it."""

    messages: list[AgentMessage]
    """The run's new messages: the same list object the run returns."""
    will_retry: bool = False
    """Set by the host (AgentSession) when it will retry this run's failure automatically."""
    type: Literal["agent_end"] = "agent_end"

    def to_json_dict(self) -> JsonObject:
        return {
            "type": self.type,
            "messages": [message_to_json(m) for m in self.messages],
            "willRetry": self.will_retry,
        }


@dataclass(slots=True, kw_only=True)
class TurnStart:
    """Start of a turn: one assistant response and the tool batch it triggers."""

    type: Literal["turn_start"] = "turn_start"

    def to_json_dict(self) -> JsonObject:
        return {"type": self.type}


@dataclass(slots=True, kw_only=True)
class TurnEnd:
    """End of a turn."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    """Results in source order; empty for turns without tools and for hard exits."""
    type: Literal["turn_end"] = "turn_end"

    def to_json_dict(self) -> JsonObject:
        return {
            "type": self.type,
            "message": message_to_json(self.message),
            "toolResults": [message_to_json(m) for m in self.tool_results],
        }


@dataclass(slots=True, kw_only=True)
class MessageStart:
    """A message enters the transcript (for assistants: a copy of the first partial)."""

    message: AgentMessage
    type: Literal["message_start"] = "message_start"

    def to_json_dict(self) -> JsonObject:
        return {"type": self.type, "message": message_to_json(self.message)}


@dataclass(slots=True, kw_only=True)
class MessageUpdate:
    """One streaming event of an assistant message."""

    message: AssistantMessage
    """A shallow copy of the current partial."""
    assistant_message_event: AssistantMessageEvent
    """The provider event, unchanged."""
    type: Literal["message_update"] = "message_update"

    def to_json_dict(self) -> JsonObject:
        """Pi's wire form: delta-only, so a stream's size stays linear in the answer's length.

        The cumulative ``message`` and the event's ``partial`` are left out; ``usage`` is the
        partial's latest usage, and ``toolcall_start`` also names the call (``id``,
        ``toolName``), which the deltas that follow no longer carry.
        """
        event = self.assistant_message_event
        data = event_to_json(event, include_partial=False)
        if event.type == "toolcall_start":
            content = self.message.content
            index = data.get("contentIndex")
            block = content[index] if isinstance(index, int) and 0 <= index < len(content) else None
            if block is not None and block.type == "toolCall":
                data["id"] = block.id
                data["toolName"] = block.name
        return {"type": self.type, "usage": self.message.usage.to_json_dict(), "assistantMessageEvent": data}


@dataclass(slots=True, kw_only=True)
class MessageEnd:
    """A message is final; for assistants this is the object placed in the transcript."""

    message: AgentMessage
    type: Literal["message_end"] = "message_end"

    def to_json_dict(self) -> JsonObject:
        return {"type": self.type, "message": message_to_json(self.message)}


@dataclass(slots=True, kw_only=True)
class ToolExecutionStart:
    tool_call_id: str
    tool_name: str
    args: JsonObject
    """The raw ``arguments`` of the assistant's tool-call block."""
    type: Literal["tool_execution_start"] = "tool_execution_start"

    def to_json_dict(self) -> JsonObject:
        return {"type": self.type, "toolCallId": self.tool_call_id, "toolName": self.tool_name, "args": self.args}


@dataclass(slots=True, kw_only=True)
class ToolExecutionUpdate:
    tool_call_id: str
    tool_name: str
    args: JsonObject
    partial_result: AgentToolResult
    type: Literal["tool_execution_update"] = "tool_execution_update"

    def to_json_dict(self) -> JsonObject:
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "args": self.args,
            "partialResult": _result_json(self.partial_result),
        }


@dataclass(slots=True, kw_only=True)
class ToolExecutionEnd:
    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    """The final result, ``terminate`` included."""
    is_error: bool
    duration_ms: int | None = None
    """How long the tool's ``execute()`` took (monotonic clock); None when it did not run."""
    type: Literal["tool_execution_end"] = "tool_execution_end"

    def to_json_dict(self) -> JsonObject:
        out: JsonObject = {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "result": _result_json(self.result),
            "isError": self.is_error,
        }
        if self.duration_ms is not None:
            out["durationMs"] = self.duration_ms
        return out


def _result_json(result: AgentToolResult) -> JsonObject:
    return result.to_json_dict()


AgentEvent: TypeAlias = (
    AgentStart
    | AgentEnd
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
)


def _is_agent_end(event: AgentEvent) -> bool:
    return event.type == "agent_end"


def _end_messages(event: AgentEvent) -> list[AgentMessage]:
    assert isinstance(event, AgentEnd)
    return event.messages


class AgentEventStream(EventStream[AgentEvent, list[AgentMessage]]):
    """Events of one low-level run; ``await result()`` gives the run's new messages.

    If the run raises (a hook, ``convert_to_llm`` or the stream function), the exception is
    raised to the consumer from iteration and from ``result()``.
    """

    __slots__ = ("task",)

    def __init__(self) -> None:
        super().__init__(_is_agent_end, _end_messages)
        self.task: asyncio.Future[None] | None = None
        """The producing task (kept so it is not garbage-collected while it runs)."""
