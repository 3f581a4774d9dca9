"""Property tests: random scripts of text turns, tool batches, queued messages and aborts,
run through the Agent; the run-level invariants of spec agent-core section 3 must hold."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_coder.agent import Agent, AgentToolResult
from pi_coder.ai.events import AssistantMessageEventStream, DoneEvent, ErrorEvent
from pi_coder.ai.types import TextContent, ToolCall, UserMessage

from .script import AE, AT, A, make_tool

TOOL_KINDS = ["ok", "raise", "term", "slow", "seq", "missing"]


@dataclass(frozen=True)
class Plan:
    responses: list[Any]
    """Per request: "text", "error", or a list of tool kinds (one call each)."""
    queued: list[tuple[int, str]]
    """(event index, "steer" | "follow") at which a listener queues a message."""
    abort_at: int | None
    tool_execution: str
    steering_mode: str
    follow_up_mode: str
    pre_steer: int


responses = st.lists(
    st.one_of(
        st.just("text"),
        st.just("error"),
        st.lists(st.sampled_from(TOOL_KINDS), min_size=1, max_size=4),
    ),
    max_size=6,
)
plans = st.builds(
    Plan,
    responses=responses,
    queued=st.lists(st.tuples(st.integers(0, 60), st.sampled_from(["steer", "follow"])), max_size=5),
    abort_at=st.one_of(st.none(), st.integers(0, 60)),
    tool_execution=st.sampled_from(["parallel", "sequential"]),
    steering_mode=st.sampled_from(["one-at-a-time", "all"]),
    follow_up_mode=st.sampled_from(["one-at-a-time", "all"]),
    pre_steer=st.integers(0, 2),
)


def stream_fn_for(plan: Plan) -> Any:
    count = 0

    def stream_fn(model: Any, context: Any, options: Any) -> AssistantMessageEventStream:
        nonlocal count
        k = count
        count += 1
        stream = AssistantMessageEventStream()
        if options.signal is not None and options.signal.aborted:
            stream.push(ErrorEvent(reason="aborted", error=AE("aborted", "Request was aborted")))
            return stream
        response = plan.responses[k] if k < len(plan.responses) else "text"
        if response == "error":
            stream.push(ErrorEvent(reason="error", error=AE("error", "boom")))
        elif response == "text":
            stream.push(DoneEvent(reason="stop", message=AT(f"answer {k}")))
        else:
            calls = [ToolCall(id=f"r{k}c{i}", name=kind, arguments={"value": kind}) for i, kind in enumerate(response)]
            stream.push(DoneEvent(reason="toolUse", message=A(calls, "toolUse")))
        return stream

    return stream_fn


async def _execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    kind = params.value
    if kind == "slow":
        on_update(AgentToolResult(content=[TextContent(text="working")]))
        for _ in range(3):
            await asyncio.sleep(0)
    if kind == "raise":
        raise RuntimeError("tool failed")
    return AgentToolResult(content=[TextContent(text=kind)], terminate=True if kind == "term" else None)


TOOLS = [make_tool(kind, _execute, execution_mode="sequential" if kind == "seq" else None) for kind in TOOL_KINDS[:-1]]


async def run_plan(plan: Plan) -> None:
    agent = Agent(
        stream_fn=stream_fn_for(plan),
        initial_state={"tools": TOOLS},
        tool_execution=plan.tool_execution,  # type: ignore[arg-type]
        steering_mode=plan.steering_mode,  # type: ignore[arg-type]
        follow_up_mode=plan.follow_up_mode,  # type: ignore[arg-type]
    )
    steered: list[Any] = []
    followed: list[Any] = []
    events: list[Any] = []
    queue_at: dict[int, list[str]] = {}
    for index, kind in plan.queued:
        queue_at.setdefault(index, []).append(kind)

    def enqueue(kind: str) -> None:
        message = UserMessage(content=f"{kind} {len(steered) + len(followed)}")
        (steered if kind == "steer" else followed).append(message)
        (agent.steer if kind == "steer" else agent.follow_up)(message)

    async def listener(event: Any, signal: Any) -> None:
        index = len(events)
        events.append(event)
        for kind in queue_at.get(index, ()):
            enqueue(kind)
        if plan.abort_at == index:
            agent.abort()
        if index % 3 == 0:
            await asyncio.sleep(0)

    for _ in range(plan.pre_steer):
        enqueue("steer")
    before = list(agent.state.messages)
    agent.subscribe(listener)
    await asyncio.wait_for(agent.prompt("go"), 10)

    # exactly one agent_start (first) and one agent_end (last); nothing after it
    kinds = [e.type for e in events]
    assert kinds[0] == "agent_start" and kinds.count("agent_start") == 1
    assert kinds[-1] == "agent_end" and kinds.count("agent_end") == 1
    await asyncio.sleep(0.001)
    assert len(events) == len(kinds)
    assert not agent.state.is_streaming and agent.state.pending_tool_calls == frozenset()

    # turns are balanced and alternate
    turn_marks = [k for k in kinds if k in ("turn_start", "turn_end")]
    assert turn_marks == ["turn_start", "turn_end"] * (len(turn_marks) // 2)

    # agent_end.messages is exactly what the run appended to the state
    new_messages = events[-1].messages
    assert len(agent.state.messages) == len(before) + len(new_messages)
    assert all(a is b for a, b in zip(agent.state.messages, [*before, *new_messages], strict=True))

    # tool calls: one result each, in source order (a prefix of the calls after an abort)
    aborted_seen = False
    starts = [e.tool_call_id for e in events if e.type == "tool_execution_start"]
    ends = [e.tool_call_id for e in events if e.type == "tool_execution_end"]
    assert sorted(starts) == sorted(ends) and len(set(starts)) == len(starts)
    for event in events:
        if event.type != "turn_end":
            continue
        message = event.message
        calls = [b.id for b in message.content if isinstance(b, ToolCall)]
        results = [r.tool_call_id for r in event.tool_results]
        if message.stop_reason in ("error", "aborted"):
            assert results == []
            continue
        aborted_seen = aborted_seen or plan.abort_at is not None
        if plan.abort_at is None:
            assert results == calls
        else:
            assert results == calls[: len(results)]
        assert all(r in new_messages for r in event.tool_results)

    # queued messages: delivered at most once, in FIFO order per queue; the rest stay queued
    delivered = [m for m in agent.state.messages if any(m is q for q in steered + followed)]
    assert len({id(m) for m in delivered}) == len(delivered)
    for queue in (steered, followed):
        order = [m for m in delivered if any(m is q for q in queue)]
        assert order == queue[: len(order)] and all(a is b for a, b in zip(order, queue, strict=False))
    agent.stream_fn = stream_fn_for(Plan([], [], None, "parallel", "all", "all", 0))
    agent.abort()  # idle: no effect
    while agent.has_queued_messages():
        await asyncio.wait_for(agent.continue_(), 10)
    for message in steered + followed:
        assert sum(m is message for m in agent.state.messages) == 1


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans)
def test_run_invariants_hold_for_random_scripts(plan: Plan) -> None:
    asyncio.run(run_plan(plan))
