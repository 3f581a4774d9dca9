"""Extension event payloads and handler results (extensions §2.3).

Every event is a slotted kw-only dataclass whose ``type`` is Pi's name, with ``to_json_dict()``
(camelCase). The agent's own events (``agent_start``, ``turn_*``, ``message_*``,
``tool_execution_*``, ``agent_end``) are dispatched to extensions as the agent's event objects
(``pi_coder.agent.events``). A handler returns None, the result dataclass, or a dict with its
snake_case keys (:func:`coerce_result`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar

from pi_coder.core.events import to_camel_json

__all__ = [
    "AgentSettledEvent",
    "BeforeAgentStartEvent",
    "BeforeAgentStartResult",
    "BeforeProviderRequestEvent",
    "CancelResult",
    "CompactionResult",
    "ContextEvent",
    "ContextResult",
    "CustomMessageSpec",
    "EntryAppendedEvent",
    "ExtensionErrorEvent",
    "InputEvent",
    "InputResult",
    "MessageEndResult",
    "ModelSelectEvent",
    "SessionBeforeCompactEvent",
    "SessionBeforeCompactResult",
    "SessionBeforeForkEvent",
    "SessionBeforeSwitchEvent",
    "SessionBeforeTreeEvent",
    "SessionCompactEvent",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "SessionTreeEvent",
    "ShellOutcome",
    "ThinkingLevelSelectEvent",
    "ToolCallEvent",
    "ToolCallResult",
    "ToolResultEvent",
    "ToolResultPatch",
    "UserBashEvent",
    "UserBashResult",
    "coerce_result",
]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class _Json:
    __slots__ = ()

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None or f.name in ("signal", "stack"):
                continue
            out[_camel(f.name)] = to_camel_json(value)
        return out


R = TypeVar("R")


def coerce_result(value: object, cls: type[R]) -> R | None:
    """A handler's return value as ``cls``: None, an instance, or a dict of its snake_case fields.

    Raises:
        TypeError: Anything else (reported as a handler error).
    """
    if value is None:
        return None
    if isinstance(value, cls):
        return value
    if isinstance(value, dict):
        return cls(**value)
    raise TypeError(f"handler returned {type(value).__name__}, expected None, a dict or {cls.__name__}")


# ---------------------------------------------------------------------------- errors and entries


@dataclass(slots=True, kw_only=True)
class ExtensionErrorEvent(_Json):
    """An extension failed (§1.7); JSON ``{"type","extensionPath","event","error"}``."""

    extension_path: str
    event: str
    error: str
    stack: str = ""
    type: Literal["extension_error"] = "extension_error"


@dataclass(slots=True, kw_only=True)
class EntryAppendedEvent(_Json):
    """``append_entry`` wrote a ``custom`` entry (json/rpc emit it)."""

    entry: Any
    type: Literal["entry_appended"] = "entry_appended"


@dataclass(slots=True, kw_only=True)
class CustomMessageSpec:
    """A message an extension sends: persisted as a ``custom_message`` entry, seen by the model."""

    custom_type: str
    content: str | list[Any]
    display: bool = True
    details: Any = None


# ---------------------------------------------------------------------------- session


@dataclass(slots=True, kw_only=True)
class SessionStartEvent(_Json):
    reason: Literal["startup", "reload", "new", "resume", "fork"]
    previous_session_file: str | None = None
    type: Literal["session_start"] = "session_start"


@dataclass(slots=True, kw_only=True)
class SessionShutdownEvent(_Json):
    reason: Literal["quit", "reload", "new", "resume", "fork"]
    target_session_file: str | None = None
    type: Literal["session_shutdown"] = "session_shutdown"


@dataclass(slots=True, kw_only=True)
class SessionBeforeSwitchEvent(_Json):
    reason: Literal["new", "resume"]
    target_session_file: str | None = None
    type: Literal["session_before_switch"] = "session_before_switch"


@dataclass(slots=True, kw_only=True)
class SessionBeforeForkEvent(_Json):
    entry_id: str
    position: Literal["before", "at"] = "before"
    type: Literal["session_before_fork"] = "session_before_fork"


@dataclass(slots=True, kw_only=True)
class CancelResult:
    cancel: bool = False


@dataclass(slots=True, kw_only=True)
class CompactionResult:
    summary: str
    first_kept_entry_id: str | None = None
    tokens_before: int | None = None
    details: Any = None
    usage: Any = None


@dataclass(slots=True, kw_only=True)
class SessionBeforeCompactEvent(_Json):
    preparation: Any = None
    branch_entries: list[Any] = field(default_factory=list)
    custom_instructions: str | None = None
    reason: Literal["manual", "threshold", "overflow"] = "manual"
    will_retry: bool = False
    signal: Any = None
    type: Literal["session_before_compact"] = "session_before_compact"


@dataclass(slots=True, kw_only=True)
class SessionBeforeCompactResult:
    cancel: bool = False
    compaction: CompactionResult | dict[str, Any] | None = None


@dataclass(slots=True, kw_only=True)
class SessionCompactEvent(_Json):
    compaction_entry: Any = None
    from_extension: bool = False
    reason: str = "manual"
    will_retry: bool = False
    type: Literal["session_compact"] = "session_compact"


@dataclass(slots=True, kw_only=True)
class SessionBeforeTreeEvent(_Json):
    target_id: str
    old_leaf_id: str | None = None
    user_wants_summary: bool = False
    custom_instructions: str | None = None
    type: Literal["session_before_tree"] = "session_before_tree"


@dataclass(slots=True, kw_only=True)
class SessionTreeEvent(_Json):
    new_leaf_id: str | None = None
    old_leaf_id: str | None = None
    from_extension: bool = False
    type: Literal["session_tree"] = "session_tree"


# ---------------------------------------------------------------------------- input and bash


@dataclass(slots=True, kw_only=True)
class InputEvent(_Json):
    text: str
    images: list[Any] = field(default_factory=list)
    source: Literal["interactive", "rpc", "extension"] = "interactive"
    streaming_behavior: Literal["steer", "follow_up"] | None = None
    type: Literal["input"] = "input"


@dataclass(slots=True, kw_only=True)
class InputResult:
    action: Literal["continue", "transform", "handled"] = "continue"
    text: str | None = None
    images: list[Any] | None = None


@dataclass(slots=True, kw_only=True)
class ShellOutcome:
    output: str = ""
    exit_code: int | None = 0
    cancelled: bool = False
    truncated: bool = False


@dataclass(slots=True, kw_only=True)
class UserBashEvent(_Json):
    command: str
    exclude_from_context: bool = False
    cwd: str = ""
    type: Literal["user_bash"] = "user_bash"


@dataclass(slots=True, kw_only=True)
class UserBashResult:
    result: ShellOutcome | dict[str, Any] | None = None
    operations: Any = None


# ---------------------------------------------------------------------------- runs and requests


@dataclass(slots=True, kw_only=True)
class BeforeAgentStartEvent(_Json):
    message_type: Literal["user", "custom"]
    prompt: str
    images: list[Any] = field(default_factory=list)
    message: Any = None
    system_prompt: str = ""
    tool_names: list[str] = field(default_factory=list)
    type: Literal["before_agent_start"] = "before_agent_start"


@dataclass(slots=True, kw_only=True)
class BeforeAgentStartResult:
    message: CustomMessageSpec | dict[str, Any] | None = None
    system_prompt: str | None = None


@dataclass(slots=True, kw_only=True)
class AgentSettledEvent(_Json):
    aborted: bool = False
    type: Literal["agent_settled"] = "agent_settled"


@dataclass(slots=True, kw_only=True)
class MessageEndResult:
    message: Any


@dataclass(slots=True, kw_only=True)
class ContextEvent(_Json):
    messages: list[Any]
    type: Literal["context"] = "context"


@dataclass(slots=True, kw_only=True)
class ContextResult:
    messages: list[Any]


@dataclass(slots=True, kw_only=True)
class BeforeProviderRequestEvent(_Json):
    payload: dict[str, Any]
    model: Any = None
    type: Literal["before_provider_request"] = "before_provider_request"


@dataclass(slots=True, kw_only=True)
class ModelSelectEvent(_Json):
    model: Any
    previous_model: Any = None
    source: Literal["set", "cycle"] = "set"
    type: Literal["model_select"] = "model_select"


@dataclass(slots=True, kw_only=True)
class ThinkingLevelSelectEvent(_Json):
    level: str
    previous_level: str | None = None
    type: Literal["thinking_level_select"] = "thinking_level_select"


# ---------------------------------------------------------------------------- tools


@dataclass(slots=True, kw_only=True)
class ToolCallEvent(_Json):
    tool_call_id: str
    tool_name: str
    input: dict[str, Any]
    """The validated arguments by alias; edit in place (re-validated before ``execute``)."""
    type: Literal["tool_call"] = "tool_call"


@dataclass(slots=True, kw_only=True)
class ToolCallResult:
    block: bool = False
    reason: str | None = None
    terminate: bool = False


@dataclass(slots=True, kw_only=True)
class ToolResultEvent(_Json):
    tool_call_id: str
    tool_name: str
    input: dict[str, Any]
    content: list[Any]
    details: Any = None
    is_error: bool = False
    usage: Any = None
    type: Literal["tool_result"] = "tool_result"


@dataclass(slots=True, kw_only=True)
class ToolResultPatch:
    content: list[Any] | None = None
    details: Any = None
    is_error: bool | None = None
    usage: Any = None
