"""Messages serialise to exactly Pi's JSON shapes and load back unchanged."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pydantic import TypeAdapter

from pi_coder.ai import (
    AssistantMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolRef,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_coder.ai.types import Cost, Message

MESSAGE = TypeAdapter(Message)

USER_TEXT = {"role": "user", "content": "Hello", "timestamp": 1700000000000}
USER_BLOCKS = {
    "role": "user",
    "content": [
        {"type": "text", "text": "What is in this image?"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    ],
    "timestamp": 1700000000001,
}
ASSISTANT = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "Let me look.", "thinkingSignature": "EqQBCkgIARABGAIiQ"},
        {"type": "thinking", "thinking": "[redacted]", "thinkingSignature": "opaque", "redacted": True},
        {"type": "text", "text": "I'll read it.", "textSignature": "msg_1"},
        {"type": "toolCall", "id": "toolu_01", "name": "read", "arguments": {"path": "a.py", "limit": 10}},
    ],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-sonnet-4-5",
    "usage": {
        "input": 100,
        "output": 20,
        "cacheRead": 5,
        "cacheWrite": 7,
        "totalTokens": 132,
        "cost": {"input": 0.0003, "output": 0.0003, "cacheRead": 1.5e-06, "cacheWrite": 2.625e-05, "total": 0.00062775},
    },
    "stopReason": "toolUse",
    "timestamp": 1700000000002,
}
ASSISTANT_ERROR = {
    "role": "assistant",
    "content": [{"type": "text", "text": "partial"}],
    "api": "openai-completions",
    "provider": "openai",
    "model": "gpt-5",
    "usage": {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    },
    "stopReason": "error",
    "errorMessage": "socket closed",
    "timestamp": 1700000000003,
}
TOOL_RESULT = {
    "role": "toolResult",
    "toolCallId": "toolu_01",
    "toolName": "read",
    "content": [{"type": "text", "text": "print('hi')"}],
    "details": {"truncated": False, "lines": 1},
    "isError": False,
    "timestamp": 1700000000004,
}
SYSTEM = {
    "role": "system",
    "content": "You are a coding agent.",
    "sections": {"env": "cwd: /tmp", "old": None},
    "toolsAdded": [
        {
            "name": "read",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        }
    ],
    "toolsRemoved": [{"name": "bash"}],
    "timestamp": 0,
}


@pytest.mark.parametrize(
    "doc",
    [USER_TEXT, USER_BLOCKS, ASSISTANT, ASSISTANT_ERROR, TOOL_RESULT, SYSTEM],
    ids=["user-text", "user-blocks", "assistant", "assistant-error", "tool-result", "system"],
)
def test_pi_json_round_trips_exactly(doc: dict[str, Any]) -> None:
    """Loading Pi's JSON and dumping it again gives the same JSON, key for key."""
    message = MESSAGE.validate_python(copy.deepcopy(doc))
    assert message.to_json_dict() == doc
    assert json.loads(json.dumps(message.to_json_dict())) == doc
    assert MESSAGE.validate_json(json.dumps(doc)).to_json_dict() == doc


def test_python_construction_gives_pi_json() -> None:
    """Building messages with snake_case keywords produces Pi's camelCase JSON."""
    assistant = AssistantMessage(
        content=[
            ThinkingContent(thinking="Let me look.", thinking_signature="EqQBCkgIARABGAIiQ"),
            ThinkingContent(thinking="[redacted]", thinking_signature="opaque", redacted=True),
            TextContent(text="I'll read it.", text_signature="msg_1"),
            ToolCall(id="toolu_01", name="read", arguments={"path": "a.py", "limit": 10}),
        ],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        usage=Usage(
            input=100,
            output=20,
            cache_read=5,
            cache_write=7,
            total_tokens=132,
            cost=Cost(input=0.0003, output=0.0003, cache_read=1.5e-06, cache_write=2.625e-05, total=0.00062775),
        ),
        stop_reason="toolUse",
        timestamp=1700000000002,
    )
    assert assistant.to_json_dict() == ASSISTANT
    user = UserMessage(
        content=[TextContent(text="What is in this image?"), ImageContent(data="iVBORw0KGgo=", mime_type="image/png")],
        timestamp=1700000000001,
    )
    assert user.to_json_dict() == USER_BLOCKS
    result = ToolResultMessage(
        tool_call_id="toolu_01",
        tool_name="read",
        content=[TextContent(text="print('hi')")],
        details={"truncated": False, "lines": 1},
        timestamp=1700000000004,
    )
    assert result.to_json_dict() == TOOL_RESULT
    system = SystemMessage(
        content="You are a coding agent.",
        sections={"env": "cwd: /tmp", "old": None},
        tools_added=[Tool(**SYSTEM["toolsAdded"][0])],
        tools_removed=[ToolRef(name="bash")],
        timestamp=0,
    )
    assert system.to_json_dict() == SYSTEM


def test_timestamp_defaults_to_now_in_milliseconds() -> None:
    """A message built without a timestamp gets the current epoch time in ms."""
    import time

    before = int(time.time() * 1000)
    message = UserMessage(content="hi")
    after = int(time.time() * 1000)
    assert before - 1 <= message.timestamp <= after + 1


def test_signatures_are_kept_byte_for_byte() -> None:
    """Opaque replay data survives a round trip unchanged, whitespace and all."""
    signature = "  \u00e9\n\tsig==  "
    doc = copy.deepcopy(ASSISTANT)
    doc["content"][0]["thinkingSignature"] = signature
    loaded = MESSAGE.validate_json(json.dumps(doc))
    assert loaded.content[0].thinking_signature == signature
    assert json.loads(json.dumps(loaded.to_json_dict()))["content"][0]["thinkingSignature"] == signature


def test_json_and_opaque_fields_keep_what_they_are_given() -> None:
    """``arguments``, ``parameters``, ``compat`` (decoded JSON to the type checker), ``details``,
    ``data``, ``diagnostics`` and a context's messages are taken as given, never validated or
    converted, and written back as they are: what a session line holds there loads unchanged."""
    from pi_coder.ai.types import Context, DeferredHandle, Model

    nested = {"pair": (1, 2), "big": 10**30, "float": 1.0, "flag": True, "none": None}
    opaque = object()
    call = ToolCall(id="c", name="n", arguments={"x": nested})
    assert call.arguments["x"] is nested
    assert call.to_json_dict()["arguments"] == {"x": {"pair": [1, 2], "big": 10**30, "float": 1.0, "flag": True, "none": None}}
    tool = Tool(name="n", description="d", parameters={"type": "object", "properties": nested})
    assert tool.parameters["properties"] is nested
    result = ToolResultMessage(tool_call_id="c", tool_name="n", details=opaque)
    assert result.details is opaque
    assert AssistantMessage(diagnostics=opaque).diagnostics is opaque
    handle = DeferredHandle(provider="p", model_id="m", api="a", id="d", data=opaque)
    assert handle.data is opaque
    model = Model(id="m", api="a", provider="p", compat={"maxTokensField": 7, "odd": nested})
    assert model.compat is not None and model.compat["odd"] is nested and model.compat["maxTokensField"] == 7
    assert Context(messages=[opaque]).messages == [opaque]  # a transcript is not checked message by message
    doc = copy.deepcopy(TOOL_RESULT)
    doc["details"] = {"any": [1, "two", {"three": None}], "shape": 2.5}
    loaded = MESSAGE.validate_json(json.dumps(doc))
    assert loaded.to_json_dict() == doc
