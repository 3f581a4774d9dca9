"""The openai-responses provider against a real local SSE server and Pi 1.6's request bodies.

The recorded stream (``data/responses_tool_turn.sse``) has the shape OpenAI documents for
``POST /v1/responses`` with ``stream: true``: a reasoning item with a summary and encrypted
content, an output message, a function call with streamed arguments, and ``response.completed``
with cached and reasoning token counts. ``data/pi16_responses_body.json`` holds the two request
bodies Pi 1.6 sent for the same exchange (``pi -p --thinking high "read a.txt"``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_coder.ai.options import StreamOptions
from pi_coder.ai.providers import openai_responses
from pi_coder.ai.types import (
    AssistantMessage,
    Context,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tests.support.sse_server import SSEServer, Turn

API = "openai-responses"
DATA = Path(__file__).parent / "data"
PI16 = json.loads((DATA / "pi16_responses_body.json").read_text())


pytestmark = pytest.mark.usefixtures("close_shared_clients")


def sse_turn(name: str, **kw) -> Turn:
    return Turn(raw=(DATA / name).read_bytes(), **kw)


def pi16_context() -> Context:
    first = PI16["first"]
    tools = [
        Tool(name=t["name"], description=t["description"], parameters=t["parameters"]) for t in first["tools"]
    ]
    return Context(
        messages=[
            SystemMessage(content=first["input"][0]["content"], tools_added=tools),
            UserMessage(content="read a.txt"),
        ]
    )


def model_for(server: SSEServer, **kw):
    fields = {
        "reasoning": True,
        "max_tokens": 64000,
        "input": ["text", "image"],
        "id": "gpt-x",
        "provider": "cap",
    }
    fields.update(kw)
    return server.model(API, **fields)


async def run(server: SSEServer, ctx: Context, model, **options):
    options.setdefault("api_key", "sk-test")
    stream = openai_responses.stream(model, ctx, StreamOptions(**options))
    events = [event async for event in stream]
    return events, await stream.result()


@pytest.mark.parametrize("chunk_size", [None, 5])
async def test_reasoning_text_and_function_call_stream(sse_server: SSEServer, chunk_size) -> None:
    """Reasoning summary, text and a tool call become three blocks with Pi 1.6's signatures."""
    sse_server.enqueue(sse_turn("responses_tool_turn.sse", chunk_size=chunk_size))
    events, message = await run(sse_server, pi16_context(), model_for(sse_server), reasoning="high")
    kinds = [e.type for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert [k for k in kinds if k.endswith(("_start", "_end"))] == [
        "thinking_start",
        "thinking_end",
        "text_start",
        "text_end",
        "toolcall_start",
        "toolcall_end",
    ]
    thinking, text, call = message.content
    assert thinking == ThinkingContent(
        thinking="Think.",
        thinking_signature='{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Think."}],'
        '"encrypted_content":"ENC123"}',
    )
    assert text == TextContent(text="Reading.", text_signature='{"v":1,"id":"msg_1"}')
    assert (call.id, call.name, call.arguments, call.arguments_error) == (
        "call_A|fc_1",
        "read",
        {"path": "a.txt"},
        None,
    )
    assert message.stop_reason == "toolUse" and message.raw_stop_reason == "completed"
    assert message.response_id == "resp_1"
    usage = message.usage
    assert (usage.input, usage.cache_read, usage.output, usage.reasoning, usage.total_tokens) == (
        60,
        40,
        20,
        8,
        120,
    )


async def test_request_bodies_match_pi16(sse_server: SSEServer) -> None:
    """Both requests of a tool round trip equal Pi 1.6's, including the replayed reasoning item."""
    session = PI16["first"]["prompt_cache_key"]
    model = model_for(sse_server)
    ctx = pi16_context()
    sse_server.enqueue(sse_turn("responses_tool_turn.sse"), sse_turn("responses_text_turn.sse"))
    _, first = await run(sse_server, ctx, model, reasoning="high", session_id=session)
    result = ToolResultMessage(
        tool_call_id=first.content[2].id, tool_name="read", content=[TextContent(text="hello\n")]
    )
    ctx2 = Context(messages=[*ctx.messages, first, result])
    _, second = await run(sse_server, ctx2, model, reasoning="high", session_id=session)
    assert second.text() == "Done." and second.stop_reason == "stop"
    assert sse_server.requests[0].path == "/v1/responses"
    assert sse_server.requests[0].json == PI16["first"]
    assert sse_server.requests[1].json == PI16["second"]
    headers = sse_server.requests[1].headers
    assert headers["authorization"] == "Bearer sk-test" and headers["session-id"] == session


def test_thinking_off_and_level_maps(sse_server: SSEServer) -> None:
    """Off sends effort none (Pi 1.6 for a model without a map); a map's None drops the field."""
    ctx = pi16_context()
    plain = openai_responses.build_payload(model_for(sse_server), ctx, StreamOptions(reasoning="off"))
    assert plain["reasoning"] == {"effort": "none"} and "include" not in plain
    mapped = openai_responses.build_payload(
        model_for(sse_server, thinking_level_map={"off": None, "xhigh": "xhigh"}),
        ctx,
        StreamOptions(reasoning="off"),
    )
    assert "reasoning" not in mapped
    high = openai_responses.build_payload(
        model_for(sse_server, reasoning=False), ctx, StreamOptions(reasoning="high")
    )
    assert "reasoning" not in high and high["input"][0]["role"] == "system"


async def test_other_models_messages_replay_without_signatures(sse_server: SSEServer) -> None:
    """Another model's thinking becomes text; its tool-call ids are cleaned to call_id form."""
    other = AssistantMessage(
        content=[
            ThinkingContent(thinking="hmm", thinking_signature="sig"),
            ToolCall(id="toolu_01:x", name="read", arguments={"path": "a"}),
        ],
        api="anthropic-messages",
        provider="anthropic",
        model="claude",
        stop_reason="toolUse",
    )
    result = ToolResultMessage(tool_call_id="toolu_01:x", tool_name="read", content=[TextContent(text="A")])
    ctx = Context(messages=[SystemMessage(content="p"), UserMessage(content="q"), other, result])
    payload = openai_responses.build_payload(model_for(sse_server), ctx, StreamOptions())
    assert payload["input"][2:] == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "hmm", "annotations": []}],
            "status": "completed",
        },
        {"type": "function_call", "call_id": "toolu_01_x", "name": "read", "arguments": '{"path":"a"}'},
        {"type": "function_call_output", "call_id": "toolu_01_x", "output": "A"},
    ]


def _ev(data: dict) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


async def test_incomplete_is_length_and_failed_is_an_error(sse_server: SSEServer) -> None:
    cut = _ev(
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"id": "m", "type": "message", "content": []},
        }
    )
    cut += _ev({"type": "response.output_text.delta", "item_id": "m", "delta": "partial"})
    cut += _ev(
        {
            "type": "response.incomplete",
            "response": {
                "id": "r",
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
                "usage": {"input_tokens": 5, "output_tokens": 9},
            },
        }
    )
    failed = _ev(
        {
            "type": "response.failed",
            "response": {"id": "r", "status": "failed", "error": {"code": "server_error", "message": "boom"}},
        }
    )
    sse_server.enqueue(
        Turn(raw=cut.encode()),
        Turn(raw=failed.encode()),
        Turn(raw=b'event: response.created\ndata: {"type":"response.created","response":{}}\n\n'),
    )
    model = model_for(sse_server)
    _, message = await run(sse_server, pi16_context(), model)
    assert (message.stop_reason, message.text(), message.usage.output) == ("length", "partial", 9)
    _, message = await run(sse_server, pi16_context(), model)
    assert message.stop_reason == "error" and message.error_message == "cap API error (server_error): boom"
    _, message = await run(sse_server, pi16_context(), model)
    assert (
        message.stop_reason == "error" and "ended before the response was complete" in message.error_message
    )


async def test_cut_off_arguments_are_refused(sse_server: SSEServer) -> None:
    """A function call whose final arguments are not JSON is marked (the agent will not run it)."""
    body = _ev(
        {
            "type": "response.output_item.added",
            "item": {"id": "fc", "type": "function_call", "call_id": "c", "name": "bash"},
        }
    )
    body += _ev(
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc",
            "delta": '{"command": "rm -rf /tmp/x',
        }
    )
    body += _ev(
        {
            "type": "response.incomplete",
            "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
        }
    )
    sse_server.enqueue(Turn(raw=body.encode()))
    _, message = await run(sse_server, pi16_context(), model_for(sse_server))
    assert message.stop_reason == "length"
    assert message.content[0].arguments_error is not None
