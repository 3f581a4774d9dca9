"""Extension event payloads and handler results (docs/extensions-runtime.md#event-catalogue).

Every event is a slotted kw-only dataclass whose ``type`` is Pi's name, with ``to_json_dict()``
(camelCase). The agent's own events (``agent_start``, ``turn_*``, ``message_*``,
``tool_execution_*``, ``agent_end``) are dispatched to extensions as the agent's event objects
(``pi_coder.agent.events``). A handler returns None, the result dataclass, or a dict with its
snake_case keys (:func:`coerce_result`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pi_coder.core.events import EntryAppendedEvent
from pi_coder.extensions.errors import ExtensionErrorEvent, coerce_result
from pi_coder.extensions.errors import JsonPayload as _Json

__all__ = [
    "AfterProviderResponseEvent",
    "AgentBeforeSettleEvent",
    "AgentBeforeSettleResult",
    "AgentSettledEvent",
    "BeforeAgentStartEvent",
    "BeforeAgentStartResult",
    "BeforeProviderHeadersEvent",
    "BeforeProviderRequestEvent",
    "BranchSummarySpec",
    "CancelResult",
    "CompactionResult",
    "ContextEvent",
    "ContextResult",
    "ContextWithSystemEvent",
    "CustomMessageSpec",
    "EntryAppendedEvent",
    "ExtensionErrorEvent",
    "InputEvent",
    "InputResult",
    "MessageEndResult",
    "ModelSelectEvent",
    "ProviderStreamEvent",
    "ProjectTrustEvent",
    "ProjectTrustResult",
    "ResourcesDiscoverEvent",
    "ResourcesResult",
    "SessionBeforeCompactEvent",
    "SessionBeforeCompactResult",
    "SessionBeforeForkEvent",
    "SessionBeforeSwitchEvent",
    "SessionBeforeTreeEvent",
    "SessionBeforeTreeResult",
    "SessionCompactEvent",
    "SessionCompactFailedEvent",
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


@dataclass(kw_only=True)
class CustomMessageSpec:
    """A message an extension sends: persisted as a ``custom_message`` entry, seen by the model."""

    custom_type: str
    content: str | list[Any]
    display: bool = True
    details: Any = None


# ---------------------------------------------------------------------------- session


@dataclass(kw_only=True)
class ProjectTrustEvent(_Json):
    """Asked before the project folder's resources load (docs/permissions.md#deciding-trust); pre-trust extensions only."""

    cwd: str
    type: Literal["project_trust"] = "project_trust"


@dataclass(kw_only=True)
class ProjectTrustResult:
    """``trusted="yes"|"no"`` decides (the first such answer wins); ``remember`` saves it."""

    trusted: Literal["yes", "no", "undecided"] = "undecided"
    remember: bool = False


@dataclass(kw_only=True)
class SessionStartEvent(_Json):
    reason: Literal["startup", "reload", "new", "resume", "fork"]
    previous_session_file: str | None = None
    type: Literal["session_start"] = "session_start"


@dataclass(kw_only=True)
class SessionShutdownEvent(_Json):
    reason: Literal["quit", "reload", "new", "resume", "fork"]
    target_session_file: str | None = None
    type: Literal["session_shutdown"] = "session_shutdown"


@dataclass(kw_only=True)
class SessionBeforeSwitchEvent(_Json):
    reason: Literal["new", "resume"]
    target_session_file: str | None = None
    type: Literal["session_before_switch"] = "session_before_switch"


@dataclass(kw_only=True)
class SessionBeforeForkEvent(_Json):
    entry_id: str
    position: Literal["before", "at"] = "before"
    type: Literal["session_before_fork"] = "session_before_fork"


@dataclass(kw_only=True)
class CancelResult:
    cancel: bool = False


@dataclass(kw_only=True)
class CompactionResult:
    summary: str
    first_kept_entry_id: str | None = None
    tokens_before: int | None = None
    details: Any = None
    usage: Any = None


@dataclass(kw_only=True)
class SessionBeforeCompactEvent(_Json):
    preparation: Any = None
    branch_entries: list[Any] = field(default_factory=list)
    custom_instructions: str | None = None
    reason: Literal["manual", "threshold", "overflow"] = "manual"
    will_retry: bool = False
    signal: Any = None
    type: Literal["session_before_compact"] = "session_before_compact"


@dataclass(kw_only=True)
class SessionBeforeCompactResult:
    cancel: bool = False
    compaction: CompactionResult | dict[str, Any] | None = None


@dataclass(kw_only=True)
class SessionCompactEvent(_Json):
    compaction_entry: Any = None
    from_extension: bool = False
    reason: str = "manual"
    will_retry: bool = False
    type: Literal["session_compact"] = "session_compact"


@dataclass(kw_only=True)
class SessionCompactFailedEvent(_Json):
    reason: str = "manual"
    error_message: str | None = None
    aborted: bool = False
    will_retry: bool = False
    from_extension: bool = False
    type: Literal["session_compact_failed"] = "session_compact_failed"


@dataclass(kw_only=True)
class ResourcesDiscoverEvent(_Json):
    cwd: str
    reason: Literal["startup", "reload"] = "startup"
    type: Literal["resources_discover"] = "resources_discover"


@dataclass(kw_only=True)
class ResourcesResult:
    """Extra skill, prompt-template and theme paths (folded over every handler)."""

    skill_paths: list[str] = field(default_factory=list)
    prompt_paths: list[str] = field(default_factory=list)
    theme_paths: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class SessionBeforeTreeEvent(_Json):
    target_id: str
    old_leaf_id: str | None = None
    user_wants_summary: bool = False
    custom_instructions: str | None = None
    signal: Any = None
    type: Literal["session_before_tree"] = "session_before_tree"


@dataclass(kw_only=True)
class BranchSummarySpec:
    """A branch summary an extension supplies (stored with ``fromHook: true``; no model call)."""

    summary: str
    details: Any = None


@dataclass(kw_only=True)
class SessionBeforeTreeResult:
    cancel: bool = False
    summary: BranchSummarySpec | dict[str, Any] | str | None = None
    custom_instructions: str | None = None


@dataclass(kw_only=True)
class SessionTreeEvent(_Json):
    new_leaf_id: str | None = None
    old_leaf_id: str | None = None
    summary_entry: Any = None
    from_extension: bool = False
    type: Literal["session_tree"] = "session_tree"


# ---------------------------------------------------------------------------- input and bash


@dataclass(kw_only=True)
class InputEvent(_Json):
    text: str
    images: list[Any] = field(default_factory=list)
    source: Literal["interactive", "rpc", "extension"] = "interactive"
    streaming_behavior: Literal["steer", "follow_up"] | None = None
    type: Literal["input"] = "input"


@dataclass(kw_only=True)
class InputResult:
    action: Literal["continue", "transform", "handled"] = "continue"
    text: str | None = None
    images: list[Any] | None = None


@dataclass(kw_only=True)
class ShellOutcome:
    output: str = ""
    exit_code: int | None = 0
    cancelled: bool = False
    truncated: bool = False


@dataclass(kw_only=True)
class UserBashEvent(_Json):
    command: str
    exclude_from_context: bool = False
    cwd: str = ""
    type: Literal["user_bash"] = "user_bash"


@dataclass(kw_only=True)
class UserBashResult:
    result: ShellOutcome | dict[str, Any] | None = None
    operations: Any = None


# ---------------------------------------------------------------------------- runs and requests


@dataclass(kw_only=True)
class BeforeAgentStartEvent(_Json):
    message_type: Literal["user", "custom"]
    prompt: str
    images: list[Any] = field(default_factory=list)
    message: Any = None
    system_prompt: str = ""
    tool_names: list[str] = field(default_factory=list)
    type: Literal["before_agent_start"] = "before_agent_start"


@dataclass(kw_only=True)
class BeforeAgentStartResult:
    message: CustomMessageSpec | dict[str, Any] | None = None
    system_prompt: str | None = None


@dataclass(kw_only=True)
class AgentBeforeSettleEvent(_Json):
    """The last point where a handler can keep the run going (docs/extensions.md, ``agent_before_settle``).

    ``entries`` are the drafts proposed so far (``CustomMessageSpec``, or dicts with ``type``
    ``"custom_message"`` or ``"custom"``); ``continue_`` (JSON ``continue``) asks for one more
    model request. Not fired for an aborted run; after an error the continuation is ignored.
    """

    entries: list[Any] = field(default_factory=list)
    continue_: bool = False
    outcome: Literal["completed", "error"] = "completed"
    type: Literal["agent_before_settle"] = "agent_before_settle"


@dataclass(kw_only=True)
class AgentBeforeSettleResult:
    """Replace the proposed ``entries`` and/or the ``continue_`` decision (a dict may say ``continue``)."""

    entries: list[Any] | None = None
    continue_: bool | None = None


@dataclass(kw_only=True)
class AgentSettledEvent(_Json):
    aborted: bool = False
    type: Literal["agent_settled"] = "agent_settled"


@dataclass(kw_only=True)
class MessageEndResult:
    message: Any


@dataclass(kw_only=True)
class ContextEvent(_Json):
    messages: list[Any]
    type: Literal["context"] = "context"


@dataclass(kw_only=True)
class ContextResult:
    messages: list[Any]


@dataclass(kw_only=True)
class ContextWithSystemEvent(_Json):
    """The full transcript of one request, system messages included; return ``ContextResult`` to replace it."""

    messages: list[Any]
    type: Literal["context_with_system"] = "context_with_system"


@dataclass(kw_only=True)
class ProviderStreamEvent(_Json):
    """One parsed server-sent event of a provider's response, before pi_coder normalizes it (observe only)."""

    provider: str
    api: str
    model: str
    data: Any
    """The event's JSON data parsed (a dict or list), or its text when it is not JSON (``[DONE]``)."""
    sse_event: str = "message"
    """The SSE ``event:`` field (``message`` when the server sends none)."""
    type: Literal["provider_stream_event"] = "provider_stream_event"


@dataclass(kw_only=True)
class BeforeProviderRequestEvent(_Json):
    payload: dict[str, Any]
    model: Any = None
    type: Literal["before_provider_request"] = "before_provider_request"


@dataclass(kw_only=True)
class BeforeProviderHeadersEvent(_Json):
    """Set a key to add or override a header, to ``None`` to delete it (later handlers see edits)."""

    headers: dict[str, Any]
    type: Literal["before_provider_headers"] = "before_provider_headers"


@dataclass(kw_only=True)
class AfterProviderResponseEvent(_Json):
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    type: Literal["after_provider_response"] = "after_provider_response"


@dataclass(kw_only=True)
class ModelSelectEvent(_Json):
    model: Any
    previous_model: Any = None
    source: Literal["set", "cycle"] = "set"
    type: Literal["model_select"] = "model_select"


@dataclass(kw_only=True)
class ThinkingLevelSelectEvent(_Json):
    level: str
    previous_level: str | None = None
    type: Literal["thinking_level_select"] = "thinking_level_select"


# ---------------------------------------------------------------------------- tools


@dataclass(kw_only=True)
class ToolCallEvent(_Json):
    tool_call_id: str
    tool_name: str
    input: dict[str, Any]
    """The validated arguments by alias; edit in place (re-validated before ``execute``)."""
    type: Literal["tool_call"] = "tool_call"


@dataclass(kw_only=True)
class ToolCallResult:
    block: bool = False
    reason: str | None = None
    terminate: bool = False


@dataclass(kw_only=True)
class ToolResultEvent(_Json):
    tool_call_id: str
    tool_name: str
    input: dict[str, Any]
    content: list[Any]
    details: Any = None
    is_error: bool = False
    usage: Any = None
    type: Literal["tool_result"] = "tool_result"


@dataclass(kw_only=True)
class ToolResultPatch:
    content: list[Any] | None = None
    details: Any = None
    is_error: bool | None = None
    usage: Any = None
