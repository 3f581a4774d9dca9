"""Spec agent-core 4.4: errors, abort, continue and system-message reconciliation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_coder.agent import (
    AbortController,
    AgentContext,
    AgentError,
    AgentToolResult,
    agent_loop_continue,
    declare_tool_changes,
    run_agent_loop,
)
from pi_coder.ai.context import get_current_tools
from pi_coder.ai.events import ErrorEvent
from pi_coder.ai.types import DeferredHandle, SystemMessage, TextContent

from .script import (
    AC,
    AE,
    AT,
    S0,
    TC,
    A,
    Abortable,
    Poll,
    Script,
    ToolLog,
    U,
    cfg,
    decl,
    make_echo,
    make_noop,
    make_tool,
    run,
    run_continue,
    sigs,
    texts,
)


async def test_c53_provider_error_event_hard_exit_tool_calls_ignored() -> None:
    log = ToolLog()
    echo = make_echo(log)
    ctx = AgentContext(messages=[S0(echo)], tools=[echo])
    error = A([TC("c1", "echo", {"value": "x"})], "error", error_message="boom")

    def respond(stream: Any, call: Any) -> None:
        stream.push(ErrorEvent(reason="error", error=error))

    finish = Poll()
    u = U("go")
    events, result = await run([u], ctx, cfg(finish_turn=lambda t, s: finish()), Script(respond))
    assert log.calls == []
    assert sigs(events) == ["AS", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE"]
    assert events[6].message is error and events[6].tool_results == []
    assert result == [u, error] and error.error_message == "boom"
    assert finish.count == 1, "finish_turn still observes a hard exit"


async def test_c55_deferred_response_ends_naturally() -> None:
    handle = DeferredHandle(provider="openai", model_id="mock", api="openai-responses", id="d1")
    deferred = A([], "deferred", deferred=handle)
    reasons: list[str] = []
    steer, follow = Poll(), Poll()
    fn = Script(deferred)
    config = cfg(
        finish_turn=lambda t, s: reasons.append(t.message.stop_reason),
        get_steering_messages=steer, get_follow_up_messages=follow,
    )  # fmt: skip
    events, result = await run([U("go")], AgentContext(messages=[]), config, fn)
    assert sigs(events) == ["AS", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE"]
    assert reasons == ["deferred"] and (steer.count, follow.count) == (2, 1) and fn.count == 1


async def test_c57_abort_during_a_sequential_batch() -> None:
    controller = AbortController()
    echo_log = ToolLog()

    async def waiter(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        await asyncio.wait_for(signal.wait(), 5)
        raise RuntimeError("aborted by signal")

    tools = [make_tool("waiter", waiter), make_echo(echo_log)]
    ctx = AgentContext(messages=[S0(*tools)], tools=tools)
    a1 = A([TC("c1", "waiter", {"value": "w"}), TC("c2", "echo", {"value": "e"})], "toolUse")
    fn = Abortable(a1)
    steer, follow = Poll(), Poll()
    events: list[Any] = []

    async def emit(event: Any) -> None:
        events.append(event)
        if event.type == "tool_execution_start" and event.tool_call_id == "c1":
            asyncio.get_running_loop().call_later(0.01, controller.abort)

    u = U("go")
    config = cfg(tool_execution="sequential", get_steering_messages=steer, get_follow_up_messages=follow)
    result = await asyncio.wait_for(run_agent_loop([u], ctx, config, emit, controller.signal, fn), 5)
    assert sigs(events)[4:] == [
        "MS:assistant", "ME:assistant", "XS:c1", "XE:c1:err", "MS:toolResult", "ME:toolResult", "TE",
        "TS", "MS:assistant", "ME:assistant", "TE", "AE",
    ]  # fmt: skip
    r1, aborted = result[2], result[3]
    assert texts(r1) == ["aborted by signal"] and r1.is_error
    assert echo_log.calls == [] and not any(getattr(e, "tool_call_id", None) == "c2" for e in events)
    assert fn.count == 2 and fn.calls[1].options.signal.aborted
    assert aborted.stop_reason == "aborted" and result == [u, a1, r1, aborted]
    assert (steer.count, follow.count) == (3, 0)


async def test_abort_during_parallel_preparation_stops_later_calls() -> None:
    """Parallel: preparation stops after an observed abort; prepared calls still run."""
    controller = AbortController()
    ran: list[str] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        ran.append(tool_call_id)
        return AgentToolResult(content=[TextContent(text="ok")])

    tool = make_tool("t", execute)
    ctx = AgentContext(messages=[S0(tool)], tools=[tool])

    def before(context: Any, signal: Any) -> None:
        if context.tool_call.id == "c2":
            controller.abort()

    a1 = A([TC("c1", "t", {"value": "1"}), TC("c2", "t", {"value": "2"}), TC("c3", "t", {"value": "3"})], "toolUse")
    events, result = await run([U("go")], ctx, cfg(before_tool_call=before), Abortable(a1), controller.signal)
    assert ran == ["c1"]
    assert [(m.tool_call_id, m.is_error) for m in result if m.role == "toolResult"] == [("c1", False), ("c2", True)]
    assert texts(result[3]) == ["Operation aborted"]
    assert not any(getattr(e, "tool_call_id", None) == "c3" for e in events)
    assert result[-1].stop_reason == "aborted"


async def test_c59_agent_loop_continue_preconditions() -> None:
    fn = Script()
    with pytest.raises(AgentError, match="^Cannot continue: no messages in context$"):
        agent_loop_continue(AgentContext(messages=[]), cfg(), None, fn)
    with pytest.raises(AgentError, match="^Cannot continue from message role: assistant$"):
        agent_loop_continue(AgentContext(messages=[U("x"), AT("y")]), cfg(), None, fn)
    events: list[Any] = []
    from pi_coder.agent import run_agent_loop_continue

    with pytest.raises(AgentError, match="no messages"):
        await run_agent_loop_continue(AgentContext(messages=[]), cfg(), events.append, None, fn)
    assert fn.count == 0 and events == []


async def test_c60_continue_from_a_user_tail() -> None:
    u, a = U("hi"), AT("Response")
    ctx = AgentContext(messages=[u])
    events, result = await run_continue(ctx, cfg(), Script(a))
    assert sigs(events) == ["AS", "TS", "MS:assistant", "ME:assistant", "TE", "AE"]
    assert result == [a] and result[0] is a and events[-1].messages is result
    assert ctx.messages == [u, a] and ctx.messages[1] is a


async def test_c62_reconciliation_inserts_a_system_message_for_undeclared_tools() -> None:
    echo = make_echo()
    ctx = AgentContext(messages=[], tools=[echo])
    u = U("go")
    fn = Script(AC("tool-1", "echo", {"value": "hello"}))
    events, result = await run([u], ctx, cfg(finish_turn=lambda t, s: {"action": "end"}), fn)
    assert sigs(events) == [
        "AS", "TS", "MS:system", "ME:system", "MS:user", "ME:user", "MS:assistant", "ME:assistant",
        "XS:tool-1", "XE:tool-1:ok", "MS:toolResult", "ME:toolResult", "TE", "AE",
    ]  # fmt: skip
    d = result[0]
    assert events[2].message is d and events[3].message is d
    assert d.to_json_dict() == {
        "role": "system", "content": "", "toolsAdded": [decl(echo).to_json_dict()], "timestamp": d.timestamp,
    }  # fmt: skip
    assert [m.role for m in result] == ["system", "user", "assistant", "toolResult"]
    assert fn.calls[0].messages == [d, u]


async def test_c64_a_pending_system_message_absorbs_the_tool_delta() -> None:
    echo = make_echo()
    p = SystemMessage(content="", sections={"mode": "plan"}, timestamp=1)
    u = U("go")
    events, result = await run([p, u], AgentContext(messages=[], tools=[echo]), cfg(), Script(AT("ok")))
    systems = [e.message for e in events if e.type == "message_start" and e.message.role == "system"]
    assert len(systems) == 1 and result[0] is systems[0]
    copy = systems[0]
    assert copy is not p and copy.sections == {"mode": "plan"} and copy.timestamp == 1
    assert copy.tools_added == [decl(echo)] and copy.tools_removed is None
    assert p.tools_added is None, "the original is not changed"

    events, result = await run([p, u], AgentContext(messages=[], tools=[]), cfg(), Script(AT("ok")))
    assert result[0] is p


async def test_reconciliation_before_later_requests_announces_changed_tools() -> None:
    """Tools swapped by prepare_next_turn are declared before the next request; a changed
    definition appears in both lists."""
    echo, noop = make_echo(), make_noop()

    async def other_echo(*args: Any) -> AgentToolResult:
        return AgentToolResult()

    echo2 = make_tool("echo", other_echo)  # same name, different description
    ctx = AgentContext(messages=[S0(echo, noop)], tools=[echo, noop])

    def prepare(turn: Any) -> dict[str, Any]:
        return {"context": AgentContext(messages=turn.context.messages, tools=[echo2])}

    fn = Script(AC("c1", "noop", {}), AT("ok"))
    events, result = await run([U("go")], ctx, cfg(prepare_next_turn=prepare), fn)
    d = result[3]
    assert sigs(events)[10:15] == ["TE", "TS", "MS:system", "ME:system", "MS:assistant"]
    assert d.role == "system" and d.tools_added == [decl(echo2)]
    assert [r.name for r in d.tools_removed] == ["echo", "noop"]
    assert fn.calls[1].messages[-1] is d
    assert [t.name for t in get_current_tools(fn.calls[1].messages)] == ["echo"]


def test_declare_tool_changes_against_a_replayed_transcript() -> None:
    """Removals replay before additions; identity is kept when the tools already match."""
    a, b, c = (make_tool(n, make_noop().execute) for n in ("a", "b", "c"))
    messages = [
        SystemMessage(content="x", tools_added=[decl(a), decl(b), decl(c)]),
        U("hi"),
        SystemMessage(content="", tools_removed=[{"name": "a"}], tools_added=[decl(a)]),
        SystemMessage(content="", tools_added=[decl(b)]),
    ]
    ctx = AgentContext(messages=messages, tools=[a])
    pending = [U("x")]
    out = declare_tool_changes(ctx, pending)
    assert out[0].role == "system" and [r.name for r in out[0].tools_removed] == ["b", "c"] and out[1] is pending[0]
    assert declare_tool_changes(AgentContext(messages=messages, tools=[b, c, a]), pending) is pending


async def test_hard_exit_leaves_queues_untouched_and_ends_the_run() -> None:
    steer, follow = Poll(), Poll()
    fn = Script(AE("aborted", "Request was aborted"), AT("never"))
    events, result = await run([U("go")], AgentContext(messages=[]), cfg(get_steering_messages=steer, get_follow_up_messages=follow), fn)
    assert fn.count == 1 and (steer.count, follow.count) == (1, 0)
    assert sigs(events)[-2:] == ["TE", "AE"]
