"""Message, content, usage and model types.

Every type is a pydantic model whose JSON form (``model_dump(by_alias=True)``) is exactly
Pi's wire and session shape (camelCase keys, epoch-millisecond timestamps). Python attributes
are snake_case.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from pi_coder.json_types import JsonObject

    _LlmMessage: TypeAlias = "SystemMessage | UserMessage | AssistantMessage | ToolResultMessage"
else:
    # pydantic sees these fields as it always has (any value, kept as it comes, serialised by its
    # runtime type): decoded JSON is not re-validated on every message built or loaded, and a
    # transcript is not checked message by message. The type checker sees the real types.
    JsonObject = dict[str, object]
    _LlmMessage = object

__all__ = [
    "AssistantContent",
    "AssistantMessage",
    "Context",
    "Cost",
    "DeferredHandle",
    "ImageContent",
    "Message",
    "Model",
    "ModelCost",
    "NamedThinkingLevel",
    "StopReason",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevel",
    "Tool",
    "ToolCall",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
    "now_ms",
]

StopReason: TypeAlias = Literal["pending", "stop", "length", "toolUse", "deferred", "error", "aborted"]
NamedThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
"""The levels a user names in settings, with ``--thinking`` and over RPC, weakest first."""
ThinkingLevel: TypeAlias = Literal[NamedThinkingLevel, "max"]
"""Every thinking level, weakest first; ``max`` is offered only when a model's map has it."""


def now_ms() -> int:
    """Milliseconds since the Unix epoch, Pi's timestamp unit."""
    return time.time_ns() // 1_000_000


class PiModel(BaseModel):
    """Base for wire types: camelCase aliases, snake_case attributes, unknown keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        ser_json_inf_nan="null",
        defer_build=True,
    )

    def to_json_dict(self) -> JsonObject:
        """The Pi JSON form: aliases, no unset optional fields."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


# ---------------------------------------------------------------------------- content blocks


class TextContent(PiModel):
    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None
    """Opaque provider replay data, kept byte for byte."""


class ThinkingContent(PiModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None
    """When true, ``thinking`` is placeholder text and the payload is in the signature."""


class ImageContent(PiModel):
    type: Literal["image"] = "image"
    data: str
    """Base64-encoded image bytes."""
    mime_type: str


class ToolCall(PiModel):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: JsonObject = Field(default_factory=dict)
    thought_signature: str | None = None
    _arguments_error: str | None = PrivateAttr(default=None)

    @property
    def arguments_error(self) -> str | None:
        """Why the final argument text from the provider was not one JSON object; None when it was.

        ``arguments`` then holds a best-effort repair (fine to show, possibly truncated), so the
        agent loop refuses to execute the call. Kept in memory only, never serialised.
        """
        return self._arguments_error

    @arguments_error.setter
    def arguments_error(self, value: str | None) -> None:
        self._arguments_error = value


UserContent: TypeAlias = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent: TypeAlias = Annotated[
    TextContent | ThinkingContent | ToolCall, Field(discriminator="type")
]


# ---------------------------------------------------------------------------- usage


class Cost(PiModel):
    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0


class Usage(PiModel):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: Cost = Field(default_factory=Cost)
    reasoning: int | None = None
    cache_write1h: int | None = Field(default=None, alias="cacheWrite1h")


# ---------------------------------------------------------------------------- tools


class Tool(PiModel):
    """A model-visible tool declaration."""

    name: str
    description: str
    parameters: JsonObject = Field(default_factory=dict)
    """JSON Schema of the arguments."""
    constrained_sampling: bool | JsonObject | None = None
    """Pi 1.x writes an object here (e.g. ``{"type": "json_schema", "strict": "prefer"}``)."""


class ToolRef(PiModel):
    name: str


# ---------------------------------------------------------------------------- messages


class SystemMessage(PiModel):
    role: Literal["system"] = "system"
    content: str | list[TextContent] = ""
    sections: dict[str, str | None] | None = None
    tools_added: list[Tool] | None = None
    tools_removed: list[ToolRef] | None = None
    timestamp: int = Field(default_factory=now_ms)


class UserMessage(PiModel):
    role: Literal["user"] = "user"
    content: str | list[UserContent]
    timestamp: int = Field(default_factory=now_ms)


class DeferredHandle(PiModel):
    provider: str
    model_id: str
    api: str
    id: str
    expires_at: int | None = None
    poll_after_ms: int | None = None
    data: object = None


class AssistantMessage(PiModel):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent] = Field(default_factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    timestamp: int = Field(default_factory=now_ms)
    error_message: str | None = None
    deferred: DeferredHandle | None = None
    response_id: str | None = None
    response_model: str | None = None
    raw_stop_reason: str | None = None
    diagnostics: object = None
    end_turn: bool | None = None

    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]


class ToolResultMessage(PiModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[UserContent] = Field(default_factory=list)
    details: object = None
    usage: Usage | None = None
    is_error: bool = False
    timestamp: int = Field(default_factory=now_ms)


Message: TypeAlias = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")
]


class Context(PiModel):
    """What a provider receives: a transcript of messages only (system messages included)."""

    messages: list[_LlmMessage] = Field(default_factory=list)


# ---------------------------------------------------------------------------- models


class ModelCost(PiModel):
    """Prices in USD per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


def _text_input_only() -> list[Literal["text", "image"]]:
    return ["text"]


class Model(PiModel):
    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    input: list[Literal["text", "image"]] = Field(default_factory=_text_input_only)
    cost: ModelCost = Field(default_factory=ModelCost)
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: dict[str, str] | None = None
    compat: JsonObject | None = None
    thinking_level_map: dict[str, str | None] | None = None

    def model_post_init(self, __context: object) -> None:
        if not self.name:
            self.name = self.id
