"""pi_coder.ai: the provider layer.

Message and content types (JSON = Pi's shapes), the assistant streaming protocol, abort
signals, the transcript helpers (system messages carry the prompt and tool declarations), the
``Models`` collection with its built-in catalog, and the faux provider for tests and demos.

HTTP providers are imported on first use, so importing this package does not import httpx.
The Models collection, the catalog and the faux provider load on first access of their names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from pi_coder.ai.abort import AbortController, AbortSignal
from pi_coder.ai.context import (
    create_initial_system_message,
    get_current_system_message,
    get_current_system_prompt,
    get_current_tools,
    get_tool_state_changes,
    normalize_context,
    render_system_prompt,
    to_tool_declaration,
)
from pi_coder.ai.errors import ProviderError, is_context_overflow, is_retryable_error
from pi_coder.ai.events import (
    AssistantMessageEvent,
    AssistantMessageEventStream,
    DoneEvent,
    ErrorEvent,
    EventStream,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    event_to_json,
)
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.types import (
    AssistantMessage,
    Context,
    Cost,
    DeferredHandle,
    ImageContent,
    Message,
    Model,
    ModelCost,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    Tool,
    ToolCall,
    ToolRef,
    ToolResultMessage,
    Usage,
    UserMessage,
)

if TYPE_CHECKING:
    from pi_coder.ai.models import Models, calculate_cost, create_models
    from pi_coder.ai.providers.faux import (
        FauxProvider,
        FauxState,
        faux_message,
        faux_provider,
        faux_text,
        faux_thinking,
        faux_tool_call,
    )
    from pi_coder.ai.registry import Provider, StreamFunction

_LAZY = {
    "Models": "pi_coder.ai.models",
    "calculate_cost": "pi_coder.ai.models",
    "create_models": "pi_coder.ai.models",
    "FauxProvider": "pi_coder.ai.providers.faux",
    "FauxState": "pi_coder.ai.providers.faux",
    "faux_message": "pi_coder.ai.providers.faux",
    "faux_provider": "pi_coder.ai.providers.faux",
    "faux_text": "pi_coder.ai.providers.faux",
    "faux_thinking": "pi_coder.ai.providers.faux",
    "faux_tool_call": "pi_coder.ai.providers.faux",
    "Provider": "pi_coder.ai.registry",
    "StreamFunction": "pi_coder.ai.registry",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AbortController",
    "AbortSignal",
    "AssistantMessage",
    "AssistantMessageEvent",
    "AssistantMessageEventStream",
    "Context",
    "Cost",
    "DeferredHandle",
    "DoneEvent",
    "ErrorEvent",
    "EventStream",
    "FauxProvider",
    "FauxState",
    "ImageContent",
    "Message",
    "Model",
    "ModelCost",
    "Models",
    "Provider",
    "ProviderError",
    "StartEvent",
    "StopReason",
    "StreamFunction",
    "StreamOptions",
    "SystemMessage",
    "TextContent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingContent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingLevel",
    "ThinkingStartEvent",
    "Tool",
    "ToolCall",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolRef",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "calculate_cost",
    "create_initial_system_message",
    "create_models",
    "event_to_json",
    "faux_message",
    "faux_provider",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "get_current_system_message",
    "get_current_system_prompt",
    "get_current_tools",
    "get_tool_state_changes",
    "is_context_overflow",
    "is_retryable_error",
    "normalize_context",
    "render_system_prompt",
    "to_tool_declaration",
]
