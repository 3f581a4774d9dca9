"""The anthropic-messages provider against a real local SSE server."""

from __future__ import annotations

import pytest

from pi_coder.ai.events import AssistantMessageEvent, AssistantMessageEventStream
from pi_coder.ai.models import calculate_cost
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.providers import anthropic
from pi_coder.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    ModelCost,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tests.support.sse_server import (
    RedactedThinking,
    SSEServer,
    Text,
    Thinking,
    Turn,
)
from tests.support.sse_server import (
    ToolCall as WireToolCall,
)

API = "anthropic-messages"
READ = Tool(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


pytestmark = pytest.mark.usefixtures("close_shared_clients")


def context(*messages, prompt: str = "You are terse.", tools: list[Tool] | None = None) -> Context:
    system = SystemMessage(content=prompt, tools_added=tools)
    return Context(messages=[system, *(messages or [UserMessage(content="hi")])])


async def run(server: SSEServer, *turns: Turn, ctx: Context | None = None, model=None, **options):
    server.enqueue(*turns)
    model = model or server.model(API)
    stream = anthropic.stream(model, ctx or context(), StreamOptions(api_key="sk-test", **options))
    assert isinstance(stream, AssistantMessageEventStream)
    events = [event async for event in stream]
    return events, await stream.result()


def types(events: list[AssistantMessageEvent]) -> list[str]:
    return [e.type for e in events]


@pytest.mark.parametrize("chunk_size", [1, 7, 4096])
async def test_text_response_events_and_final_message(sse_server: SSEServer, chunk_size: int) -> None:
    """A text answer streams start, text_start, deltas, text_end, done; the final message is complete."""
    text = "Hello, wörld — 日本 🎉!"
    events, message = await run(
        sse_server, Turn([Text(text)], usage={"input": 12, "output": 9}, chunk_size=chunk_size, delta_chars=5)
    )
    assert types(events) == ["start", "text_start"] + ["text_delta"] * 4 + ["text_end", "done"]
    assert "".join(e.delta for e in events if e.type == "text_delta") == text
    assert events[-2].content == text
    # One live content list; a usage report swaps in a shallow copy (events keep the usage they
    # were sent with); `done` carries the final message.
    assert events[0].partial.content is message.content and events[-1].message is message
    assert message.content == [TextContent(text=text)]
    assert message.stop_reason == "stop"
    assert message.raw_stop_reason == "end_turn"
    assert (message.api, message.provider, message.model) == (API, "sse-test", "test-model")
    assert message.response_id == "msg_test"
    assert message.usage.input == 12 and message.usage.output == 9 and message.usage.total_tokens == 21
    assert message.error_message is None


async def test_start_partial_is_pending_and_empty(sse_server: SSEServer) -> None:
    """At ``start`` the partial has stopReason pending and no content."""
    sse_server.enqueue(Turn([Text("ok")], delay=0.05))
    stream = anthropic.stream(sse_server.model(API), context(), StreamOptions(api_key="k"))
    iterator = aiter(stream)
    first = await anext(iterator)
    assert first.type == "start"
    assert first.partial.stop_reason == "pending" and first.partial.content == []
    rest = [e async for e in iterator]
    assert rest[-1].type == "done"


async def test_thinking_with_signature_then_text(sse_server: SSEServer) -> None:
    """Thinking deltas build a thinking block; the signature delta sets thinkingSignature."""
    events, message = await run(
        sse_server, Turn([Thinking("Let me think.", signature="c2lnbmF0dXJl"), Text("Answer.")], delta_chars=100)
    )
    assert types(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "done",
    ]
    assert events[3].content == "Let me think." and events[3].content_index == 0
    assert events[4].content_index == 1
    assert message.content == [
        ThinkingContent(thinking="Let me think.", thinking_signature="c2lnbmF0dXJl"),
        TextContent(text="Answer."),
    ]


async def test_redacted_thinking_arrives_complete(sse_server: SSEServer) -> None:
    """A redacted_thinking block becomes a redacted thinking block carrying the data as signature."""
    events, message = await run(sse_server, Turn([RedactedThinking("opaque=="), Text("Hi")]))
    assert types(events)[:3] == ["start", "thinking_start", "thinking_end"]
    block = message.content[0]
    assert isinstance(block, ThinkingContent)
    assert block.redacted is True
    assert block.thinking_signature == "opaque=="
    assert block.thinking == "[Reasoning redacted]"


async def test_tool_call_arguments_parse_while_streaming(sse_server: SSEServer) -> None:
    """input_json_delta fragments update the block's arguments as they arrive; the end has the full object."""
    args = {"path": "src/main.py", "offset": 10}
    sse_server.enqueue(
        Turn([WireToolCall("read", args, id="toolu_01")], delta_chars=3, chunk_size=40, delay=0.02)
    )
    stream = anthropic.stream(sse_server.model(API), context(tools=[READ]), StreamOptions(api_key="k"))
    seen: list[dict] = []
    raw = ""
    events = []
    async for event in stream:
        events.append(event)
        if event.type == "toolcall_delta":
            raw += event.delta
            seen.append(dict(event.partial.content[event.content_index].arguments))
    message = await stream.result()
    assert types(events)[:2] == ["start", "toolcall_start"] and types(events)[-2:] == ["toolcall_end", "done"]
    assert raw == '{"path": "src/main.py", "offset": 10}'
    assert any(s and s != args for s in seen), seen  # partially parsed arguments were visible
    assert any(s.get("path", "").startswith("src/") and s.get("path") != "src/main.py" for s in seen)
    assert events[-2].tool_call == ToolCall(id="toolu_01", name="read", arguments=args)
    assert message.content == [ToolCall(id="toolu_01", name="read", arguments=args)]
    assert message.stop_reason == "toolUse"


@pytest.mark.parametrize("chunk_size", [1, 7, 4096])
async def test_mixed_blocks_keep_order_and_indexes(sse_server: SSEServer, chunk_size: int) -> None:
    """Thinking, text and two tool calls arrive in order with matching content indexes."""
    turn = Turn(
        [
            Thinking("plan", signature="s1"),
            Text("I'll read both."),
            WireToolCall("read", {"path": "a.txt"}, id="toolu_a"),
            WireToolCall("read", {"path": "b.txt"}, id="toolu_b"),
        ],
        chunk_size=chunk_size,
    )
    events, message = await run(sse_server, turn, ctx=context(tools=[READ]))
    starts = [(e.type, e.content_index) for e in events if e.type.endswith("_start") and e.type != "start"]
    assert starts == [("thinking_start", 0), ("text_start", 1), ("toolcall_start", 2), ("toolcall_start", 3)]
    assert message.content == [
        ThinkingContent(thinking="plan", thinking_signature="s1"),
        TextContent(text="I'll read both."),
        ToolCall(id="toolu_a", name="read", arguments={"path": "a.txt"}),
        ToolCall(id="toolu_b", name="read", arguments={"path": "b.txt"}),
    ]
    assert message.stop_reason == "toolUse"


async def test_usage_with_cache_read_and_write_and_cost(sse_server: SSEServer) -> None:
    """Usage merges message_start and message_delta; cost uses the model's prices."""
    model = sse_server.model(API, cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    events, message = await run(
        sse_server,
        Turn([Text("ok")], usage={"input": 100, "output": 50, "cache_read": 1000, "cache_write": 200}),
        model=model,
    )
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (100, 50, 1000, 200)
    assert usage.total_tokens == 1350
    expected = calculate_cost(model, Usage(input=100, output=50, cache_read=1000, cache_write=200))
    assert usage.cost == expected
    assert usage.cost.total == pytest.approx((100 * 3 + 50 * 15 + 1000 * 0.3 + 200 * 3.75) / 1e6)


@pytest.mark.parametrize(
    ("wire", "reason"),
    [
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "toolUse"),
        ("pause_turn", "stop"),
        ("stop_sequence", "stop"),
    ],
)
async def test_stop_reason_mapping(sse_server: SSEServer, wire: str, reason: str) -> None:
    """Anthropic stop reasons map to Pi's (spec 2.5)."""
    events, message = await run(sse_server, Turn([Text("x")], stop=wire))
    assert events[-1].type == "done" and events[-1].reason == reason
    assert message.stop_reason == reason and message.raw_stop_reason == wire


@pytest.mark.parametrize("wire", ["refusal", "sensitive", "something_new"])
async def test_error_stop_reasons_end_as_error_keeping_content(sse_server: SSEServer, wire: str) -> None:
    """refusal, sensitive and unknown stop reasons end with an error event; the text is kept."""
    events, message = await run(sse_server, Turn([Text("partial answer")], stop=wire))
    assert types(events)[-2:] == ["text_end", "error"]
    assert events[-1].reason == "error"
    assert message.stop_reason == "error"
    assert wire in message.error_message or "declined" in message.error_message
    assert message.text() == "partial answer"


async def test_in_stream_error_event(sse_server: SSEServer) -> None:
    """An ``error`` SSE event (e.g. overloaded mid-stream) ends the stream with its message."""
    events, message = await run(
        sse_server, Turn([Text("so far")], error_event="Overloaded", error_type="overloaded_error")
    )
    assert events[-1].type == "error"
    assert message.error_message == "sse-test API error (overloaded_error): Overloaded"
    assert message.text() == "so far"


# ---------------------------------------------------------------------------- request body


async def test_request_headers_and_url(sse_server: SSEServer) -> None:
    """x-api-key, anthropic-version and model headers are sent to <base>/v1/messages."""
    model = sse_server.model(API, headers={"x-extra": "1"})
    await run(sse_server, Turn([Text("ok")]), model=model, headers={"x-option": "2"})
    request = sse_server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["x-extra"] == "1" and request.headers["x-option"] == "2"
    assert "authorization" not in request.headers
    assert request.json["stream"] is True and request.json["model"] == "test-model"


async def test_cache_control_on_system_last_user_message_and_last_tool(sse_server: SSEServer) -> None:
    """Ephemeral cache_control marks the system prompt, the last tool and the last user message only."""
    ctx = context(
        UserMessage(content="first"),
        AssistantMessage(content=[TextContent(text="reply")], api=API, provider="sse-test", model="test-model"),
        UserMessage(content=[TextContent(text="second"), TextContent(text="third")]),
        tools=[READ, Tool(name="ls", description="List", parameters={"type": "object", "properties": {}})],
    )
    await run(sse_server, Turn([Text("ok")]), ctx=ctx)
    body = sse_server.requests[0].json
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "first"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "reply"}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "second"},
                {"type": "text", "text": "third", "cache_control": {"type": "ephemeral"}},
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "read", "description": "Read a file", "input_schema": READ.parameters},
        {
            "name": "ls",
            "description": "List",
            "input_schema": {"type": "object", "properties": {}},
            "cache_control": {"type": "ephemeral"},
        },
    ]


async def test_cache_retention_none_sends_no_cache_control(sse_server: SSEServer) -> None:
    """cache_retention="none" disables prompt caching markers."""
    await run(sse_server, Turn([Text("ok")]), cache_retention="none")
    assert "cache_control" not in str(sse_server.requests[0].json)


async def test_budget_thinking_for_older_reasoning_models(sse_server: SSEServer) -> None:
    """Pre-4.6 reasoning models get budget_tokens; max_tokens = min(base + budget, model max)."""
    model = sse_server.model(API, id="claude-sonnet-4-5", reasoning=True, max_tokens=64_000)
    await run(sse_server, Turn([Text("ok")]), model=model, reasoning="medium")
    body = sse_server.requests[0].json
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
    assert body["max_tokens"] == 32_000 + 8192
    assert "interleaved-thinking-2025-05-14" in sse_server.requests[0].headers["anthropic-beta"]

    await run(sse_server, Turn([Text("ok")]), model=model, reasoning="high", thinking_budgets={"high": 20_000})
    assert sse_server.requests[1].json["thinking"] == {"type": "enabled", "budget_tokens": 20_000, "display": "summarized"}
    assert sse_server.requests[1].json["max_tokens"] == 52_000

    small = sse_server.model(API, id="claude-3-7-sonnet-latest", reasoning=True, max_tokens=10_000)
    await run(sse_server, Turn([Text("ok")]), model=small, reasoning="minimal")
    assert sse_server.requests[2].json["thinking"] == {"type": "enabled", "budget_tokens": 1024, "display": "summarized"}
    assert sse_server.requests[2].json["max_tokens"] == 10_000


@pytest.mark.parametrize(
    ("model_id", "level", "effort"),
    [
        ("claude-opus-4-6", "minimal", "low"),
        ("claude-opus-4-6", "low", "low"),
        ("claude-opus-4-6", "medium", "medium"),
        ("claude-opus-4-6", "high", "high"),
        ("claude-opus-4-6", "xhigh", "max"),
        ("claude-sonnet-4-6", "xhigh", "high"),
    ],
)
async def test_adaptive_thinking_effort_for_4_6_models(
    sse_server: SSEServer, model_id: str, level: str, effort: str
) -> None:
    """Opus/Sonnet 4.6 use adaptive thinking with an effort level."""
    model = sse_server.model(API, id=model_id, reasoning=True, max_tokens=128_000)
    await run(sse_server, Turn([Text("ok")]), model=model, reasoning=level, temperature=0.5)
    body = sse_server.requests[0].json
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": effort}
    assert body["max_tokens"] == 32_000
    assert "temperature" not in body  # not allowed with thinking


async def test_thinking_off_and_non_reasoning_models(sse_server: SSEServer) -> None:
    """Reasoning models without a level get thinking disabled; other models get no thinking key."""
    await run(sse_server, Turn([Text("ok")]), model=sse_server.model(API, reasoning=True), temperature=0.2)
    assert sse_server.requests[0].json["thinking"] == {"type": "disabled"}
    assert sse_server.requests[0].json["temperature"] == 0.2
    await run(sse_server, Turn([Text("ok")]), model=sse_server.model(API), reasoning="high")
    assert "thinking" not in sse_server.requests[1].json


async def test_images_in_user_and_tool_result_content(sse_server: SSEServer) -> None:
    """Images become base64 image blocks, in user messages and inside tool_result content."""
    png = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
    call = ToolCall(id="toolu_1", name="read", arguments={"path": "x.png"})
    ctx = context(
        UserMessage(content=[TextContent(text="look"), png]),
        AssistantMessage(content=[call], api=API, provider="sse-test", model="test-model", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="toolu_1", tool_name="read", content=[TextContent(text="Read image"), png]),
        tools=[READ],
    )
    model = sse_server.model(API, input=["text", "image"])
    await run(sse_server, Turn([Text("ok")]), ctx=ctx, model=model)
    messages = sse_server.requests[0].json["messages"]
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert messages[0] == {"role": "user", "content": [{"type": "text", "text": "look"}, image]}
    assert messages[1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "x.png"}}],
    }
    assert messages[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [{"type": "text", "text": "Read image"}, image],
                "cache_control": {"type": "ephemeral"},
            }
        ],
    }


async def test_replay_same_model_thinking_and_merged_tool_results(sse_server: SSEServer) -> None:
    """Same-model thinking replays with its signature (redacted as redacted_thinking); tool results share one user turn."""
    assistant = AssistantMessage(
        content=[
            ThinkingContent(thinking="hmm", thinking_signature="sig1"),
            ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="blob", redacted=True),
            ToolCall(id="toolu_a", name="read", arguments={"path": "a"}),
            ToolCall(id="toolu_b", name="read", arguments={"path": "b"}),
        ],
        api=API,
        provider="sse-test",
        model="test-model",
        stop_reason="toolUse",
    )
    ctx = context(
        UserMessage(content="go"),
        assistant,
        ToolResultMessage(tool_call_id="toolu_a", tool_name="read", content=[TextContent(text="A")]),
        ToolResultMessage(tool_call_id="toolu_b", tool_name="read", content=[TextContent(text="B")], is_error=True),
        tools=[READ],
    )
    await run(sse_server, Turn([Text("ok")]), ctx=ctx)
    messages = sse_server.requests[0].json["messages"]
    assert messages[1]["content"][:2] == [
        {"type": "thinking", "thinking": "hmm", "signature": "sig1"},
        {"type": "redacted_thinking", "data": "blob"},
    ]
    assert len(messages) == 3
    assert messages[2]["role"] == "user"
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["toolu_a", "toolu_b"]
    assert messages[2]["content"][0]["content"] == "A"
    assert messages[2]["content"][1]["is_error"] is True


async def test_replay_from_another_model_sanitizes_tool_call_ids(sse_server: SSEServer) -> None:
    """Tool-call ids from another provider are rewritten to Anthropic's charset, results follow; thinking becomes text."""
    foreign = AssistantMessage(
        content=[
            ThinkingContent(thinking="other model thoughts", thinking_signature="reasoning_content"),
            ToolCall(id="call|abc.def/1", name="read", arguments={"path": "a"}),
        ],
        api="openai-completions",
        provider="openai",
        model="gpt-5",
        stop_reason="toolUse",
    )
    ctx = context(
        UserMessage(content="go"),
        foreign,
        ToolResultMessage(tool_call_id="call|abc.def/1", tool_name="read", content=[TextContent(text="A")]),
        tools=[READ],
    )
    await run(sse_server, Turn([Text("ok")]), ctx=ctx)
    messages = sse_server.requests[0].json["messages"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "other model thoughts"},
        {"type": "tool_use", "id": "call_abc_def_1", "name": "read", "input": {"path": "a"}},
    ]
    assert messages[2]["content"][0]["tool_use_id"] == "call_abc_def_1"


def test_normalize_tool_call_id() -> None:
    """Ids keep [a-zA-Z0-9_-] and at most 64 characters."""
    assert anthropic.normalize_tool_call_id("toolu_01-AB") == "toolu_01-AB"
    assert anthropic.normalize_tool_call_id("a|b.c d") == "a_b_c_d"
    assert len(anthropic.normalize_tool_call_id("x" * 100)) == 64
