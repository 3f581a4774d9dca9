"""Agent-core types: tools, tool results, contexts, hooks and loop configuration.

Hook results (``BeforeToolCallResult``, ``AfterToolCallResult``, ``AgentLoopTurnUpdate``,
``FinishTurnResult``) may also be given as plain dicts with the same snake_case keys; a
``finish_turn`` hook may return just ``"end"`` or ``"continue"``.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Generic, Literal, Protocol, TypeAlias

from pydantic import BaseModel
from typing_extensions import TypeVar

from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    SystemMessage,
    TextContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_coder.errors import PiError
from pi_coder.json_types import JsonObject, to_json_value

if TYPE_CHECKING:
    from pi_coder.ai.types import Model

__all__ = [
    "AfterToolCallContext",
    "AfterToolCallResult",
    "hook_result",
    "AgentContext",
    "AgentError",
    "AgentLoopConfig",
    "AgentLoopTurnUpdate",
    "AgentMessage",
    "AgentTool",
    "AgentToolResult",
    "AgentTurnContext",
    "AppMessage",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "FinishTurnResult",
    "PrepareNextTurnContext",
    "QueueMode",
    "ToolExecutionMode",
    "ToolUpdateCallback",
    "parameters_schema",
]

ToolExecutionMode: TypeAlias = Literal["sequential", "parallel"]
QueueMode: TypeAlias = Literal["one-at-a-time", "all"]

class AppMessage(Protocol):
    """An application message the agent carries but the model never sees as such.

    The coding layer's ``custom``, ``bashExecution``, ``branchSummary`` and
    ``compactionSummary`` messages (``pi_coder.session.messages``) are of this kind; its
    ``convert_to_llm`` turns them into model-visible messages before each request.
    """

    @property
    def role(self) -> str: ...

    def to_json_dict(self) -> JsonObject: ...


AgentMessage: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | AppMessage
"""A model-visible message (system, user, assistant, toolResult) or an application message
(``AppMessage``: any object with a ``role``, for example ``custom`` or ``bashExecution``)."""


class AgentError(PiError):
    """A misuse of the agent core: a run already active, nothing to continue from, no stream function."""


@dataclass(slots=True, kw_only=True)
class AgentToolResult:
    """What a tool's ``execute`` returns (and what ``on_update`` receives while it runs)."""

    content: list[TextContent | ImageContent] = field(default_factory=list)
    details: object = None
    """Opaque to the loop: what the tool wants its renderer (or the extension) to see."""
    usage: Usage | None = None
    terminate: bool | None = None
    """Ask the loop to skip the automatic follow-up request (batch-wide "every" rule)."""

    def to_json_dict(self) -> JsonObject:
        """Pi's JSON form: ``content``, ``details``, and ``usage``/``terminate`` when set."""
        out: JsonObject = {
            "content": [block.to_json_dict() for block in self.content],
            "details": to_json_value(self.details),
        }
        if self.usage is not None:
            out["usage"] = self.usage.to_json_dict()
        if self.terminate is not None:
            out["terminate"] = self.terminate
        return out


@functools.cache
def parameters_schema(parameters: type[BaseModel]) -> JsonObject:
    """The JSON schema of a parameters model, computed once per class (shared: do not mutate)."""
    return parameters.model_json_schema()


ToolUpdateCallback: TypeAlias = Callable[[AgentToolResult], object]

T = TypeVar("T")
MaybeAwaitable: TypeAlias = T | Awaitable[T]
"""What a hook returns: the value, or an awaitable of it (hooks may be sync or async)."""

ToolArgs: TypeAlias = BaseModel
"""Validated tool arguments: an instance of the tool's parameters model."""

P = TypeVar("P", bound=BaseModel, default=BaseModel, covariant=True)
"""A tool's parameters model. Covariant so that tools of different parameter models share one
``list[AgentTool]`` (``AgentTool`` alone means ``AgentTool[BaseModel]``)."""


@dataclass(slots=True, kw_only=True)
class AgentTool(Generic[P]):
    """An executable tool: a model-visible declaration plus ``execute``.

    ``parameters`` is a pydantic model class; its JSON schema is what the model sees and it
    validates (with coercion) the model's arguments before ``execute`` runs, so ``execute``
    receives an instance of ``parameters``. ``execute`` raises on failure; the loop turns the
    exception message into an error result.
    """

    name: str
    label: str
    description: str
    parameters: type[P]
    execute: Callable[[str, P, AbortSignal | None, ToolUpdateCallback | None], Awaitable[AgentToolResult]]
    execution_mode: ToolExecutionMode | None = None
    prepare_arguments: Callable[[object], MaybeAwaitable[object]] | None = None
    """Rewrites the model's raw arguments before validation (legacy shapes)."""
    constrained_sampling: bool | None = None
    read_only: bool = False
    """The tool never changes anything: plan mode allows it and checkpoints take no snapshot for it."""

    def json_schema(self) -> JsonObject:
        """The parameters' JSON schema (a fresh copy)."""
        return copy.deepcopy(parameters_schema(self.parameters))

    def declaration(self) -> Tool:
        """The model-visible declaration (``toToolDeclaration``): no label, execute or hooks."""
        return Tool(
            name=self.name,
            description=self.description,
            parameters=self.json_schema(),
            constrained_sampling=self.constrained_sampling,
        )


@dataclass(slots=True, kw_only=True)
class AgentContext:
    """What one loop run works on: the transcript and the executable tools.

    There is no system-prompt field: the prompt and the tool declarations live in ``system``
    messages of ``messages``.
    """

    messages: list[AgentMessage] = field(default_factory=list)
    tools: list[AgentTool] | None = None


# ---------------------------------------------------------------------------- hook payloads


@dataclass(slots=True, kw_only=True)
class BeforeToolCallContext:
    """Argument of ``before_tool_call(ctx, signal)``."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    """The original block from ``assistant_message.content``."""
    args: ToolArgs
    """The validated (possibly coerced) arguments; mutations reach ``execute`` unvalidated."""
    context: AgentContext


@dataclass(slots=True, kw_only=True)
class BeforeToolCallResult:
    block: bool | None = None
    reason: str | None = None
    """Error text of a blocked call (default "Tool execution was blocked")."""
    terminate: bool | None = None


@dataclass(slots=True, kw_only=True)
class AfterToolCallContext:
    """Argument of ``after_tool_call(ctx, signal)``; called only for executed calls."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: ToolArgs
    result: AgentToolResult
    is_error: bool
    context: AgentContext


@dataclass(slots=True, kw_only=True)
class AfterToolCallResult:
    """Each field that is not None replaces the whole original field."""

    content: list[TextContent | ImageContent] | None = None
    details: object = None
    usage: Usage | None = None
    is_error: bool | None = None
    terminate: bool | None = None


@dataclass(slots=True, kw_only=True)
class AgentTurnContext:
    """A completed turn, given to ``finish_turn`` and ``prepare_next_turn``."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    context: AgentContext
    """The working context; its messages already include the assistant and the tool results."""
    new_messages: list[AgentMessage]
    """The run's live new-messages list (the same object ``agent_end`` carries)."""


PrepareNextTurnContext: TypeAlias = AgentTurnContext


@dataclass(slots=True, kw_only=True)
class FinishTurnResult:
    action: Literal["end", "continue"]


@dataclass(slots=True, kw_only=True)
class AgentLoopTurnUpdate:
    """What ``prepare_next_turn`` may return; each field that is set replaces the run's value."""

    context: AgentContext | None = None
    model: Model | None = None
    thinking_level: str | None = None
    """``"off"`` clears reasoning for the rest of the run."""


HookResult = TypeVar("HookResult", BeforeToolCallResult, AfterToolCallResult, AgentLoopTurnUpdate)


def hook_result(value: object, kind: type[HookResult]) -> HookResult | None:
    """A hook's return value as ``kind``: None, an instance, or a dict of its fields (Pi's plain
    objects; unknown keys are ignored). The dict is read here, once; the loop reads attributes.

    Raises:
        TypeError: The hook returned something else.
    """
    if value is None or isinstance(value, kind):
        return value
    if isinstance(value, Mapping):
        result = kind()
        for item in fields(kind):
            if item.name in value:
                setattr(result, item.name, value[item.name])
        return result
    raise TypeError(f"the hook returned {type(value).__name__}, not {kind.__name__}, a dict or None")


# ---------------------------------------------------------------------------- loop configuration

BeforeToolCallHook: TypeAlias = Callable[
    [BeforeToolCallContext, AbortSignal | None], MaybeAwaitable[BeforeToolCallResult | Mapping[str, object] | None]
]
"""May block the call; a dict of ``BeforeToolCallResult``'s fields works too (see ``hook_result``)."""
AfterToolCallHook: TypeAlias = Callable[
    [AfterToolCallContext, AbortSignal | None], MaybeAwaitable[AfterToolCallResult | Mapping[str, object] | None]
]
FinishTurnHook: TypeAlias = Callable[
    [AgentTurnContext, AbortSignal | None], MaybeAwaitable[FinishTurnResult | str | Mapping[str, object] | None]
]
TurnUpdateAnswer: TypeAlias = AgentLoopTurnUpdate | Mapping[str, object] | None
PrepareNextTurnHook: TypeAlias = Callable[[AgentTurnContext], MaybeAwaitable[TurnUpdateAnswer]]

@dataclass(slots=True, kw_only=True)
class AgentLoopConfig(StreamOptions):
    """Configuration of one loop run: the model, the hooks and the stream options it passes on.

    Hooks may be plain or async functions. The inherited ``StreamOptions`` fields are handed to the stream function in its ``StreamOptions``, with
    ``api_key`` replaced by ``get_api_key(provider)`` when that returns a key and ``signal``
    set to the run's signal.
    """

    model: Model
    convert_to_llm: Callable[[list[AgentMessage]], MaybeAwaitable[list[Message]]]
    """``messages -> Message[]``; must not raise."""
    transform_context: (
        Callable[[list[AgentMessage], AbortSignal | None], MaybeAwaitable[list[AgentMessage]]] | None
    ) = None
    """``(messages, signal) -> messages`` for one request; receives the live list, must not mutate it."""
    get_api_key: Callable[[str], MaybeAwaitable[str | None]] | None = None
    get_steering_messages: Callable[[], MaybeAwaitable[list[AgentMessage]]] | None = None
    get_follow_up_messages: Callable[[], MaybeAwaitable[list[AgentMessage]]] | None = None
    tool_execution: ToolExecutionMode = "parallel"
    before_tool_call: BeforeToolCallHook | None = None
    after_tool_call: AfterToolCallHook | None = None
    finish_turn: FinishTurnHook | None = None
    """Returns ``"end"``, ``"continue"`` (or ``FinishTurnResult``/``{"action": ...}``) or None."""
    prepare_next_turn: PrepareNextTurnHook | None = None
    """Returns None or an ``AgentLoopTurnUpdate``; called before every turn but the first."""
