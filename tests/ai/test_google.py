"""The google-generative-ai provider against a real local SSE server and Pi 1.6's request bodies.

``data/google_tool_turn.sse`` has the documented shape of ``streamGenerateContent?alt=sse``
(CRLF-separated events, as Google's servers send them): a thought part with a signature, a text
part, then a ``functionCall`` part with its own ``thoughtSignature`` together with
``finishReason`` and ``usageMetadata``. ``data/pi16_google_body.json`` holds the two request
bodies Pi 1.6 sent for the same exchange (``pi -p --thinking high "read a.txt"``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_coder.ai.options import StreamOptions
from pi_coder.ai.providers import google
from pi_coder.ai.types import (
    Context,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolResultMessage,
    UserMessage,
)
from tests.support.sse_server import SSEServer, Turn

API = "google-generative-ai"
DATA = Path(__file__).parent / "data"
PI16 = json.loads((DATA / "pi16_google_body.json").read_text())


pytestmark = pytest.mark.usefixtures("close_shared_clients")


def sse_turn(name: str, **kw) -> Turn:
    return Turn(raw=(DATA / name).read_bytes(), **kw)


def pi16_context() -> Context:
    first = PI16["first"]
    tools = [
        Tool(name=d["name"], description=d["description"], parameters=d["parametersJsonSchema"])
        for d in first["tools"][0]["functionDeclarations"]
    ]
    prompt = first["systemInstruction"]["parts"][0]["text"]
    return Context(
        messages=[SystemMessage(content=prompt, tools_added=tools), UserMessage(content="read a.txt")]
    )


def model_for(server: SSEServer, **kw):
    fields = {
        "reasoning": True,
        "max_tokens": 64000,
        "input": ["text", "image"],
        "id": "gemini-x",
        "provider": "cap",
        "base_url": server.url + "/v1beta",
    }
    fields.update(kw)
    return server.model(API, **fields)


async def run(ctx: Context, model, **options):
    options.setdefault("api_key", "gk-test")
    stream = google.stream(model, ctx, StreamOptions(**options))
    events = [event async for event in stream]
    return events, await stream.result()


@pytest.mark.parametrize("chunk_size", [None, 3])
async def test_thought_text_and_function_call(sse_server: SSEServer, chunk_size) -> None:
    sse_server.enqueue(sse_turn("google_tool_turn.sse", chunk_size=chunk_size))
    events, message = await run(pi16_context(), model_for(sse_server), reasoning="high")
    assert [e.type for e in events if e.type.endswith(("_start", "_end"))] == [
        "thinking_start",
        "thinking_end",
        "text_start",
        "text_end",
        "toolcall_start",
        "toolcall_end",
    ]
    thinking, text, call = message.content
    assert thinking == ThinkingContent(thinking="Think.", thinking_signature="U0lH")
    assert text == TextContent(text="Reading.")
    assert (call.name, call.arguments, call.thought_signature, call.arguments_error) == (
        "read",
        {"path": "a.txt"},
        "RkM=",
        None,
    )
    assert call.id.startswith("read_")
    assert (
        message.stop_reason == "toolUse" and message.raw_stop_reason == "STOP" and message.response_id == "r1"
    )
    u = message.usage
    assert (u.input, u.cache_read, u.output, u.reasoning, u.total_tokens) == (60, 40, 28, 8, 128)


async def test_request_bodies_match_pi16(sse_server: SSEServer) -> None:
    """Both requests equal Pi 1.6's: signatures go back on the thought and the function call."""
    model = model_for(sse_server)
    ctx = pi16_context()
    sse_server.enqueue(sse_turn("google_tool_turn.sse"), sse_turn("google_text_turn.sse"))
    _, first = await run(ctx, model, reasoning="high")
    result = ToolResultMessage(
        tool_call_id=first.content[2].id, tool_name="read", content=[TextContent(text="hello\n")]
    )
    _, second = await run(Context(messages=[*ctx.messages, first, result]), model, reasoning="high")
    assert second.text() == "Done." and second.stop_reason == "stop"
    assert (
        sse_server.requests[1].path == PI16["path"] == "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
    )
    assert sse_server.requests[0].json == PI16["first"]
    assert sse_server.requests[1].json == PI16["second"]
    assert sse_server.requests[0].headers["x-goog-api-key"] == "gk-test"


def test_thinking_configs_match_pi16(sse_server: SSEServer) -> None:
    """Pi 1.6's thinkingConfig for: off, Gemini 2.5 (budget), Gemini 3 (level, VALIDATED tools)."""
    ctx = pi16_context()

    def config(model_id: str, level: str) -> dict:
        return google.build_payload(model_for(sse_server, id=model_id), ctx, StreamOptions(reasoning=level))

    assert config("gemini-x", "off")["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}
    assert config("gemini-2.5-flash", "low")["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 2048,
    }
    g3 = config("gemini-3.1-pro-preview", "low")
    assert g3["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingLevel": "LOW"}
    assert g3["toolConfig"] == {"functionCallingConfig": {"mode": "VALIDATED"}}


def _data(obj: dict) -> bytes:
    return f"data: {json.dumps(obj)}\r\n\r\n".encode()


async def test_max_tokens_safety_and_in_stream_errors(sse_server: SSEServer) -> None:
    cut = _data(
        {
            "candidates": [
                {"content": {"parts": [{"text": "part"}], "role": "model"}, "finishReason": "MAX_TOKENS"}
            ]
        }
    )
    safety = _data({"candidates": [{"content": {"parts": [], "role": "model"}, "finishReason": "SAFETY"}]})
    error = _data({"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}})
    sse_server.enqueue(Turn(raw=cut), Turn(raw=safety), Turn(raw=error), Turn(raw=_data({"candidates": []})))
    model = model_for(sse_server)
    _, message = await run(pi16_context(), model)
    assert (message.stop_reason, message.text()) == ("length", "part")
    _, message = await run(pi16_context(), model)
    assert message.stop_reason == "error" and message.error_message == "cap stopped the response: SAFETY"
    _, message = await run(pi16_context(), model)
    assert message.error_message == "cap API error (UNAVAILABLE): overloaded"
    _, message = await run(pi16_context(), model)
    assert "ended before the response was complete" in message.error_message


def test_error_results_and_other_models_signatures(sse_server: SSEServer) -> None:
    from pi_coder.ai.types import AssistantMessage, ToolCall

    other = AssistantMessage(
        content=[
            TextContent(text="t", text_signature="S"),
            ToolCall(id="c1", name="bash", arguments={}, thought_signature="X"),
        ],
        api="anthropic-messages",
        provider="anthropic",
        model="claude",
        stop_reason="toolUse",
    )
    failed = ToolResultMessage(
        tool_call_id="c1", tool_name="bash", content=[TextContent(text="exit 1")], is_error=True
    )
    ctx = Context(messages=[SystemMessage(content="p"), UserMessage(content="q"), other, failed])
    contents = google.build_payload(model_for(sse_server), ctx, StreamOptions())["contents"]
    assert contents[1:] == [
        {"parts": [{"text": "t"}, {"functionCall": {"name": "bash", "args": {}}}], "role": "model"},
        {"parts": [{"functionResponse": {"name": "bash", "response": {"error": "exit 1"}}}], "role": "user"},
    ]
