"""Spec agent-core 4.5: the Agent wrapper."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_coder.agent import Agent, AgentError, AgentToolResult
from pi_coder.ai.types import ImageContent, SystemMessage, TextContent, Usage

from .script import (
    AC,
    ACS,
    AE,
    AT,
    HANG,
    S0,
    Abortable,
    Script,
    ToolLog,
    U,
    decl,
    make_echo,
    make_noop,
    make_tool,
    sigs,
    texts,
)

PROMPT_BUSY = (
    "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, or wait for completion."
)


def record(agent: Agent) -> list[Any]:
    events: list[Any] = []
    agent.subscribe(lambda event, signal: events.append(event))
    return events


async def eventually(predicate: Any, timeout: float = 30.0) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.001)

    await asyncio.wait_for(poll(), timeout)


def test_c65_default_state() -> None:
    agent = Agent(stream_fn=Script())
    state = agent.state
    assert state.system_prompt == ""
    assert (state.model.id, state.model.api, state.model.provider, state.model.context_window) == (
        "unknown", "unknown", "unknown", 0,
    )  # fmt: skip
    assert state.thinking_level == "off" and state.tools == [] and state.messages == []
    assert state.is_streaming is False and state.streaming_message is None
    assert state.pending_tool_calls == set() and state.error_message is None
    assert agent.steering_mode == agent.follow_up_mode == "one-at-a-time"
    assert agent.tool_execution == "parallel" and agent.signal is None
    events = record(agent)
    assert events == []


def test_c66_initial_system_message() -> None:
    echo = make_echo()
    agent = Agent(stream_fn=Script(), initial_state={"system_prompt": "You are helpful.", "tools": [echo]})
    assert [m.to_json_dict() for m in agent.state.messages] == [
        {"role": "system", "content": "You are helpful.", "toolsAdded": [decl(echo).to_json_dict()], "timestamp": 0}
    ]
    assert agent.state.system_prompt == "You are helpful."

    existing = SystemMessage(content="Existing")
    agent = Agent(stream_fn=Script(), initial_state={"system_prompt": "ignored", "messages": [existing]})
    assert agent.state.messages == [existing] and agent.state.system_prompt == "Existing"

    assert Agent(stream_fn=Script(), initial_state={"system_prompt": ""}).state.messages == []


async def test_c67_prompt_lifecycle_and_final_state() -> None:
    a = AT("ok")
    fn = Script(a)
    agent = Agent(stream_fn=fn)
    seen: list[tuple[Any, bool]] = []
    agent.subscribe(lambda event, signal: seen.append((event, agent.state.is_streaming)))
    await agent.prompt("hello")

    events = [e for e, _ in seen]
    assert sigs(events) == ["AS", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE"]
    assert all(streaming for _, streaming in seen)
    u = events[2].message
    assert u.content == [TextContent(text="hello")]
    assert agent.state.messages == [u, a] and agent.state.messages[0] is u and agent.state.messages[1] is a
    assert events[-1].messages[1] is a
    state = agent.state
    assert (state.is_streaming, state.streaming_message, state.error_message) == (False, None, None)
    assert fn.calls[0].options.signal is not None and fn.calls[0].options.reasoning is None

    img = ImageContent(data="aGk=", mime_type="image/png")
    agent = Agent(stream_fn=Script(AT("ok")))
    events = record(agent)
    await agent.prompt("hello", [img])
    assert events[2].message.content == [TextContent(text="hello"), img]


async def test_c69_subscribers_are_awaited_settlement_waits_for_agent_end_listeners() -> None:
    agent = Agent(stream_fn=Script(AT("ok")))
    latch = asyncio.Event()
    finished = False

    async def listener(event: Any, signal: Any) -> None:
        nonlocal finished
        if event.type == "agent_end":
            await latch.wait()
            finished = True

    agent.subscribe(listener)
    task = asyncio.ensure_future(agent.prompt("hi"))
    await asyncio.sleep(0.01)
    assert not task.done() and not finished and agent.state.is_streaming
    with pytest.raises(AgentError, match="already processing a prompt"):
        await agent.prompt("again")
    latch.set()
    await asyncio.wait_for(task, 30)
    assert finished and agent.state.is_streaming is False


async def test_c70_wait_for_idle_waits_for_blocked_listeners() -> None:
    agent = Agent(stream_fn=Script(AT("ok")))
    await asyncio.wait_for(agent.wait_for_idle(), 1)  # idle: immediate
    latch = asyncio.Event()

    async def listener(event: Any, signal: Any) -> None:
        if event.type == "message_end" and event.message.role == "assistant":
            await latch.wait()

    agent.subscribe(listener)
    prompt = asyncio.ensure_future(agent.prompt("hi"))
    await asyncio.sleep(0)
    idle = asyncio.ensure_future(agent.wait_for_idle())
    await asyncio.sleep(0.01)
    assert not idle.done() and not prompt.done() and agent.state.is_streaming
    latch.set()
    await asyncio.wait_for(asyncio.gather(prompt, idle), 30)
    assert agent.state.is_streaming is False


async def test_c71_listener_receives_the_run_signal_abort_aborts_it() -> None:
    agent = Agent(stream_fn=Abortable(HANG))
    signals: list[Any] = []
    states: list[bool] = []

    def listener(event: Any, signal: Any) -> None:
        if event.type == "agent_start":
            signals.append(signal)
            states.append(signal.aborted)

    agent.subscribe(listener)
    task = asyncio.ensure_future(agent.prompt("hi"))
    await eventually(lambda: agent.state.streaming_message is not None and agent.state.streaming_message.role == "assistant")
    assert states == [False] and agent.signal is signals[0]
    agent.abort()
    assert signals[0].aborted
    await asyncio.wait_for(task, 30)


async def test_c73_concurrency_guards() -> None:
    agent = Agent(stream_fn=Abortable(HANG))
    first = asyncio.ensure_future(agent.prompt("First message"))
    await asyncio.sleep(0)
    with pytest.raises(AgentError) as prompt_error:
        await agent.prompt("second")
    assert str(prompt_error.value) == PROMPT_BUSY
    with pytest.raises(AgentError) as continue_error:
        await agent.continue_()
    assert str(continue_error.value) == "Agent is already processing. Wait for completion before continuing."
    with pytest.raises(AgentError) as reset_error:
        agent.reset()
    assert str(reset_error.value) == "Agent is already processing. Wait for completion before resetting."
    assert [m.role for m in agent.state.messages] == ["user"]
    await eventually(lambda: agent.state.streaming_message is not None and agent.state.streaming_message.role == "assistant")
    agent.abort()
    await asyncio.wait_for(first, 30)


async def test_concurrently_scheduled_prompts_cannot_both_start() -> None:
    """3.16: the run is claimed before the first suspension point."""
    fn = Abortable(HANG)
    agent = Agent(stream_fn=fn)
    first, second = asyncio.ensure_future(agent.prompt("a")), asyncio.ensure_future(agent.prompt("b"))
    await eventually(second.done)
    assert isinstance(second.exception(), AgentError) and not first.done()
    agent.abort()
    await asyncio.wait_for(first, 30)
    assert fn.count == 1 and [m.role for m in agent.state.messages] == ["user", "assistant"]


async def test_c74_a_raising_stream_function_gives_a_synthetic_failure_lifecycle() -> None:
    def explode(model: Any, context: Any, options: Any) -> Any:
        raise RuntimeError("provider exploded")

    finish_calls: list[Any] = []
    agent = Agent(stream_fn=explode, finish_turn=lambda t, s: finish_calls.append(t))
    events = record(agent)
    await agent.prompt("hi")
    assert sigs(events) == ["AS", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE"]
    f = events[4].message
    assert events[5].message is f and events[6].message is f and events[7].messages == [f]
    assert f.content == [TextContent(text="")] and f.stop_reason == "error"
    assert f.error_message == "provider exploded" and f.usage == Usage()
    model = agent.state.model
    assert (f.api, f.provider, f.model) == (model.api, model.provider, model.id)
    assert agent.state.messages == [events[2].message, f]
    assert agent.state.error_message == "provider exploded" and finish_calls == []


async def test_a_raising_listener_leads_to_the_failure_path() -> None:
    agent = Agent(stream_fn=Script(AT("never")))
    events = record(agent)
    raised = False

    def bad(event: Any, signal: Any) -> None:
        nonlocal raised
        if event.type == "turn_start" and not raised:
            raised = True
            raise ValueError("listener broke")

    agent.subscribe(bad)
    await agent.prompt("hi")
    assert sigs(events) == ["AS", "TS", "MS:assistant", "ME:assistant", "TE", "AE"]
    assert agent.state.error_message == "listener broke"


async def test_c76_error_message_from_a_failed_turn_cleared_on_the_next_run() -> None:
    error, a2 = AE("error", "boom"), AT("ok")
    agent = Agent(stream_fn=Script(error, a2))
    await agent.prompt("a")
    assert agent.state.error_message == "boom" and agent.state.messages[-1] is error
    await agent.prompt("b")
    assert agent.state.error_message is None
    assert [texts(m) if m.role == "user" else m for m in agent.state.messages] == [["a"], error, ["b"], a2]


async def test_c77_abort_during_streaming() -> None:
    agent = Agent(stream_fn=Abortable(HANG))
    events: list[Any] = []

    def listener(event: Any, signal: Any) -> None:
        events.append(event)
        if event.type == "message_start" and event.message.role == "assistant":
            agent.abort()

    agent.subscribe(listener)
    await asyncio.wait_for(agent.prompt("hi"), 30)
    assert sigs(events) == ["AS", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE"]
    aborted = events[5].message
    assert aborted.stop_reason == "aborted" and aborted.error_message == "Request was aborted"
    assert agent.state.error_message == "Request was aborted"


async def test_c79_continue_from_an_assistant_tail_with_a_follow_up() -> None:
    u0, a0, f, a1 = U("0"), AT("0"), U("follow"), AT("Processed")
    agent = Agent(stream_fn=Script(a1))
    agent.state.messages = [u0, a0]
    agent.follow_up(f)
    events = record(agent)
    await agent.continue_()
    assert sigs(events) == ["AS", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE"]
    assert events[-1].messages == [f, a1]
    assert agent.state.messages == [u0, a0, f, a1]


async def test_c80_continue_from_an_assistant_tail_keeps_one_at_a_time_steering() -> None:
    s1, s2, a1, a2 = U("s1"), U("s2"), AT("Processed 1"), AT("Processed 2")
    fn = Script(a1, a2)
    agent = Agent(stream_fn=fn)
    agent.state.messages = [U("0"), AT("0")]
    agent.steer(s1)
    agent.steer(s2)
    events = record(agent)
    await agent.continue_()
    assert fn.count == 2 and agent.state.messages[-4:] == [s1, a1, s2, a2]
    assert sigs(events) == [
        "AS", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE",
        "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE",
    ]  # fmt: skip
    assert events[-1].messages == [s1, a1, s2, a2]

    fn = Script(AT("both"))
    agent = Agent(stream_fn=fn, steering_mode="all")
    agent.state.messages = [U("0"), AT("0")]
    agent.steer(s1)
    agent.steer(s2)
    await agent.continue_()
    assert fn.count == 1 and fn.calls[0].messages[-2:] == [s1, s2]


async def test_c81_continue_rejections() -> None:
    fn = Script()
    for messages, text in (
        ([], "No messages to continue from"),
        ([S0(make_echo())], "No messages to continue from"),
        ([U("x"), AT("y")], "Cannot continue from message role: assistant"),
    ):
        agent = Agent(stream_fn=fn)
        agent.state.messages = messages
        events = record(agent)
        if not messages or messages[0].role == "system":
            agent.follow_up(U("queued"))
        with pytest.raises(AgentError) as error:
            await agent.continue_()
        assert str(error.value) == text
        assert events == [] and agent.state.is_streaming is False
        assert agent.has_queued_messages() == (not messages or messages[0].role == "system")
    assert fn.count == 0


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_c83_pre_queued_steering_with_a_prompt(mode: str) -> None:
    s1, s2 = U("s1"), U("s2")
    fn = Script(AT("1"), AT("2"))
    agent = Agent(stream_fn=fn, steering_mode=mode)  # type: ignore[arg-type]
    agent.steer(s1)
    agent.steer(s2)
    events = record(agent)
    await agent.prompt("go")
    if mode == "one-at-a-time":
        assert fn.count == 2
        assert sigs(events) == [
            "AS", "TS", "MS:user", "ME:user", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE",
            "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE",
        ]  # fmt: skip
        assert events[4].message is s1 and events[10].message is s2
    else:
        assert fn.count == 1 and fn.calls[0].messages[-2:] == [s1, s2]
        assert [texts(m) for m in fn.calls[0].messages] == [["go"], ["s1"], ["s2"]]


async def test_c85_steering_during_tool_execution_does_not_skip_tools() -> None:
    steer_message = U("steer")
    ran: list[str] = []
    agent: Agent

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        ran.append(tool_call_id)
        if tool_call_id == "c1":
            agent.steer(steer_message)
        return AgentToolResult(content=[TextContent(text=params.value)])

    echo = make_tool("echo", execute, execution_mode="sequential")
    fn = Script(ACS(("c1", "echo", {"value": "a"}), ("c2", "echo", {"value": "b"})), AT("done"))
    agent = Agent(stream_fn=fn, initial_state={"tools": [echo]})
    await agent.prompt("go")
    assert ran == ["c1", "c2"]
    roles = [(m.role, getattr(m, "tool_call_id", None)) for m in agent.state.messages]
    assert roles == [
        ("system", None), ("user", None), ("assistant", None),
        ("toolResult", "c1"), ("toolResult", "c2"), ("user", None), ("assistant", None),
    ]  # fmt: skip
    assert agent.state.messages[5] is steer_message


async def test_c86_a_late_update_from_a_settled_parallel_tool_is_ignored() -> None:
    stored: list[Any] = []
    latch = asyncio.Event()

    async def settled_tool(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        stored.append(on_update)
        return AgentToolResult(content=[TextContent(text="settled")], terminate=True)

    async def slow_tool(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        await asyncio.wait_for(latch.wait(), 30)
        return AgentToolResult(content=[TextContent(text="slow")], terminate=True)

    tools = [make_tool("settled_tool", settled_tool), make_tool("slow_tool", slow_tool)]
    fn = Script(ACS(("call-1", "settled_tool", {"value": "a"}), ("call-2", "slow_tool", {"value": "b"})))
    agent = Agent(stream_fn=fn, initial_state={"tools": tools})
    events = record(agent)
    task = asyncio.ensure_future(agent.prompt("go"))
    await eventually(lambda: any(e.type == "tool_execution_end" and e.tool_call_id == "call-1" for e in events))
    count = len(events)
    stored[0](AgentToolResult(content=[TextContent(text="late")]))
    await asyncio.sleep(0.01)
    assert len(events) == count
    latch.set()
    await asyncio.wait_for(task, 30)
    assert not any(e.type == "tool_execution_update" for e in events) and fn.count == 1


async def test_c87_session_id_forwarding() -> None:
    fn = Script(AT("1"), AT("2"))
    agent = Agent(stream_fn=fn, session_id="session-abc")
    await agent.prompt("a")
    assert fn.calls[0].options.session_id == "session-abc"
    agent.session_id = "session-def"
    await agent.prompt("b")
    assert fn.calls[1].options.session_id == "session-def"


async def test_c89_legacy_prepare_next_turn_gets_the_signal_context_variant_wins() -> None:
    noop = make_noop()
    legacy_calls: list[Any] = []
    fn = Script(AC("tool-1", "noop", {}), AT("done"))
    agent = Agent(stream_fn=fn, initial_state={"tools": [noop]}, prepare_next_turn=legacy_calls.append)
    await agent.prompt("go")
    assert fn.count == 2 and len(legacy_calls) == 1
    assert hasattr(legacy_calls[0], "aborted") and not hasattr(legacy_calls[0], "message")

    legacy_calls.clear()
    with_context: list[tuple[Any, Any]] = []
    a1 = AC("tool-1", "noop", {})
    agent = Agent(
        stream_fn=Script(a1, AT("done")),
        initial_state={"tools": [noop]},
        prepare_next_turn=legacy_calls.append,
        prepare_next_turn_with_context=lambda ctx, signal: with_context.append((ctx, signal)),
    )
    await agent.prompt("go")
    assert legacy_calls == [] and len(with_context) == 1
    assert with_context[0][0].message is a1 and hasattr(with_context[0][1], "aborted")


async def test_c90_finish_turn_via_agent_options() -> None:
    noop = make_noop()
    calls: list[tuple[Any, Any]] = []

    def finish(ctx: Any, signal: Any) -> dict[str, str]:
        calls.append((ctx, signal))
        return {"action": "end"}

    fn = Script(AC("tool-1", "noop", {}), AT("should not run"))
    agent = Agent(stream_fn=fn, initial_state={"tools": [noop]}, finish_turn=finish)
    await agent.prompt("go")
    assert fn.count == 1 and hasattr(calls[0][1], "aborted")
    assert [m.role for m in calls[0][0].context.messages] == ["system", "user", "assistant", "toolResult"]


async def test_c91_state_setters_copy_getters_are_live() -> None:
    agent = Agent(stream_fn=Script())
    events = record(agent)
    tools = [make_echo()]
    agent.state.tools = tools
    assert agent.state.tools == tools and agent.state.tools is not tools
    messages = [U("a")]
    agent.state.messages = messages
    assert agent.state.messages == messages and agent.state.messages is not messages
    agent.state.messages.append(U("b"))
    assert [texts(m) for m in agent.state.messages] == [["a"], ["b"]]
    agent.state.messages = []
    assert agent.state.messages == [] and events == []


async def test_c93_tool_loadout_change_between_runs_is_announced() -> None:
    echo, noop = make_echo(), make_noop()
    agent = Agent(stream_fn=Script(AT("ok")), initial_state={"tools": [echo]})
    s0 = agent.state.messages[0]
    agent.state.tools = [noop]
    events = record(agent)
    await agent.prompt("x")
    assert sigs(events)[:6] == ["AS", "TS", "MS:system", "ME:system", "MS:user", "ME:user"]
    d = events[2].message
    assert d.content == "" and d.tools_added == [decl(noop)] and [r.name for r in d.tools_removed] == ["echo"]
    assert [m.role for m in agent.state.messages] == ["system", "system", "user", "assistant"]
    assert agent.state.messages[0] is s0 and agent.state.messages[1] is d


async def test_c94_abort_and_signal_while_idle() -> None:
    fn = Script(AT("ok"))
    agent = Agent(stream_fn=fn)
    agent.abort()
    assert agent.signal is None
    await agent.prompt("hi")
    assert fn.calls[0].options.signal.aborted is False


async def test_barrier_before_tool_call_sees_the_assistant_in_state() -> None:
    """3.12: assistant message_end is a barrier for before_tool_call."""
    echo = make_echo(ToolLog())
    seen: list[bool] = []
    a1 = AC("c1", "echo", {"value": "x"})
    agent: Agent = Agent(
        stream_fn=Script(a1, AT("ok")),
        initial_state={"tools": [echo]},
        before_tool_call=lambda ctx, signal: seen.append(agent.state.messages[-1] is a1),
    )
    await agent.prompt("go")
    assert seen == [True]


async def test_state_tracks_streaming_message_and_pending_tool_calls() -> None:
    echo = make_echo()
    agent = Agent(stream_fn=Script(AC("c1", "echo", {"value": "x"}), AT("ok")), initial_state={"tools": [echo]})
    snapshots: list[tuple[str, Any, frozenset[str]]] = []
    agent.subscribe(lambda e, s: snapshots.append((e.type, agent.state.streaming_message, agent.state.pending_tool_calls)))
    await agent.prompt("go")
    by_type = {t: (m, p) for t, m, p in snapshots}
    assert by_type["tool_execution_start"][1] == {"c1"} and by_type["tool_execution_end"][1] == frozenset()
    assert all(m is None for t, m, _ in snapshots if t in ("message_end", "agent_end"))
    assert all(m is not None for t, m, _ in snapshots if t == "message_start")


async def test_reset_keeps_the_replayed_system_message_and_clears_queues() -> None:
    echo = make_echo()
    agent = Agent(stream_fn=Script(AE("error", "boom")), initial_state={"system_prompt": "Be brief.", "tools": [echo]})
    await agent.prompt("hi")
    agent.steer(U("s"))
    agent.follow_up(U("f"))
    agent.reset()
    [system] = agent.state.messages
    assert system.role == "system" and system.content == "Be brief." and system.tools_added == [decl(echo)]
    assert agent.state.error_message is None and not agent.has_queued_messages()


def test_subscribe_has_set_semantics_and_unsubscribe_works() -> None:
    agent = Agent(stream_fn=Script())
    calls: list[str] = []

    def listener(event: Any) -> None:  # one-argument listeners are accepted too
        calls.append(event.type)

    unsubscribe = agent.subscribe(listener)
    agent.subscribe(listener)

    async def main() -> None:
        agent.stream_fn = Script(AT("ok"))
        await agent.prompt("hi")
        unsubscribe()
        agent.stream_fn = Script(AT("ok"))
        await agent.prompt("again")

    asyncio.run(main())
    assert calls.count("agent_start") == 1


async def test_queue_helpers() -> None:
    agent = Agent(stream_fn=Script())
    assert not agent.has_queued_messages()
    agent.steer("text becomes a user message")
    assert agent.has_queued_messages()
    agent.clear_steering_queue()
    agent.follow_up(U("f"))
    agent.clear_follow_up_queue()
    agent.steer(U("s"))
    agent.follow_up(U("f"))
    agent.clear_all_queues()
    assert not agent.has_queued_messages()


def test_constructor_without_a_stream_function_raises() -> None:
    with pytest.raises(AgentError, match="No default stream function configured"):
        Agent()


def test_default_converter_keeps_model_roles_in_order() -> None:
    from dataclasses import dataclass

    from pi_coder.agent import default_convert_to_llm

    @dataclass
    class Note:
        role: str = "notification"

    class Roleless:
        pass

    s, u, a = S0(make_echo()), U("u"), AT("a")
    assert default_convert_to_llm([s, u, a]) == [s, u, a]
    assert default_convert_to_llm([s, Note(), u, a]) == [s, u, a]
    assert default_convert_to_llm([Roleless(), u]) == [u]
    source = [u]
    assert default_convert_to_llm(source) is not source
