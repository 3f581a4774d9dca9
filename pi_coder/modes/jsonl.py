"""One JSON object per LF-terminated line on stdout, flushed per line (JSON and RPC modes).

Session events whose Pi 1.6 wire name differs from the in-process event's ``type`` are renamed
on the way out (``queue_changed`` -> ``queue_update``, ``session_name_changed`` ->
``session_info_changed``, ``auto_compaction_start``/``end`` -> ``compaction_start``/``end``
with the ``reason`` on both, ``thinking_level_changed`` with ``level``), so JSON and RPC
clients written for Pi read the same records.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, assert_never

from pi_coder.agent.events import (
    AgentEnd,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from pi_coder.core.events import (
    AutoCompactionEnd,
    AutoCompactionStart,
    AutoRetryEnd,
    AutoRetryStart,
    BashExecutionEnd,
    BashExecutionStart,
    BashExecutionUpdate,
    EntryAppendedEvent,
    Event,
    ExtensionErrorEvent,
    ModelChanged,
    Notice,
    QueueChanged,
    SessionNameChanged,
    SessionSwitched,
    SubagentEvent,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
    ThinkingLevelChanged,
)
from pi_coder.json_types import JsonObject

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentMessage

__all__ = ["JsonLineWriter", "settled_event", "to_jsonable"]


def _default(value: object) -> object:
    to_json = getattr(value, "to_json_dict", None)
    if to_json is not None:
        return to_json()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def to_jsonable(value: object) -> object:
    """``value.to_json_dict()`` when it has one, else ``value`` (orjson handles the rest)."""
    to_json = getattr(value, "to_json_dict", None)
    return to_json() if to_json is not None else value


def settled_event(messages: Sequence[AgentMessage]) -> JsonObject:
    """Pi's ``agent_settled`` record for a finished prompt, given the session's messages."""
    aborted = False
    for message in reversed(messages):
        role = message.role
        if role == "assistant":
            aborted = getattr(message, "stop_reason", None) == "aborted"
            break
        if role in ("user", "toolResult"):
            break
    return {"type": "agent_settled", "aborted": aborted}


class JsonLineWriter:
    """Writes JSON lines to a binary stream; stops quietly once the reader has gone (EPIPE)."""

    def __init__(self, stream: BinaryIO | None = None, *, on_closed: Callable[[], object] | None = None) -> None:
        """``on_closed`` is called once, when a write finds that the reader has gone."""
        self._out: BinaryIO = stream if stream is not None else sys.stdout.buffer
        self._on_closed = on_closed
        self.closed = False
        """True after the reader went away; later writes are dropped."""
        self._compaction_reason: str | None = None

    def _to_wire(self, event: Event) -> JsonObject:
        """``event``'s JSON dict under its Pi 1.6 wire name (see the module docstring)."""
        data = event.to_json_dict()
        match event:
            case ThinkingLevelChanged():
                return {"type": event.type, "level": event.thinking_level}
            case QueueChanged():
                return {**data, "type": "queue_update"}
            case SessionNameChanged():
                return {**data, "type": "session_info_changed"}
            case AutoCompactionStart():
                self._compaction_reason = event.reason
                return {**data, "type": "compaction_start"}
            case AutoCompactionEnd():
                data = {**data, "type": "compaction_end"}
                if self._compaction_reason is not None:  # Pi repeats the start's reason on the end
                    data = {"type": "compaction_end", "reason": self._compaction_reason, **data}
                return data
            case (
                AgentStart()
                | AgentEnd()
                | TurnStart()
                | TurnEnd()
                | MessageStart()
                | MessageUpdate()
                | MessageEnd()
                | ToolExecutionStart()
                | ToolExecutionUpdate()
                | ToolExecutionEnd()
                | SessionSwitched()
                | ModelChanged()
                | BashExecutionStart()
                | BashExecutionUpdate()
                | BashExecutionEnd()
                | AutoRetryStart()
                | AutoRetryEnd()
                | SummarizationRetryScheduled()
                | SummarizationRetryAttemptStart()
                | SummarizationRetryFinished()
                | Notice()
                | ExtensionErrorEvent()
                | EntryAppendedEvent()
                | SubagentEvent()
            ):
                return data
            case _:
                assert_never(event)

    def write_event(self, event: Event) -> None:
        """Write one agent or session event as one line, in Pi 1.6's wire form (a session listener)."""
        if not self.closed:
            self._write_value(self._to_wire(event))

    def write(self, obj: object) -> None:
        """Serialise ``obj`` (objects with ``to_json_dict`` are converted) and write one line.

        An agent or session event is written as by :meth:`write_event`.
        """
        if isinstance(obj, Event):
            self.write_event(obj)
        elif not self.closed:
            self._write_value(to_jsonable(obj))

    def _write_value(self, value: object) -> None:
        import orjson

        try:
            data = orjson.dumps(value, default=_default) + b"\n"
        except orjson.JSONEncodeError:
            # orjson refuses lone surrogates; a failing listener would break the run, so escape them.
            import json

            data = json.dumps(value, default=_default, separators=(",", ":")).encode() + b"\n"
        try:
            self._out.write(data)
            self._out.flush()
        except (BrokenPipeError, ValueError):
            self.closed = True
            if self._on_closed is not None:
                self._on_closed()
