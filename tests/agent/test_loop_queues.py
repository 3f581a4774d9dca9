"""Spec agent-core 4.3: queues, finish_turn and prepare_next_turn at the loop level."""

from __future__ import annotations

from typing import Any

import pytest

from pi_coder.agent import AbortController, AgentContext, AgentLoopTurnUpdate, run_agent_loop
from pi_coder.ai.types import Model

from .script import (
    AC,
    ACS,
    AT,
    S0,
    M,
    Poll,
    Script,
    ToolLog,
    U,
    cfg,
    make_echo,
    make_noop,
    of_type,
    run,
    sigs,
    texts,
)


async def test_c37_steering_is_injected_only_after_the_whole_batch() -> None:
    log = ToolLog()
    echo = make_echo(log)
    ctx = AgentContext(messages=[S0(echo)], tools=[echo])
    interrupt = U("interrupt")
    delivered = False

    def steering() -> list[Any]:
        nonlocal delivered
        if log.calls and not delivered:
            delivered = True
            return [interrupt]
        return []

    a1 = ACS(("tool-1", "echo", {"value": "a"}), ("tool-2", "echo", {"value": "b"}))
    fn = Script(a1, AT("done"))
    events, result = await run([U("go")], ctx, cfg(tool_execution="sequential", get_steering_messages=steering), fn)
    assert [c[0] for c in log.calls] == ["tool-1", "tool-2"]
    assert sigs(events)[12:20] == [
        "MS:toolResult", "ME:toolResult", "TE", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant",
    ]  # fmt: skip
    assert events[16].message is interrupt
    assert of_type(events, "turn_end")[0].message is a1
    assert [r.tool_call_id for r in of_type(events, "turn_end")[0].tool_results] == ["tool-1", "tool-2"]
    assert interrupt in fn.calls[1].messages


async def test_c38_initial_steering_poll_injects_into_the_first_turn() -> None:
    s = U("steer")
    u, a = U("go"), AT("ok")
    fn = Script(a)
    events, result = await run([u], AgentContext(messages=[]), cfg(get_steering_messages=Poll([s])), fn)
    assert sigs(events) == [
        "AS", "TS", "MS:user", "ME:user", "MS:user", "ME:user", "MS:assistant", "ME:assistant", "TE", "AE",
    ]  # fmt: skip
    assert events[4].message is s and result == [u, s, a]
    assert fn.count == 1 and fn.calls[0].messages == [u, s]


async def test_c40_steering_queued_during_prepare_next_turn_is_picked_up() -> None:
    noop = make_noop()
    ctx = AgentContext(messages=[S0(noop)], tools=[noop])
    queue: list[Any] = []
    late = U("late")

    def steering() -> list[Any]:
        drained = list(queue)
        queue.clear()
        return drained

    def prepare(turn: Any) -> None:
        queue.append(late)

    fn = Script(AC("tool-1", "noop", {}), AT("done"))
    await run([U("go")], ctx, cfg(get_steering_messages=steering, prepare_next_turn=prepare), fn)
    assert fn.count == 2 and late in fn.calls[1].messages


async def test_c42_follow_ups_wait_while_tools_continue() -> None:
    echo = make_echo()
    ctx = AgentContext(messages=[S0(echo)], tools=[echo])
    order: list[str] = []

    def follow() -> list[Any]:
        order.append("follow-up poll")
        return []

    async def emit(event: Any) -> None:
        order.append(event.type)

    fn = Script(AC("c1", "echo", {"value": "x"}), AT("done"))
    await run_agent_loop([U("go")], ctx, cfg(get_follow_up_messages=follow), emit, None, fn)
    assert order.count("follow-up poll") == 1
    turn_ends = [i for i, x in enumerate(order) if x == "turn_end"]
    assert len(turn_ends) == 2 and order.index("follow-up poll") > turn_ends[1]


async def test_c43_finish_turn_ordering() -> None:
    echo = make_echo(terminate=lambda v: True)
    ctx = AgentContext(messages=[S0(echo)], tools=[echo])
    records: list[str] = []

    async def emit(event: Any) -> None:
        kind = event.type
        if kind in ("message_start", "message_end"):
            kind += ":" + event.message.role
        records.append(kind)

    def finish(turn: Any, signal: Any) -> None:
        assert len(turn.tool_results) == 1
        assert turn.context.messages[-1].role == "toolResult"
        records.append("finishTurn")

    await run_agent_loop([U("go")], ctx, cfg(finish_turn=finish), emit, None, Script(AC("c1", "echo", {"value": "x"})))
    assert records[-4:-1] == ["message_end:toolResult", "finishTurn", "turn_end"]


async def test_c45_end_skips_queue_polling_and_next_turn_preparation() -> None:
    log = ToolLog()
    echo = make_echo(log)
    ctx = AgentContext(messages=[S0(echo)], tools=[echo])
    captured: list[Any] = []

    def finish(turn: Any, signal: Any) -> dict[str, str]:
        captured.append(turn)
        return {"action": "end"}

    steer, follow = Poll(), Poll([U("follow")])
    prepare_calls: list[Any] = []
    fn = Script(AC("tool-1", "echo", {"value": "hello"}), AT("should not run"))
    config = cfg(
        finish_turn=finish, get_steering_messages=steer, get_follow_up_messages=follow,
        prepare_next_turn=prepare_calls.append,
    )  # fmt: skip
    events, result = await run([U("go")], ctx, config, fn)
    assert fn.count == 1 and log.calls == [("tool-1", "hello")]
    assert (steer.count, follow.count, len(prepare_calls)) == (1, 0, 0)
    assert [r.tool_call_id for r in captured[0].tool_results] == ["tool-1"]
    assert [m.role for m in captured[0].context.messages] == ["system", "user", "assistant", "toolResult"]
    assert sigs(events) == [
        "AS", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant",
        "XS:tool-1", "XE:tool-1:ok", "MS:toolResult", "ME:toolResult", "TE", "AE",
    ]  # fmt: skip


async def test_c46_continue_with_nothing_scheduled_makes_one_context_only_request() -> None:
    decisions = ["continue"]
    finish_calls: list[Any] = []

    def finish(turn: Any, signal: Any) -> Any:
        finish_calls.append(turn)
        return decisions.pop(0) if decisions else None

    u, a1, a2 = U("go"), AT("response 1"), AT("response 2")
    fn = Script(a1, a2)
    events, result = await run([u], AgentContext(messages=[]), cfg(finish_turn=finish), fn)
    assert fn.count == 2 and len(finish_calls) == 2
    assert fn.calls[1].messages == [u, a1]
    assert sigs(events)[6:] == ["TE", "TS", "MS:assistant", "ME:assistant", "TE", "AE"]
    assert result == [u, a1, a2]


async def test_c48_continue_satisfied_by_steering() -> None:
    q = U("queued")
    decisions = [{"action": "continue"}]
    fn = Script(AT("one"), AT("two"))
    config = cfg(finish_turn=lambda t, s: decisions.pop(0) if decisions else None, get_steering_messages=Poll([], [q]))
    await run([U("go")], AgentContext(messages=[]), config, fn)
    assert fn.count == 2 and "queued" in [t for m in fn.calls[1].messages if m.role == "user" for t in texts(m)]


async def test_c48_continue_satisfied_by_a_follow_up() -> None:
    q = U("queued")
    decisions = ["continue"]
    fn = Script(AT("one"), AT("two"))
    config = cfg(finish_turn=lambda t, s: decisions.pop(0) if decisions else None, get_follow_up_messages=Poll([q]))
    await run([U("go")], AgentContext(messages=[]), config, fn)
    assert fn.count == 2 and q in fn.calls[1].messages


async def test_continue_overrides_a_terminating_batch() -> None:
    """3.8: continue after an all-terminate batch still makes one context-only request."""
    echo = make_echo(terminate=lambda v: True)
    ctx = AgentContext(messages=[S0(echo)], tools=[echo])
    decisions = ["continue"]
    fn = Script(AC("c1", "echo", {"value": "x"}), AT("after"))
    events, result = await run([U("go")], ctx, cfg(finish_turn=lambda t, s: decisions.pop(0) if decisions else None), fn)
    assert fn.count == 2 and fn.calls[1].messages[-1].role == "toolResult"


async def test_c50_finish_turn_arguments() -> None:
    echo = make_echo()
    ctx = AgentContext(messages=[S0(echo)], tools=[echo])
    calls: list[tuple[Any, Any, list[Any]]] = []

    def finish(turn: Any, signal: Any) -> None:
        calls.append((turn, signal, list(turn.new_messages)))

    controller = AbortController()
    u, a1 = U("go"), AC("tool-1", "echo", {"value": "hello"})
    events, result = await run([u], ctx, cfg(finish_turn=finish), Script(a1, AT("done")), controller.signal)
    assert len(calls) == 2
    turn, signal, snapshot = calls[0]
    assert turn.message is a1 and turn.tool_results == [result[2]] and turn.tool_results[0] is result[2]
    assert turn.new_messages is events[-1].messages and snapshot == [u, a1, result[2]]
    assert signal is controller.signal

    calls.clear()
    await run([U("go")], AgentContext(messages=[S0(echo)], tools=[echo]), cfg(finish_turn=finish), Script(AT("x")))
    assert calls[0][1] is None


@pytest.mark.parametrize(("level", "expected"), [("high", "high"), ("off", None)])
async def test_c51_prepare_next_turn_swaps_model_and_thinking(level: str, expected: str | None) -> None:
    noop = make_noop()
    m2 = Model(id="other", api="openai-responses", provider="openai")
    ctx = AgentContext(messages=[S0(noop)], tools=[noop])
    seen: list[Any] = []
    tails: list[Any] = []

    def prepare(turn: Any) -> AgentLoopTurnUpdate:
        seen.append(turn)
        tails.append(turn.context.messages[-2:])
        return AgentLoopTurnUpdate(model=m2, thinking_level=level)

    a1 = AC("tool-1", "noop", {})
    fn = Script(a1, AT("done"))
    events, result = await run([U("go")], ctx, cfg(reasoning="low", prepare_next_turn=prepare), fn)
    assert len(seen) == 1 and seen[0].message is a1 and [r.role for r in seen[0].tool_results] == ["toolResult"]
    assert seen[0].new_messages is result and tails[0] == [a1, result[2]] and tails[0][1] is result[2]
    assert (fn.calls[0].model, fn.calls[0].options.reasoning) == (M, "low")
    assert (fn.calls[1].model, fn.calls[1].options.reasoning) == (m2, expected)


async def test_prepare_next_turn_context_replaces_the_working_context() -> None:
    """A returned context is used for later requests; its silent messages are not new messages."""
    noop = make_noop()
    ctx = AgentContext(messages=[S0(noop)], tools=[noop])
    note = U("silently inserted")
    replaced: list[Any] = []

    def prepare(turn: Any) -> dict[str, Any]:
        new = AgentContext(messages=[*turn.context.messages, note], tools=turn.context.tools)
        replaced.append(new)
        return {"context": new}

    fn = Script(AC("tool-1", "noop", {}), AT("done"))
    events, result = await run([U("go")], ctx, cfg(prepare_next_turn=prepare), fn)
    assert fn.calls[1].messages[-1] is note
    assert note not in result and replaced[0].messages[-1] is result[-1]


async def test_poll_counts_for_common_shapes() -> None:
    """3.4: text turn 2/1; tool + text 4/1; hard exit 1/0."""
    from .script import AE

    for script, expected in (
        (lambda: Script(AT("x")), (2, 1)),
        (lambda: Script(AC("c1", "noop", {}), AT("x")), (4, 1)),
        (lambda: Script(AE("error", "boom")), (1, 0)),
    ):
        noop = make_noop()
        steer, follow = Poll(), Poll()
        ctx = AgentContext(messages=[S0(noop)], tools=[noop])
        await run([U("go")], ctx, cfg(get_steering_messages=steer, get_follow_up_messages=follow), script())
        assert (steer.count, follow.count) == expected
