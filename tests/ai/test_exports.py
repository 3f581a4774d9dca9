"""pi_coder.ai's public surface: a sorted __all__ whose every name resolves."""

from __future__ import annotations

import pi_coder.ai

DESIGN_NAMES = {
    "UserMessage", "AssistantMessage", "ToolResultMessage", "SystemMessage", "TextContent",
    "ThinkingContent", "ImageContent", "ToolCall", "Usage", "Model", "Context",
    "AssistantMessageEventStream", "Models", "create_models", "faux_provider", "StreamOptions",
    "AbortController", "AbortSignal", "normalize_context", "to_tool_declaration",
    "get_current_tools", "get_tool_state_changes", "create_initial_system_message",
    "get_current_system_message", "get_current_system_prompt", "is_context_overflow",
    "StartEvent", "TextStartEvent", "TextDeltaEvent", "TextEndEvent", "ThinkingStartEvent",
    "ThinkingDeltaEvent", "ThinkingEndEvent", "ToolCallStartEvent", "ToolCallDeltaEvent",
    "ToolCallEndEvent", "DoneEvent", "ErrorEvent",
}  # fmt: skip


def test_all_is_sorted_and_unique() -> None:
    assert pi_coder.ai.__all__ == sorted(set(pi_coder.ai.__all__))


def test_every_exported_name_resolves() -> None:
    module = pi_coder.ai
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    namespace: dict[str, object] = {}
    exec("from pi_coder.ai import *", namespace)  # star import must work with the lazy names
    assert set(module.__all__) <= set(namespace)


def test_design_names_are_exported() -> None:
    assert DESIGN_NAMES <= set(pi_coder.ai.__all__)


def test_unknown_attribute_raises_attribute_error() -> None:
    try:
        pi_coder.ai.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_exports_are_the_defining_objects() -> None:
    from pi_coder.ai.models import create_models
    from pi_coder.ai.providers.faux import faux_provider
    from pi_coder.ai.types import UserMessage

    assert pi_coder.ai.create_models is create_models
    assert pi_coder.ai.faux_provider is faux_provider
    assert pi_coder.ai.UserMessage is UserMessage
