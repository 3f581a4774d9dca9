"""The openai-completions provider against a real local SSE server."""

from __future__ import annotations

import pytest

from pi_coder.ai.events import AssistantMessageEvent
from pi_coder.ai.models import calculate_cost
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.providers import openai_completions
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
from tests.support.sse_server import SSEServer, Text, Thinking, Turn
from tests.support.sse_server import ToolCall as WireToolCall

API = "openai-completions"
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
    options.setdefault("api_key", "sk-test")
    stream = openai_completions.stream(model, ctx or context(), StreamOptions(**options))
    events = [event async for event in stream]
    return events, await stream.result()


def types(events: list[AssistantMessageEvent]) -> list[str]:
    return [e.type for e in events]


def sse(*chunks: str) -> bytes:
    return "".join(f"data: {c}\n\n" for c in chunks).encode()


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> str:
    import json

    body = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}
    body.update(extra)
    return json.dumps(body)


@pytest.mark.parametrize("chunk_size", [1, 7, 4096])
async def test_text_response_events_and_final_message(sse_server: SSEServer, chunk_size: int) -> None:
    """Content deltas become one text block; finish_reason stop gives done(stop)."""
    text = "Hello, wörld — 日本 🎉!"
    events, message = await run(
        sse_server, Turn([Text(text)], usage={"input": 12, "output": 9}, chunk_size=chunk_size, delta_chars=5)
    )
    assert types(events) == ["start", "text_start"] + ["text_delta"] * 4 + ["text_end", "done"]
    assert events[-2].content == text
    assert events[0].partial.content is message.content and events[-1].message is message
    assert message.content == [TextContent(text=text)]
    assert message.stop_reason == "stop" and message.raw_stop_reason == "stop"
    assert message.response_id == "chatcmpl-test"
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (12, 9, 21)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "reasoning_text"])
async def test_reasoning_deltas_become_thinking(sse_server: SSEServer, field: str) -> None:
    """reasoning_content / reasoning deltas build a thinking block whose signature names the field."""
    turn = Turn([Thinking("Consider options."), Text("Done.")], reasoning_field=field, delta_chars=6)
    events, message = await run(sse_server, turn)
    assert types(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "done",
    ]
    assert message.content == [
        ThinkingContent(thinking="Consider options.", thinking_signature=field),
        TextContent(text="Done."),
    ]


@pytest.mark.parametrize("chunk_size", [1, 7, 4096])
async def test_tool_calls_by_index(sse_server: SSEServer, chunk_size: int) -> None:
    """Each tool call index becomes its own block; arguments are parsed JSON; finish tool_calls -> toolUse."""
    turn = Turn(
        [
            Text("Reading."),
            WireToolCall("read", {"path": "a.txt"}, id="call_a"),
            WireToolCall("read", {"path": "b.txt", "limit": 5}, id="call_b"),
        ],
        chunk_size=chunk_size,
    )
    events, message = await run(sse_server, turn, ctx=context(tools=[READ]))
    assert [e.type for e in events if not e.type.endswith("delta")] == [
        "start",
        "text_start",
        "text_end",
        "toolcall_start",
        "toolcall_end",
        "toolcall_start",
        "toolcall_end",
        "done",
    ]
    assert message.content == [
        TextContent(text="Reading."),
        ToolCall(id="call_a", name="read", arguments={"path": "a.txt"}),
        ToolCall(id="call_b", name="read", arguments={"path": "b.txt", "limit": 5}),
    ]
    assert message.stop_reason == "toolUse"


async def test_tool_call_arguments_parse_while_streaming(sse_server: SSEServer) -> None:
    """Subscribers see best-effort arguments on toolcall_delta before the call is complete."""
    args = {"path": "src/main.py", "offset": 10}
    sse_server.enqueue(Turn([WireToolCall("read", args, id="call_1")], delta_chars=3, delay=0.02))
    stream = openai_completions.stream(sse_server.model(API), context(tools=[READ]), StreamOptions(api_key="k"))
    seen = []
    async for event in stream:
        if event.type == "toolcall_delta":
            seen.append(dict(event.partial.content[event.content_index].arguments))
    message = await stream.result()
    assert any(s.get("path", "").startswith("src/") and s.get("path") != "src/main.py" for s in seen), seen
    assert message.content == [ToolCall(id="call_1", name="read", arguments=args)]


async def test_new_id_on_same_index_starts_a_new_block_and_later_fields_update(sse_server: SSEServer) -> None:
    """A new non-empty id starts a new block even on the same index; id/name arriving later update the block."""
    body = sse(
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "read", "arguments": '{"pa'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "a"}'}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "call_2", "function": {"name": "", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "ls", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"name": "read", "arguments": '{"path": "c"}'}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_3"}]}),
        chunk({}, "tool_calls"),
        "[DONE]",
    )
    events, message = await run(sse_server, Turn(raw=body), ctx=context(tools=[READ]))
    assert message.content == [
        ToolCall(id="call_1", name="read", arguments={"path": "a"}),
        ToolCall(id="call_2", name="ls", arguments={}),
        ToolCall(id="call_3", name="read", arguments={"path": "c"}),
    ]
    assert [e.content_index for e in events if e.type == "toolcall_end"] == [0, 1, 2]


async def test_missing_tool_call_id_gets_generated(sse_server: SSEServer) -> None:
    """Servers that omit ids still produce callable tool calls."""
    body = sse(
        chunk({"tool_calls": [{"index": 0, "function": {"name": "read", "arguments": '{"path": "x"}'}}]}),
        chunk({}, "tool_calls"),
        "[DONE]",
    )
    _, message = await run(sse_server, Turn(raw=body), ctx=context(tools=[READ]))
    [call] = message.tool_calls()
    assert call.id.startswith("call_") and len(call.id) > 5
    assert call.arguments == {"path": "x"}


async def test_usage_with_cached_tokens_and_cost(sse_server: SSEServer) -> None:
    """cached_tokens count as cacheRead and are taken out of input; cost uses the model's prices."""
    model = sse_server.model(API, cost=ModelCost(input=2, output=8, cache_read=0.5))
    _, message = await run(
        sse_server,
        Turn([Text("ok")], usage={"input": 300, "cache_read": 700, "output": 40, "reasoning": 10}),
        model=model,
    )
    usage = message.usage
    assert (usage.input, usage.cache_read, usage.output, usage.cache_write) == (300, 700, 40, 0)
    assert usage.total_tokens == 1040 and usage.reasoning == 10
    assert usage.cost == calculate_cost(model, Usage(input=300, output=40, cache_read=700))
    assert usage.cost.total == pytest.approx((300 * 2 + 40 * 8 + 700 * 0.5) / 1e6)


@pytest.mark.parametrize(
    ("finish", "reason"),
    [("stop", "stop"), ("end", "stop"), ("length", "length"), ("tool_calls", "toolUse"), ("function_call", "toolUse")],
)
async def test_finish_reason_mapping(sse_server: SSEServer, finish: str, reason: str) -> None:
    """Chat Completions finish reasons map to Pi's (spec 2.5)."""
    events, message = await run(sse_server, Turn([Text("x")], stop=finish))
    assert events[-1].type == "done" and events[-1].reason == reason
    assert message.stop_reason == reason


async def test_null_finish_reason_with_done_marker_is_stop(sse_server: SSEServer) -> None:
    """A stream that ends with [DONE] but never sets finish_reason counts as stop."""
    _, message = await run(sse_server, Turn(raw=sse(chunk({"content": "hi"}), "[DONE]")))
    assert message.stop_reason == "stop" and message.text() == "hi"


async def test_content_filter_is_an_error_keeping_text(sse_server: SSEServer) -> None:
    """content_filter ends with an error event; the text so far is kept."""
    events, message = await run(sse_server, Turn([Text("partial")], stop="content_filter"))
    assert types(events)[-2:] == ["text_end", "error"]
    assert message.stop_reason == "error" and "content filter" in message.error_message
    assert message.text() == "partial"


async def test_stream_without_end_is_an_error(sse_server: SSEServer) -> None:
    """No finish_reason and no [DONE]: the response was cut short, which is an error."""
    _, message = await run(sse_server, Turn(raw=sse(chunk({"content": "hal"}))))
    assert message.stop_reason == "error"
    assert "ended before the response was complete" in message.error_message
    assert message.text() == "hal"


async def test_in_stream_error_chunk(sse_server: SSEServer) -> None:
    """An error object in the stream ends it with that message."""
    _, message = await run(sse_server, Turn([Text("so far")], error_event="model crashed"))
    assert message.stop_reason == "error"
    assert message.error_message == "sse-test API error: model crashed"
    assert message.text() == "so far"


# ---------------------------------------------------------------------------- request body


async def test_request_basics(sse_server: SSEServer) -> None:
    """POST <base>/chat/completions with Bearer auth, stream + include_usage, tools, max_tokens."""
    await run(sse_server, Turn([Text("ok")]), ctx=context(tools=[READ]), model=sse_server.model(API, max_tokens=4096))
    request = sse_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.json
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"] == [
        {"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": READ.parameters}}
    ]
    assert body["max_tokens"] == 4096
    assert "store" not in body and "reasoning_effort" not in body


async def test_keyless_custom_server_sends_no_authorization(sse_server: SSEServer) -> None:
    """A custom provider without a key is called without credentials."""
    await run(sse_server, Turn([Text("ok")]), api_key=None)
    assert "authorization" not in sse_server.requests[0].headers


async def test_openai_defaults_for_api_openai_com(sse_server: SSEServer) -> None:
    """Models on api.openai.com default to developer role, store:false and max_completion_tokens."""
    model = sse_server.model(API, id="gpt-5", reasoning=True, base_url=sse_server.openai_base_url)
    compat = openai_completions.resolve_compat(model.model_copy(update={"base_url": "https://api.openai.com/v1"}))
    assert compat["supportsDeveloperRole"] and compat["supportsStore"]
    assert compat["maxTokensField"] == "max_completion_tokens"


@pytest.mark.parametrize(
    ("compat", "expect"),
    [
        (
            {"supportsDeveloperRole": True, "supportsStore": True, "maxTokensField": "max_completion_tokens"},
            {"role": "developer", "store": False, "field": "max_completion_tokens", "effort": "high", "usage": True},
        ),
        (
            {"supports_developer_role": False, "supports_store": False, "max_tokens_field": "max_tokens"},
            {"role": "system", "store": None, "field": "max_tokens", "effort": "high", "usage": True},
        ),
        (
            {"supportsReasoningEffort": False, "supportsUsageInStreaming": False},
            {"role": "system", "store": None, "field": "max_tokens", "effort": None, "usage": False},
        ),
    ],
)
async def test_compat_switches(sse_server: SSEServer, compat: dict, expect: dict) -> None:
    """model.compat picks the system role, store, the max-tokens field, reasoning_effort and usage streaming."""
    model = sse_server.model(API, reasoning=True, max_tokens=1000, compat=compat)
    await run(sse_server, Turn([Text("ok")]), model=model, reasoning="high")
    body = sse_server.requests[0].json
    assert body["messages"][0]["role"] == expect["role"]
    assert body.get("store") is expect["store"]
    assert body[expect["field"]] == 1000
    other = "max_tokens" if expect["field"] == "max_completion_tokens" else "max_completion_tokens"
    assert other not in body
    assert body.get("reasoning_effort") == expect["effort"]
    assert ("stream_options" in body) is expect["usage"]


@pytest.mark.parametrize(("level", "effort"), [("minimal", "minimal"), ("low", "low"), ("medium", "medium"), ("xhigh", "high")])
async def test_reasoning_effort_from_options(sse_server: SSEServer, level: str, effort: str) -> None:
    """reasoning_effort follows options.reasoning (xhigh clamps to high unless the model supports it)."""
    model = sse_server.model(API, id="gpt-5", reasoning=True)
    await run(sse_server, Turn([Text("ok")]), model=model, reasoning=level)
    assert sse_server.requests[0].json["reasoning_effort"] == effort


async def test_no_reasoning_effort_without_level_or_for_non_reasoning_models(sse_server: SSEServer) -> None:
    """No level, or a model without reasoning, sends no reasoning_effort."""
    await run(sse_server, Turn([Text("ok")]), model=sse_server.model(API, reasoning=True))
    await run(sse_server, Turn([Text("ok")]), model=sse_server.model(API), reasoning="high")
    assert all("reasoning_effort" not in r.json for r in sse_server.requests)


async def test_images_tool_results_and_assistant_replay(sse_server: SSEServer) -> None:
    """Images are data URLs; tool results are role "tool" messages with their images in a following user message."""
    png = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
    url = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    assistant = AssistantMessage(
        content=[
            ThinkingContent(thinking="think", thinking_signature="reasoning_content"),
            TextContent(text="Let me look."),
            ToolCall(id="call_1", name="read", arguments={"path": "x.png"}),
            ToolCall(id="call_2", name="read", arguments={"path": "y.txt"}),
        ],
        api=API,
        provider="sse-test",
        model="test-model",
        stop_reason="toolUse",
    )
    ctx = context(
        UserMessage(content=[TextContent(text="what is this"), png]),
        assistant,
        ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="Read image"), png]),
        ToolResultMessage(tool_call_id="call_2", tool_name="read", content=[TextContent(text="text")]),
        UserMessage(content="thanks"),
        tools=[READ],
    )
    model = sse_server.model(API, input=["text", "image"])
    await run(sse_server, Turn([Text("ok")]), ctx=ctx, model=model)
    messages = sse_server.requests[0].json["messages"]
    assert messages[1] == {"role": "user", "content": [{"type": "text", "text": "what is this"}, url]}
    assert messages[2] == {
        "role": "assistant",
        "content": "Let me look.",
        "reasoning_content": "think",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path":"x.png"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": '{"path":"y.txt"}'}},
        ],
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "Read image"}
    assert messages[4] == {"role": "tool", "tool_call_id": "call_2", "content": "text"}
    assert messages[5] == {
        "role": "user",
        "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, url],
    }
    assert messages[6] == {"role": "user", "content": "thanks"}


async def test_images_are_omitted_for_text_only_models(sse_server: SSEServer) -> None:
    """A text-only model gets a placeholder instead of image data."""
    png = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
    await run(sse_server, Turn([Text("ok")]), ctx=context(UserMessage(content=[TextContent(text="see"), png])))
    body = sse_server.requests[0].json
    assert "iVBORw0KGgo" not in str(body)
    assert "image omitted" in body["messages"][1]["content"]


async def test_tool_result_name_and_assistant_bridge_compat(sse_server: SSEServer) -> None:
    """requiresToolResultName adds name; requiresAssistantAfterToolResult bridges tool -> user."""
    call = ToolCall(id="call_1", name="read", arguments={})
    ctx = context(
        UserMessage(content="go"),
        AssistantMessage(content=[call], api=API, provider="sse-test", model="test-model", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="r")]),
        UserMessage(content="next"),
        tools=[READ],
    )
    model = sse_server.model(API, compat={"requiresToolResultName": True, "requiresAssistantAfterToolResult": True})
    await run(sse_server, Turn([Text("ok")]), ctx=ctx, model=model)
    messages = sse_server.requests[0].json["messages"]
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "r", "name": "read"}
    assert messages[4]["role"] == "assistant"
    assert messages[5] == {"role": "user", "content": "next"}


def test_normalize_tool_call_id() -> None:
    """OpenAI ids keep [a-zA-Z0-9_-], drop a Responses-style ``|`` suffix and stay within 40 characters."""
    assert openai_completions.normalize_tool_call_id("call_abc|fc_123") == "call_abc"
    assert openai_completions.normalize_tool_call_id("toolu.01") == "toolu_01"
    assert len(openai_completions.normalize_tool_call_id("x" * 80)) == 40


async def test_models_toml_provider_two_turn_script(sse_server: SSEServer, tmp_path) -> None:
    """A models.toml provider dispatches to this module; a scripted tool call then answer round-trips."""
    from pi_coder.ai.models import create_models

    toml = tmp_path / "models.toml"
    toml.write_text(
        f'[providers.local]\napi = "openai-completions"\nbase_url = "{sse_server.openai_base_url}"\n'
        'api_key = "none"\nmodels = [{ id = "qwen2.5-coder", context_window = 32768, max_tokens = 8192 }]\n'
    )
    models = create_models(models_toml=toml, include_builtin=False, env={})
    model = models.get_model("local", "qwen2.5-coder")
    sse_server.enqueue(
        Turn([WireToolCall("read", {"path": "a.txt"}, id="call_1")]),
        Turn([Text("The file says hi.")]),
    )
    first = await models.stream_simple(model, context(tools=[READ])).result()
    assert first.stop_reason == "toolUse" and first.tool_calls()[0].arguments == {"path": "a.txt"}
    ctx = context(
        UserMessage(content="hi"),
        first,
        ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="hi")]),
        tools=[READ],
    )
    second = await models.stream_simple(model, ctx).result()
    assert second.text() == "The file says hi."
    assert sse_server.requests[1].json["messages"][2]["tool_calls"][0]["id"] == "call_1"
    assert sse_server.requests[1].json["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "hi"}
    assert sse_server.requests[0].headers["authorization"] == "Bearer none"
