"""models.toml compat ``toolChoice`` / ``tool_choice``: the ``tool_choice`` field of both APIs."""

from __future__ import annotations

from typing import Any

import pytest

from pi_coder.ai.options import StreamOptions
from pi_coder.ai.providers import anthropic, openai_completions
from pi_coder.ai.types import (
    AssistantMessage,
    Context,
    Model,
    SystemMessage,
    TextContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

LS = Tool(name="ls", description="List", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
READ = Tool(name="read", description="Read", parameters={"type": "object", "properties": {}})


def model(api: str, compat: dict[str, Any] | None) -> Model:
    return Model(id="m", api=api, provider="local", base_url="http://127.0.0.1:9/v1", compat=compat)


def payload(api: str, compat: dict[str, Any] | None, *messages: Any, tools: list[Tool] | None = None) -> dict:
    system = SystemMessage(content="Be terse.", tools_added=[LS, READ] if tools is None else tools)
    context = Context(messages=[system, *(messages or [UserMessage(content="hi")])])
    if api == "openai-completions":
        return openai_completions.build_payload(model(api, compat), context, StreamOptions())
    return anthropic.build_payload(model(api, compat), context, StreamOptions())[0]


@pytest.mark.parametrize(
    ("value", "openai", "anthropic_value"),
    [
        ("required", "required", {"type": "any"}),
        ("any", "required", {"type": "any"}),
        ("auto", "auto", {"type": "auto"}),
        ("none", "none", {"type": "none"}),
        ("ls", {"type": "function", "function": {"name": "ls"}}, {"type": "tool", "name": "ls"}),
    ],
)
@pytest.mark.parametrize("key", ["toolChoice", "tool_choice"])
def test_values_map_to_each_wire(key: str, value: str, openai: Any, anthropic_value: Any) -> None:
    assert payload("openai-completions", {key: value})["tool_choice"] == openai
    assert payload("anthropic-messages", {key: value})["tool_choice"] == anthropic_value


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages"])
def test_not_sent_without_the_option_without_tools_or_for_an_unknown_tool(api: str) -> None:
    assert "tool_choice" not in payload(api, None)
    assert "tool_choice" not in payload(api, {"tool_choice": "required"}, tools=[])
    assert "tool_choice" not in payload(api, {"tool_choice": "grep"})


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages"])
def test_only_the_request_answering_the_user_is_forced(api: str) -> None:
    """After tool results the server's default applies, so a forced agent can still finish."""
    call = ToolCall(id="call_1", name="ls", arguments={})
    messages = [
        UserMessage(content="list"),
        AssistantMessage(
            content=[call], stop_reason="toolUse", api=api, provider="local", model="m"
        ),
        ToolResultMessage(tool_call_id="call_1", tool_name="ls", content=[TextContent(text="a.txt")]),
    ]
    assert "tool_choice" not in payload(api, {"tool_choice": "ls"}, *messages)
    # A new user message after that is again a turn's first request.
    assert "tool_choice" in payload(api, {"tool_choice": "ls"}, *messages, UserMessage(content="again"))
