"""Session events: what AgentSession emits besides the agent's own events, and the ``Event`` union of both.

Every event is a slotted dataclass with a ``type`` string (Pi's name where Pi has one) and a
``to_json_dict()`` giving the camelCase JSON form used by ``--mode json`` and RPC.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from pi_coder.agent.events import AgentEvent

if TYPE_CHECKING:
    from pi_coder.session.compaction import CompactionResult
    from pi_coder.session.messages import BashExecutionMessage

__all__ = [
    "AutoCompactionEnd",
    "AutoCompactionStart",
    "AutoRetryEnd",
    "AutoRetryStart",
    "BashExecutionEnd",
    "BashExecutionStart",
    "BashExecutionUpdate",
    "EntryAppendedEvent",
    "Event",
    "ExtensionErrorEvent",
    "ModelChanged",
    "Notice",
    "QueueChanged",
    "SessionEvent",
    "SessionNameChanged",
    "SessionSwitched",
    "SubagentEvent",
    "SummarizationRetryAttemptStart",
    "SummarizationRetryFinished",
    "SummarizationRetryScheduled",
    "ThinkingLevelChanged",
    "to_camel_json",
]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def to_camel_json(value: Any) -> Any:
    """Convert an event payload to JSON-ready data with camelCase keys."""
    if hasattr(value, "to_json_dict"):
        return value.to_json_dict()
    if isinstance(value, list | tuple):
        return [to_camel_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_camel_json(v) for k, v in value.items()}
    return value


class _JsonEvent:
    __slots__ = ()

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None:
                continue
            out[_camel(f.name)] = to_camel_json(value)
        return out


@dataclass(slots=True, kw_only=True)
class QueueChanged(_JsonEvent):
    """The steering or follow-up queue changed (queued, delivered, cleared)."""

    steering: list[str] = field(default_factory=list)
    follow_up: list[str] = field(default_factory=list)
    type: Literal["queue_changed"] = "queue_changed"


@dataclass(slots=True, kw_only=True)
class SessionSwitched(_JsonEvent):
    """The session was replaced (new, resume/switch, fork) or its leaf moved (tree)."""

    reason: Literal["new", "switch", "fork", "tree", "compaction"]
    session_file: str | None = None
    type: Literal["session_switched"] = "session_switched"


@dataclass(slots=True, kw_only=True)
class ModelChanged(_JsonEvent):
    provider: str
    model_id: str
    source: Literal["set", "cycle"] = "set"
    """``cycle``: Ctrl+P / ``cycle_model``; ``set``: everything else (extensions' ``model_select``)."""
    type: Literal["model_changed"] = "model_changed"


@dataclass(slots=True, kw_only=True)
class ThinkingLevelChanged(_JsonEvent):
    thinking_level: str
    type: Literal["thinking_level_changed"] = "thinking_level_changed"


@dataclass(slots=True, kw_only=True)
class SessionNameChanged(_JsonEvent):
    name: str
    type: Literal["session_name_changed"] = "session_name_changed"


@dataclass(slots=True, kw_only=True)
class BashExecutionStart(_JsonEvent):
    """A user ``!``/``!!`` shell command started."""

    command: str
    exclude_from_context: bool = False
    type: Literal["bash_execution_start"] = "bash_execution_start"


@dataclass(slots=True, kw_only=True)
class BashExecutionUpdate(_JsonEvent):
    """New output of a user shell command. On the wire (json/rpc) only Pi's ``id`` and ``delta``."""

    command: str
    output: str
    """The (tail of the) output so far (for in-process views)."""
    delta: str = ""
    """The output that arrived since the previous update (all of it)."""
    id: Any = None
    """The RPC ``bash`` command's request id, when it came from one."""
    type: Literal["bash_execution_update"] = "bash_execution_update"

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.id is not None:
            out["id"] = self.id
        out["delta"] = self.delta
        return out


@dataclass(slots=True, kw_only=True)
class BashExecutionEnd(_JsonEvent):
    message: BashExecutionMessage
    """The BashExecutionMessage recorded for the command."""
    type: Literal["bash_execution_end"] = "bash_execution_end"


@dataclass(slots=True, kw_only=True)
class AutoCompactionStart(_JsonEvent):
    reason: Literal["threshold", "overflow", "manual"]
    type: Literal["auto_compaction_start"] = "auto_compaction_start"


@dataclass(slots=True, kw_only=True)
class AutoCompactionEnd(_JsonEvent):
    result: CompactionResult | None = None
    """The compaction result (summary, first kept entry id, tokens before) or None."""
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: Literal["auto_compaction_end"] = "auto_compaction_end"


@dataclass(slots=True, kw_only=True)
class AutoRetryStart(_JsonEvent):
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: Literal["auto_retry_start"] = "auto_retry_start"


@dataclass(slots=True, kw_only=True)
class AutoRetryEnd(_JsonEvent):
    success: bool
    attempt: int
    final_error: str | None = None
    type: Literal["auto_retry_end"] = "auto_retry_end"


@dataclass(slots=True, kw_only=True)
class SummarizationRetryScheduled(_JsonEvent):
    """A compaction or branch-summary request failed transiently; a retry follows after ``delay_ms``."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: Literal["summarization_retry_scheduled"] = "summarization_retry_scheduled"


@dataclass(slots=True, kw_only=True)
class SummarizationRetryAttemptStart(_JsonEvent):
    """The retried summary request starts; ``source`` compaction (with ``reason``) or branchSummary."""

    source: Literal["compaction", "branchSummary"]
    reason: str | None = None
    type: Literal["summarization_retry_attempt_start"] = "summarization_retry_attempt_start"


@dataclass(slots=True, kw_only=True)
class SummarizationRetryFinished(_JsonEvent):
    """The summary retry cycle ended (the compaction/branch-summary events tell how)."""

    type: Literal["summarization_retry_finished"] = "summarization_retry_finished"


@dataclass(slots=True, kw_only=True)
class Notice(_JsonEvent):
    """A one-line status, warning or error for the UI (e.g. "Could not restore model ...")."""

    level: Literal["info", "warning", "error"]
    text: str
    type: Literal["notice"] = "notice"


@dataclass(slots=True, kw_only=True)
class ExtensionErrorEvent(_JsonEvent):
    """An extension failed (docs/extensions-runtime.md#errors-and-isolation); JSON ``{"type","extensionPath","event","error"}``.

    Defined here rather than in ``pi_coder.extensions`` (which re-exports it) so that ``Event`` can
    name it without an import cycle; the stack is kept for the log but left out of the JSON.
    """

    extension_path: str
    event: str
    error: str
    stack: str = ""
    type: Literal["extension_error"] = "extension_error"

    def to_json_dict(self) -> dict[str, Any]:
        out = _JsonEvent.to_json_dict(self)
        out.pop("stack", None)
        return out


@dataclass(kw_only=True)
class EntryAppendedEvent(_JsonEvent):
    """An extension's ``append_entry`` wrote a ``custom`` entry (json and rpc emit it).

    Defined here, like :class:`ExtensionErrorEvent`, so that ``Event`` names it without a cycle.
    """

    entry: Any
    type: Literal["entry_appended"] = "entry_appended"


@dataclass(slots=True, kw_only=True)
class SubagentEvent(_JsonEvent):
    """A child agent of the ``task`` tool started, made progress or ended (``docs/subagents.md``).

    ``type`` is ``subagent_start``, ``subagent_update`` or ``subagent_end``; JSON
    ``{"type", "toolCallId", "agent", "sessionId", "sessionFile", "tool", "turns", "usage", ...}``.
    """

    type: Literal["subagent_start", "subagent_update", "subagent_end"]
    tool_call_id: str
    agent: str
    description: str = ""
    session_id: str = ""
    session_file: str | None = None
    tool: str | None = None
    """The tool the child runs now (updates)."""
    turns: int = 0
    usage: dict[str, Any] | None = None
    """``{"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}`` so far."""
    elapsed_ms: int = 0
    stopped: str | None = None
    """The end's reason when it did not finish normally (a limit, an abort, an error)."""


SessionEvent: TypeAlias = (
    QueueChanged
    | SessionSwitched
    | ModelChanged
    | ThinkingLevelChanged
    | SessionNameChanged
    | BashExecutionStart
    | BashExecutionUpdate
    | BashExecutionEnd
    | AutoCompactionStart
    | AutoCompactionEnd
    | AutoRetryStart
    | AutoRetryEnd
    | SummarizationRetryScheduled
    | SummarizationRetryAttemptStart
    | SummarizationRetryFinished
    | Notice
    | ExtensionErrorEvent
    | EntryAppendedEvent
    | SubagentEvent
)
"""Every event AgentSession emits besides the agent's (the last two on behalf of extensions)."""

Event: TypeAlias = AgentEvent | SessionEvent
"""Every event an AgentSession listener receives: the agent's, re-emitted, and the session's."""
