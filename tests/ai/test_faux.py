"""The faux provider (spec 2.8) and the streaming-protocol scenarios of spec 4.6."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pi_coder.ai import (
    AbortController,
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    DoneEvent,
    Model,
    StreamOptions,
    TextContent,
    TextDeltaEvent,
    TextStartEvent,
    ToolCall,
    Usage,
    UserMessage,
    create_models,
    faux_message,
    faux_provider,
    faux_text,
    faux_thinking,
    faux_tool_call,
)
from pi_coder.ai.providers.faux import FauxState

CTX = Context(messages=[UserMessage(content="hello")])
TIMEOUT = 10


async def collect(stream: AssistantMessageEventStream) -> list[Any]:
    async def run() -> list[Any]:
        return [event async for event in stream]

    return await asyncio.wait_for(run(), TIMEOUT)


def types(events: list[Any]) -> list[str]:
    return [e.type for e in events]


# ---------------------------------------------------------------------------- C95


async def test_c95_event_stream_terminal_semantics() -> None:
    """Iteration stops at the terminal event; result() is its message; later pushes are dropped."""
    partial = AssistantMessage(stop_reason="pending")
    final = AssistantMessage(content=[TextContent(text="hi")])
    e1 = TextStartEvent(content_index=0, partial=partial)
    e2 = TextDeltaEvent(content_index=0, delta="hi", partial=partial)
    done = DoneEvent(reason="stop", message=final)
    e3 = TextDeltaEvent(content_index=0, delta="late", partial=partial)
    stream = AssistantMessageEventStream()
    stream.push(e1)
    stream.push(e2)
    stream.push(done)
    stream.push(e3)
    seen = await collect(stream)
    assert seen == [e1, e2, done]
    assert seen[2] is done
    assert await stream.result() is final

    ended = AssistantMessageEventStream()
    ended.push(e1)
    ended.end(final)
    assert await collect(ended) == [e1]
    assert await ended.result() is final


async def test_c95_consumer_waiting_before_pushes_sees_every_event() -> None:
    stream = AssistantMessageEventStream()
    consumer = asyncio.ensure_future(collect(stream))
    await asyncio.sleep(0)
    message = AssistantMessage()
    stream.push(DoneEvent(reason="stop", message=message))
    assert types(await consumer) == ["done"]


# ---------------------------------------------------------------------------- C98


async def test_c98_provider_failure_encoding_over_a_real_socket(tmp_path: Path) -> None:
    """A connection dropped after one text delta ends as start, text_start, text_delta, error."""
    pytest.importorskip("pi_coder.ai.providers.openai_completions")
    from pi_coder.ai import _http

    release = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        await reader.readexactly(length)
        chunk = {"id": "c1", "model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]}
        body = f"data: {json.dumps(chunk)}\n\n".encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            + f"{len(body):x}\r\n".encode()
            + body
            + b"\r\n"
        )
        await writer.drain()
        await release.wait()
        writer.transport.abort()  # the socket closes mid-stream

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        for abort_first in (False, True):
            release.clear()
            models = create_models(
                env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"},
                models_toml=tmp_path / "models.toml",
            )
            model = models.get_model("openai", "gpt-4o-mini")
            assert model is not None
            model = model.model_copy(update={"api": "openai-completions"})  # this server speaks Chat Completions
            controller = AbortController()
            stream = models.stream(model, CTX, StreamOptions(signal=controller.signal, max_retries=0))
            events: list[Any] = []
            async with asyncio.timeout(TIMEOUT):
                async for event in stream:
                    events.append(event)
                    if event.type == "text_delta":
                        if abort_first:
                            controller.abort()
                        release.set()
            assert types(events) == ["start", "text_start", "text_delta", "error"]
            error = events[-1]
            assert error.reason == ("aborted" if abort_first else "error")
            assert error.error.stop_reason == error.reason
            assert error.error.error_message
            assert error.error.text() == "Hel"
    finally:
        server.close()
        await server.wait_closed()
        await _http.aclose_clients()


# ---------------------------------------------------------------------------- C99


async def test_c99_faux_provider_contract() -> None:
    """start is pending and empty; text arrives in deltas; tool args stay {} until the end;
    an exhausted script errors; a pre-aborted call gives only error{aborted}; callCount counts all."""
    text = "The quick brown fox jumps over the lazy dog, twice over."
    faux = faux_provider([faux_message(text, faux_tool_call("echo", {"value": "x" * 40}, id="c1"))])
    stream = faux.stream(faux.model, CTX, None)
    events = await collect(stream)
    assert events[0].type == "start"
    assert events[0].partial.stop_reason == "pending" and events[0].partial.content == []
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert len(deltas) >= 1 and "".join(deltas) == text
    for event in events:
        if event.type in ("toolcall_start", "toolcall_delta"):
            assert event.partial.content[event.content_index].arguments == {}
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call.arguments == {"value": "x" * 40}
    assert events[-1].type == "done" and events[-1].reason == "toolUse"

    exhausted = await collect(faux.stream(faux.model, CTX, None))
    assert types(exhausted) == ["error"]
    assert exhausted[0].error.error_message == "No more faux responses queued"

    controller = AbortController()
    controller.abort()
    aborted = await collect(faux.stream(faux.model, CTX, StreamOptions(signal=controller.signal)))
    assert types(aborted) == ["error"]
    assert aborted[0].reason == "aborted"
    assert aborted[0].error.stop_reason == "aborted"
    assert aborted[0].error.error_message == "Request was aborted"
    assert faux.state.call_count == 3


# ---------------------------------------------------------------------------- spec 2.8 details


async def test_blocks_stream_in_order_with_matching_content_indexes() -> None:
    """Grammar: start (thinking|text|toolcall)_start/delta*/end per block, then done."""
    message = faux_message(
        faux_thinking("I should greet the user warmly.", signature="sig-1"),
        faux_text("Hello!", signature="t-1"),
        faux_tool_call("read", {"path": "a.py"}, id="c9"),
        usage=Usage(input=10, output=5, total_tokens=15),
    )
    faux = faux_provider([message])
    events = await collect(faux.stream(faux.model, CTX))
    kinds = types(events)
    assert kinds[0] == "start" and kinds[-1] == "done"
    compact = [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1]]
    assert compact == [
        "start", "thinking_start", "thinking_delta", "thinking_end", "text_start", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_end", "done",
    ]  # fmt: skip
    prefix = {"thinking": 0, "text": 1, "toolcall": 2}
    for event in events[1:-1]:
        assert event.content_index == prefix[event.type.split("_")[0]]
        assert len(event.partial.content) == event.content_index + 1
    thinking_end = next(e for e in events if e.type == "thinking_end")
    assert thinking_end.content == "I should greet the user warmly."
    assert thinking_end.partial.content[0].thinking_signature == "sig-1"
    assert next(e for e in events if e.type == "text_end").content == "Hello!"
    final = events[-1].message
    assert final.stop_reason == "toolUse"
    assert [b.to_json_dict() for b in final.content] == [b.to_json_dict() for b in message.content]
    assert (final.api, final.provider, final.model) == ("faux", "faux", "faux-1")
    assert final.usage.input == 10 and final.usage.output == 5 and final.usage.total_tokens == 15
    assert await faux.stream(faux.model, CTX).result() != final  # the script is used up


async def test_deltas_are_three_to_five_tokens_of_four_characters() -> None:
    text = "abcdefghijklmnopqrstuvwxyz" * 4
    faux = faux_provider([faux_message(text)])
    deltas = [e.delta for e in await collect(faux.stream(faux.model, CTX)) if e.type == "text_delta"]
    assert "".join(deltas) == text
    assert all(12 <= len(d) <= 20 for d in deltas[:-1])
    assert 1 <= len(deltas[-1]) <= 20


async def test_tool_arguments_stream_as_json_text() -> None:
    args = {"path": "src/main.py", "edits": [{"old": "a\nb", "new": "\u00e9"}], "n": 3}
    faux = faux_provider([faux_message(faux_tool_call("edit", args, id="c1"))])
    events = await collect(faux.stream(faux.model, CTX))
    raw = "".join(e.delta for e in events if e.type == "toolcall_delta")
    assert json.loads(raw) == args
    start = next(e for e in events if e.type == "toolcall_start")
    block = start.partial.content[0]
    assert (block.id, block.name, block.arguments) == ("c1", "edit", {})
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.partial.content[0] is end.tool_call


async def test_every_partial_is_a_fresh_shallow_copy() -> None:
    """Earlier partials keep their content when later deltas arrive."""
    faux = faux_provider([faux_message("x" * 100)])
    events = await collect(faux.stream(faux.model, CTX))
    partials = [e.partial for e in events if hasattr(e, "partial")]
    assert len({id(p) for p in partials}) == len(partials)
    assert len({id(p.content) for p in partials}) == len(partials)
    texts = [p.content[0].text if p.content else None for p in partials]
    deltas = [e for e in events if e.type == "text_delta"]
    running = ""
    for event in deltas:
        running += event.delta
        assert event.partial.content[0].text == running
    assert texts[0] is None and texts[1] == ""
    assert events[-1].message is not partials[-1]
    assert all(p.stop_reason == "pending" for p in partials)


async def test_abort_between_chunks_keeps_the_content_so_far() -> None:
    faux = faux_provider([faux_message("0123456789" * 20)])
    controller = AbortController()
    stream = faux.stream(faux.model, CTX, StreamOptions(signal=controller.signal))
    events: list[Any] = []
    async for event in stream:
        events.append(event)
        if event.type == "text_delta" and len(events) == 4:
            controller.abort()
    kinds = types(events)
    assert kinds[:4] == ["start", "text_start", "text_delta", "text_delta"]
    assert kinds[-1] == "error" and "done" not in kinds and "text_end" not in kinds
    error = events[-1]
    assert error.reason == "aborted"
    assert error.error.stop_reason == "aborted" and error.error.error_message == "Request was aborted"
    streamed = "".join(e.delta for e in events if e.type == "text_delta")
    assert error.error.content[0].text == streamed and 0 < len(streamed) < 200
    assert await stream.result() is error.error


async def test_pre_aborted_call_counts_but_does_not_consume_the_script() -> None:
    faux = faux_provider([faux_message("kept")])
    controller = AbortController()
    controller.abort()
    await collect(faux.stream(faux.model, CTX, StreamOptions(signal=controller.signal)))
    assert faux.state.call_count == 1 and faux.pending == 1
    assert (await faux.stream(faux.model, CTX).result()).text() == "kept"
    assert faux.state.call_count == 2


async def test_scripted_error_message_streams_content_then_error() -> None:
    scripted = faux_message("partial answer", stop_reason="error", error_message="overloaded")
    faux = faux_provider([scripted])
    events = await collect(faux.stream(faux.model, CTX))
    assert types(events)[0] == "start" and types(events)[-1] == "error"
    assert events[-1].reason == "error"
    assert events[-1].error.error_message == "overloaded" and events[-1].error.text() == "partial answer"


async def test_factories_sync_and_async_get_context_options_state_and_model() -> None:
    seen: list[tuple[Any, ...]] = []

    def sync_factory(context: Context, options: StreamOptions | None, state: FauxState, model: Model) -> AssistantMessage:
        seen.append((context, options, state.call_count, model.id))
        return faux_message(f"call {state.call_count}")

    async def async_factory(context: Context, options: StreamOptions | None, state: FauxState, model: Model) -> str:
        await asyncio.sleep(0)
        return f"async {state.call_count}: {context.messages[-1].content}"

    faux = faux_provider([sync_factory, async_factory])
    options = StreamOptions(reasoning="low")
    assert (await faux.stream(faux.model, CTX, options).result()).text() == "call 1"
    assert seen == [(CTX, options, 1, "faux-1")]
    assert (await faux.stream(faux.model, CTX).result()).text() == "async 2: hello"
    assert faux.state.contexts == [CTX, CTX]


async def test_factory_failure_becomes_an_error_event() -> None:
    def broken(*args: Any) -> AssistantMessage:
        raise RuntimeError("script bug")

    faux = faux_provider([broken])
    events = await collect(faux.stream(faux.model, CTX))
    assert types(events) == ["error"] and events[0].error.error_message == "script bug"


async def test_append_queues_more_responses() -> None:
    faux = faux_provider([])
    assert (await faux.stream(faux.model, CTX).result()).error_message == "No more faux responses queued"
    faux.append("one", faux_message("two"))
    assert faux.pending == 2
    assert (await faux.stream(faux.model, CTX).result()).text() == "one"
    assert (await faux.stream(faux.model, CTX).result()).text() == "two"


async def test_default_script_echoes_the_last_user_text() -> None:
    """faux_provider() with no script is the demo provider: it never runs out."""
    faux = faux_provider()
    context = Context(messages=[UserMessage(content="first"), UserMessage(content=[TextContent(text="second")])])
    for _ in range(3):
        result = await faux.stream(faux.model, context).result()
        assert result.text() == "You said: second"
        assert result.usage.output > 0 and result.usage.total_tokens == result.usage.input + result.usage.output
    faux.append("queued first")
    assert (await faux.stream(faux.model, context).result()).text() == "queued first"


async def test_redacted_thinking_arrives_complete() -> None:
    faux = faux_provider([faux_message(faux_thinking("[redacted]", signature="opaque", redacted=True), "ok")])
    events = await collect(faux.stream(faux.model, CTX))
    assert types(events)[:3] == ["start", "thinking_start", "thinking_end"]
    assert events[1].partial.content[0].redacted is True


async def test_scripted_messages_are_copied_per_call() -> None:
    scripted = faux_message("same")
    faux = faux_provider([scripted, scripted])
    first = await faux.stream(faux.model, CTX).result()
    second = await faux.stream(faux.model, CTX).result()
    assert first is not scripted and second is not first
    assert scripted.api == "" and first.api == "faux"


async def test_chunk_delay_slows_the_stream() -> None:
    faux = faux_provider([faux_message("x" * 48)], chunk_delay=0.02)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await faux.stream(faux.model, CTX).result()
    assert loop.time() - started >= 0.02 * 3


async def test_usage_cost_is_priced_by_the_model() -> None:
    from pi_coder.ai import ModelCost

    faux = faux_provider([faux_message("x", usage=Usage(input=1_000_000, output=1_000_000))], cost=ModelCost(input=1, output=2))
    result = await faux.stream(faux.model, CTX).result()
    assert result.usage.cost.total == pytest.approx(3.0)


def test_faux_message_defaults() -> None:
    assert faux_message("a").stop_reason == "stop"
    call = faux_tool_call("t", {"a": 1})
    assert faux_message(call).stop_reason == "toolUse"
    assert call.id.startswith("call_") and faux_tool_call("t").id != call.id
    assert isinstance(faux_message("a").content[0], TextContent)
    assert isinstance(call, ToolCall) and call.arguments == {"a": 1}


def test_faux_model_and_provider_fields() -> None:
    faux = faux_provider(name="demo", model_id="demo-2", model_name="Demo Two", reasoning=True, context_window=1000)
    model = faux.model
    assert (model.provider, model.id, model.name, model.reasoning, model.context_window) == ("demo", "demo-2", "Demo Two", True, 1000)
    assert faux.name == "demo" and faux.requires_key is False
    assert "key" not in repr(faux).lower()
