"""A tool call whose final arguments are not one JSON object is marked, not silently repaired.

Seen from a real llama.cpp server: an unterminated string with stop reason "tool calls". The
repaired arguments stay visible, but ``ToolCall.arguments_error`` tells the loop not to run it.
"""

from __future__ import annotations

import json

import pytest

from pi_coder.ai._partial_json import parse_final_json
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.providers import anthropic, openai_completions
from pi_coder.ai.types import Context, SystemMessage, Tool, ToolCall, UserMessage
from tests.support.sse_server import SSEServer, Turn
from tests.support.sse_server import ToolCall as WireToolCall

WRITE = Tool(
    name="write",
    description="Write a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
)
PROVIDERS = {"anthropic-messages": anthropic, "openai-completions": openai_completions}


pytestmark = pytest.mark.usefixtures("close_shared_clients")


def test_valid_documents_have_no_error() -> None:
    assert parse_final_json("") == ({}, None)
    assert parse_final_json("  ") == ({}, None)
    assert parse_final_json('{"path": "a", "n": [1, 2]}') == ({"path": "a", "n": [1, 2]}, None)
    # Raw control characters inside strings: complete, just sloppy (local servers send them).
    assert parse_final_json('{"content": "a\nb\tc"}') == ({"content": "a\nb\tc"}, None)


def test_every_cut_of_a_document_is_an_error() -> None:
    text = json.dumps({"path": "src/x.py", "content": "line 1\nline 2\n", "n": 12, "ok": True})
    for cut in range(1, len(text)):
        arguments, error = parse_final_json(text[:cut])
        assert error is not None and error.startswith("the arguments are not valid JSON"), text[:cut]
        assert isinstance(arguments, dict)


def test_unterminated_string_keeps_the_repair_and_says_where() -> None:
    arguments, error = parse_final_json('{"path": "out.txt", "content": "hel')
    assert arguments == {"path": "out.txt", "content": "hel"}
    assert error == "the arguments are not valid JSON (Unterminated string starting at: line 1 column 32 (char 31))"


@pytest.mark.parametrize(
    ("text", "kind"), [("[1]", "an array"), ('"x"', "a string"), ("3", "a number"), ("null", "null"), ("true", "a boolean")]
)
def test_a_document_that_is_not_an_object_is_an_error(text: str, kind: str) -> None:
    assert parse_final_json(text) == ({}, f"the arguments are {kind}, not a JSON object")


def test_the_marker_is_never_serialised() -> None:
    call = ToolCall(id="c1", name="write", arguments={"path": "a"})
    call.arguments_error = "the arguments are not valid JSON"
    assert "argumentsError" not in call.to_json_dict() and "arguments_error" not in call.model_dump()
    assert call.model_copy().arguments_error == "the arguments are not valid JSON"


async def _final(server: SSEServer, api: str, turn: Turn):
    server.enqueue(turn)
    context = Context(messages=[SystemMessage(content="terse", tools_added=[WRITE]), UserMessage(content="hi")])
    stream = PROVIDERS[api].stream(server.model(api), context, StreamOptions(api_key="k"))
    events = [event async for event in stream]
    return events, await stream.result()


@pytest.mark.parametrize("api", list(PROVIDERS))
async def test_truncated_final_arguments_are_marked(sse_server: SSEServer, api: str) -> None:
    turn = Turn([WireToolCall("write", '{"path": "out.txt", "content": "hel', id="call_1")])
    events, message = await _final(sse_server, api, turn)
    assert message.stop_reason == "toolUse"
    (call,) = message.content
    assert isinstance(call, ToolCall)
    assert call.arguments == {"path": "out.txt", "content": "hel"}  # still shown
    assert call.arguments_error is not None and "Unterminated string" in call.arguments_error
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call.arguments_error == call.arguments_error


@pytest.mark.parametrize("api", list(PROVIDERS))
async def test_complete_arguments_are_not_marked(sse_server: SSEServer, api: str) -> None:
    turn = Turn([WireToolCall("write", {"path": "out.txt", "content": "hello"}, id="call_1")])
    _, message = await _final(sse_server, api, turn)
    (call,) = message.content
    assert call.arguments == {"path": "out.txt", "content": "hello"} and call.arguments_error is None


async def test_anthropic_block_never_closed_is_still_checked(sse_server: SSEServer) -> None:
    """No content_block_stop before message_delta: the call is checked when the message finishes."""
    events = [
        ("message_start", {"type": "message_start", "message": {"id": "m1", "model": "x", "usage": {"input_tokens": 1}}}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": '{"path": "a.txt", "content": "ab'}},
        ),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    raw = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()
    _, message = await _final(sse_server, "anthropic-messages", Turn([], raw=raw))
    assert message.stop_reason == "toolUse"
    (call,) = message.content
    assert call.arguments == {"path": "a.txt", "content": "ab"}
    assert call.arguments_error is not None
