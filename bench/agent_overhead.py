"""Agent-loop overhead benchmark.

Usage: ``python bench/agent_overhead.py [--runs N] [--turns N] [--calls N]``

An instant stream function (pre-built messages, one ``done`` event each) and a trivial tool
isolate the loop's own cost. Time spent inside the stream function is measured and subtracted,
so the figures are "the loop besides the provider":

- per turn: one run of ``--turns`` turns (each a one-call tool turn, the last a text turn),
  divided by the number of turns; for the raw ``run_agent_loop`` (a no-op emit) and for
  ``Agent`` (default converter, one listener). The transcript grows to about 3 x turns messages;
  the default converter filters all of it before every request (as Pi's does), so a line with
  an identity converter shows the loop's own share.
- one turn with ``--calls`` parallel tool calls (plus the closing text turn), raw and Agent.

Prints medians over ``--runs`` runs of wall time and of process CPU time (the loop is
CPU-bound; CPU time is steadier on a busy machine). Targets: under 200 us per turn; under 20 ms for the
100-call turn.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from pi_coder.agent import Agent, AgentContext, AgentLoopConfig, AgentTool, AgentToolResult, run_agent_loop
from pi_coder.agent.agent import default_convert_to_llm
from pi_coder.ai.context import create_initial_system_message
from pi_coder.ai.events import AssistantMessageEventStream, DoneEvent
from pi_coder.ai.types import AssistantMessage, Model, TextContent, ToolCall, UserMessage

MODEL = Model(id="bench", api="bench", provider="bench")


class Params(BaseModel):
    value: str


async def _execute(tool_call_id: str, params: Params, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=params.value)])


TOOL = AgentTool(name="echo", label="echo", description="Echo a value", parameters=Params, execute=_execute)


class InstantStream:
    """Answers with pre-built messages; accumulates the time spent inside the calls."""

    def __init__(self, messages: list[AssistantMessage]) -> None:
        self.messages = messages
        self.index = 0
        self.wall = 0.0
        self.cpu = 0.0

    def __call__(self, model: Model, context: Any, options: Any) -> AssistantMessageEventStream:
        wall, cpu = time.perf_counter(), time.process_time()
        message = self.messages[self.index]
        self.index += 1
        stream = AssistantMessageEventStream()
        stream.push(DoneEvent(reason=message.stop_reason, message=message))  # type: ignore[arg-type]
        self.wall += time.perf_counter() - wall
        self.cpu += time.process_time() - cpu
        return stream


class Clock:
    """Wall and CPU time of a block, minus the provider's share."""

    def __init__(self, fn: InstantStream) -> None:
        self.fn = fn

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall - self.fn.wall
        self.cpu = time.process_time() - self.cpu - self.fn.cpu


def tool_turns(turns: int) -> list[AssistantMessage]:
    calls = [
        AssistantMessage(
            content=[ToolCall(id=f"c{i}", name="echo", arguments={"value": str(i)})], stop_reason="toolUse"
        )
        for i in range(turns - 1)
    ]
    return [*calls, AssistantMessage(content=[TextContent(text="done")])]


def wide_turn(calls: int) -> list[AssistantMessage]:
    blocks = [ToolCall(id=f"c{i}", name="echo", arguments={"value": str(i)}) for i in range(calls)]
    return [
        AssistantMessage(content=blocks, stop_reason="toolUse"),
        AssistantMessage(content=[TextContent(text="done")]),
    ]


def identity(messages: list[Any]) -> list[Any]:
    return messages


async def raw_run(
    messages: list[AssistantMessage], convert: Callable[[list[Any]], Any] = default_convert_to_llm
) -> tuple[float, float, int]:
    """Wall and CPU seconds of loop overhead (provider excluded) and the number of requests."""
    fn = InstantStream(messages)
    system = create_initial_system_message("bench", [TOOL])
    context = AgentContext(messages=[system], tools=[TOOL])
    config = AgentLoopConfig(model=MODEL, convert_to_llm=convert)

    def emit(event: Any) -> None:
        return None

    with Clock(fn) as clock:
        await run_agent_loop([UserMessage(content="go")], context, config, emit, None, fn)
    return clock.wall, clock.cpu, fn.index


async def agent_run(messages: list[AssistantMessage]) -> tuple[float, float, int]:
    fn = InstantStream(messages)
    agent = Agent(stream_fn=fn, initial_state={"system_prompt": "bench", "model": MODEL, "tools": [TOOL]})
    agent.subscribe(lambda event, signal: None)
    with Clock(fn) as clock:
        await agent.prompt("go")
    return clock.wall, clock.cpu, fn.index


def measure(label: str, runs: int, run: Callable[[], Any], per: Callable[[int], float], unit: str) -> None:
    walls, cpus = [], []
    for _ in range(runs):
        gc.collect()
        wall, cpu, requests = asyncio.run(run())
        walls.append(wall / per(requests))
        cpus.append(cpu / per(requests))
    scale = {"us": 1e6, "ms": 1e3}[unit]
    print(
        f"{label:<48} wall {statistics.median(walls) * scale:7.1f} {unit} (min {min(walls) * scale:6.1f})"
        f"   cpu {statistics.median(cpus) * scale:7.1f} {unit}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()

    asyncio.run(raw_run(tool_turns(20)))  # warm caches (schemas, validators)
    per_turn = tool_turns(args.turns)
    wide = wide_turn(args.calls)
    print(
        f"Loop overhead besides the provider; medians of {args.runs} runs (wall clock and process CPU time)"
    )
    measure(
        f"raw loop, per turn ({args.turns} tool turns)",
        args.runs,
        lambda: raw_run(per_turn),
        lambda n: n,
        "us",
    )
    measure(
        "  same, identity converter (no O(n) filter)",
        args.runs,
        lambda: raw_run(per_turn, identity),
        lambda n: n,
        "us",
    )
    measure(
        f"Agent, per turn ({args.turns} tool turns)",
        args.runs,
        lambda: agent_run(per_turn),
        lambda n: n,
        "us",
    )
    measure(
        f"raw loop, one turn with {args.calls} parallel calls",
        args.runs,
        lambda: raw_run(wide),
        lambda n: 1,
        "ms",
    )
    measure(
        f"Agent, one turn with {args.calls} parallel calls",
        args.runs,
        lambda: agent_run(wide),
        lambda n: 1,
        "ms",
    )


if __name__ == "__main__":
    main()
