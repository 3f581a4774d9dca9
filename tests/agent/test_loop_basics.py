"""Spec agent-core 4.1: the low-level loop, basics and streaming."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_coder.agent import AgentContext, agent_loop, run_agent_loop
from pi_coder.ai.events import (
    AssistantMessageEventStream,
    DoneEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
)
from pi_coder.ai.types import SystemMessage, TextContent

from .script import AT, A, Call, Poll, Script, U, cfg, run, sigs

TEXT_TURN = ["AS", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE"]


async def test_c01_single_text_turn() -> None:
    """One prompt, one text answer: the exact events, identities, request and poll counts."""
    ctx = AgentContext(messages=[], tools=[])
    original = ctx.messages
    steer, follow = Poll(), Poll()
    u, a1 = U("Hello"), AT("Hi there!")
    fn = Script(a1)

    events, result = await run([u], ctx, cfg(get_steering_messages=steer, get_follow_up_messages=follow), fn)

    assert sigs(events) == TEXT_TURN
    assert result == [u, a1] and result[0] is u and result[1] is a1
    assert events[-1].messages is result
    assert events[2].message is u and events[3].message is u
    assert events[4].message == a1 and events[4].message is not a1
    assert events[5].message is a1
    assert events[6].message is a1 and events[6].tool_results == []
    assert fn.count == 1
    call = fn.calls[0]
    assert call.messages == [u] and call.messages[0] is u
    assert set(type(call.context).model_fields) | set(call.context.__pydantic_extra__ or {}) == {"messages"}
    assert (steer.count, follow.count) == (2, 1)
    assert ctx.messages is original and ctx.messages == []


def _partial(text: str | None) -> Any:
    return A([TextContent(text=text)] if text is not None else [], "pending")


async def test_c02_streaming_deltas_produce_message_update() -> None:
    """Every block event becomes a message_update with a copy of its partial."""
    final = AT("Hello")
    pushed: list[Any] = []

    def respond(stream: AssistantMessageEventStream, call: Call) -> None:
        p = _partial(None)
        events = [
            StartEvent(partial=p),
            TextStartEvent(content_index=0, partial=_partial("")),
            TextDeltaEvent(content_index=0, delta="Hel", partial=_partial("Hel")),
            TextDeltaEvent(content_index=0, delta="lo", partial=_partial("Hello")),
            TextEndEvent(content_index=0, content="Hello", partial=_partial("Hello")),
            DoneEvent(reason="stop", message=final),
        ]
        pushed.extend(events)
        for e in events:
            stream.push(e)

    ctx = AgentContext(messages=[], tools=[])
    events, result = await run([U("hi")], ctx, cfg(), Script(respond))

    assert sigs(events) == [
        "AS", "TS", "MS:user", "ME:user", "MS:assistant",
        "MU:text_start", "MU:text_delta", "MU:text_delta", "MU:text_end",
        "ME:assistant", "TE", "AE",
    ]  # fmt: skip
    start = events[4]
    assert start.message == pushed[0].partial and start.message is not pushed[0].partial
    for update, provider_event in zip(events[5:9], pushed[1:5], strict=True):
        assert update.assistant_message_event is provider_event
        assert update.message == provider_event.partial and update.message is not provider_event.partial
    assert events[9].message is final and events[10].message is final
    assert result[-1] is final


async def test_one_transcript_slot_replaced_in_place() -> None:
    """During streaming the working context holds the current partial in one slot."""
    seen: list[list[Any]] = []
    final = AT("xy")

    async def respond(stream: AssistantMessageEventStream, call: Call) -> None:
        p1, p2 = _partial(""), _partial("x")
        stream.push(StartEvent(partial=p1))
        stream.push(TextStartEvent(content_index=0, partial=p1))
        stream.push(TextDeltaEvent(content_index=0, delta="x", partial=p2))
        stream.push(DoneEvent(reason="stop", message=final))

    ctx = AgentContext(messages=[], tools=[])
    working: list[Any] = []

    def transform(messages: list[Any], signal: Any) -> list[Any]:
        working.append(messages)
        return messages

    async def emit(event: Any) -> None:
        if working:
            seen.append(list(working[0]))

    await run_agent_loop([U("hi")], ctx, cfg(transform_context=transform), emit, None, Script(respond))
    lengths = {len(s) for s in seen}
    assert lengths == {2}, "user + one assistant slot"
    assert seen[-1][-1] is final


async def test_c04_block_events_before_start_are_ignored() -> None:
    """Without start, block events give no update; start/end are synthesised around the final."""
    final = AT("x")

    def respond(stream: AssistantMessageEventStream, call: Call) -> None:
        stream.push(TextDeltaEvent(content_index=0, delta="x", partial=_partial("x")))
        stream.push(DoneEvent(reason="stop", message=final))

    events, result = await run([U("hi")], AgentContext(messages=[], tools=[]), cfg(), Script(respond))
    assert sigs(events) == TEXT_TURN
    assert events[4].message == final and events[5].message is final


async def test_c05_provider_context_is_transcript_only() -> None:
    """The stream gets a context with only messages; a prompt system message is passed through as is."""
    sys_message = SystemMessage(content="Transcript prompt", tools_added=[], timestamp=1)
    u, a = U("Hello"), AT("done")
    fn = Script(a)
    events, result = await run([sys_message, u], AgentContext(messages=[], tools=[]), cfg(), fn)
    call = fn.calls[0]
    assert set(type(call.context).model_fields) | set(call.context.__pydantic_extra__ or {}) == {"messages"}
    assert call.messages[0] is sys_message
    assert sigs(events) == [
        "AS", "TS", "MS:system", "ME:system", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE",
    ]  # fmt: skip
    assert result == [sys_message, u, a] and result[0] is sys_message


async def test_c07_transform_context_runs_before_convert_to_llm() -> None:
    """transform_context sees the whole transcript and the signal; the converter sees its output."""
    from pi_coder.agent import AbortController

    u1, at1, u2, at2, u3 = U("1"), AT("r1"), U("2"), AT("r2"), U("3")
    ctx = AgentContext(messages=[u1, at1, u2, at2], tools=[])
    received: dict[str, Any] = {}

    async def transform(messages: list[Any], signal: Any) -> list[Any]:
        received["transform"] = list(messages)
        received["signal"] = signal
        return messages[-2:]

    def convert(messages: list[Any]) -> list[Any]:
        received["convert"] = list(messages)
        return messages

    controller = AbortController()
    a = AT("ok")
    fn = Script(a)
    events, result = await run([u3], ctx, cfg(transform_context=transform, convert_to_llm=convert), fn, controller.signal)
    assert len(received["transform"]) == 5
    assert received["signal"] is controller.signal
    assert received["convert"] == [at2, u3]
    assert len(fn.calls[0].messages) == 2
    assert result == [u3, a]
    assert ctx.messages == [u1, at1, u2, at2]


async def test_stream_surfaces_hook_exception_to_consumer() -> None:
    """[port] A raising converter fails the raw stream: iteration and result() raise, no hang."""

    def convert(messages: list[Any]) -> list[Any]:
        raise RuntimeError("converter broke")

    stream = agent_loop([U("hi")], AgentContext(messages=[]), cfg(convert_to_llm=convert), None, Script())
    seen = []
    with pytest.raises(RuntimeError, match="converter broke"):
        async for event in stream:
            seen.append(event.type)
    assert seen == ["agent_start", "turn_start", "message_start", "message_end"]
    with pytest.raises(RuntimeError, match="converter broke"):
        await asyncio.wait_for(stream.result(), 2)


async def test_stream_fn_may_return_an_awaitable() -> None:
    """An async stream function (returning an awaitable of the stream) works the same."""
    inner = Script(AT("ok"))

    async def fn(model: Any, context: Any, options: Any) -> Any:
        await asyncio.sleep(0)
        return inner(model, context, options)

    events, result = await run([U("hi")], AgentContext(messages=[]), cfg(), fn)
    assert sigs(events) == TEXT_TURN


async def test_missing_stream_fn_raises_after_prompt_events() -> None:
    """No stream function and no default: the run raises after the prompt's events."""
    stream = agent_loop([U("hi")], AgentContext(messages=[]), cfg(), None, None)
    seen = []
    with pytest.raises(Exception, match="No default stream function configured"):
        async for event in stream:
            seen.append(event.type)
    assert seen == ["agent_start", "turn_start", "message_start", "message_end"]


async def test_stream_options_carry_signal_reasoning_key_and_session() -> None:
    """Options: the run signal, reasoning, the resolved key (async hook) and passthrough fields."""
    from pi_coder.agent import AbortController

    async def get_key(provider: str) -> str:
        return f"key-for-{provider}"

    controller = AbortController()
    fn = Script(AT("a"))
    config = cfg(reasoning="high", get_api_key=get_key, api_key="fallback", session_id="s1", max_tokens=77)
    await run([U("hi")], AgentContext(messages=[]), config, fn, controller.signal)
    options = fn.calls[0].options
    assert options.signal is controller.signal
    assert (options.reasoning, options.api_key, options.session_id, options.max_tokens) == (
        "high", "key-for-openai", "s1", 77,
    )  # fmt: skip

    fn2 = Script(AT("a"))
    await run([U("hi")], AgentContext(messages=[]), cfg(api_key="fallback", get_api_key=lambda p: None), fn2)
    assert fn2.calls[0].options.api_key == "fallback"
    assert fn2.calls[0].options.reasoning is None
