"""Fixtures of spec agent-core 4.0: the model M, message builders, Script/Abortable stream
functions, the echo/noop tools, poll spies and a compact event notation."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from pi_coder.agent import (
    AgentEvent,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    agent_loop,
    agent_loop_continue,
)
from pi_coder.ai.context import to_tool_declaration
from pi_coder.ai.events import AssistantMessageEventStream, DoneEvent, ErrorEvent, StartEvent
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.types import (
    AssistantMessage,
    Context,
    Model,
    SystemMessage,
    TextContent,
    ToolCall,
    UserMessage,
)

M = Model(
    id="mock", name="mock", api="openai-responses", provider="openai", base_url="https://example.invalid",
    reasoning=False, input=["text"], context_window=8192, max_tokens=2048,
)  # fmt: skip


def U(text: str) -> UserMessage:
    return UserMessage(content=text)


def A(blocks: list[Any], stop: str = "stop", **kw: Any) -> AssistantMessage:
    return AssistantMessage(
        content=blocks, api="openai-responses", provider="openai", model="mock", stop_reason=stop, **kw
    )


def AT(text: str) -> AssistantMessage:
    return A([TextContent(text=text)], "stop")


def TC(id: str, name: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall(id=id, name=name, arguments=args)


def AC(id: str, name: str, args: dict[str, Any]) -> AssistantMessage:
    return A([TC(id, name, args)], "toolUse")


def ACS(*calls: tuple[str, str, dict[str, Any]]) -> AssistantMessage:
    return A([TC(*c) for c in calls], "toolUse")


def AE(reason: str, message: str) -> AssistantMessage:
    return A([], reason, error_message=message)


def identity(messages: list[Any]) -> list[Any]:
    return [m for m in messages if getattr(m, "role", None) in ("system", "user", "assistant", "toolResult")]


def cfg(**kw: Any) -> AgentLoopConfig:
    return AgentLoopConfig(model=kw.pop("model", M), convert_to_llm=kw.pop("convert_to_llm", identity), **kw)


# ---------------------------------------------------------------------------- stream functions

HANG = "hang"


@dataclass
class Call:
    model: Model
    context: Context
    options: StreamOptions
    messages: list[Any] = field(default_factory=list)
    """A snapshot of ``context.messages`` at call time."""


Custom = Callable[[AssistantMessageEventStream, "Call"], Awaitable[None] | None]


class Script:
    """Stream function of spec 4.0: the k-th call pushes one terminal event for response k.

    A response may also be a ``Custom`` coroutine function ``(stream, call)`` that pushes events
    itself. A call beyond the script raises AssertionError (which the test then sees).
    """

    def __init__(self, *responses: AssistantMessage | Custom | str) -> None:
        self.responses = list(responses)
        self.calls: list[Call] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    def __call__(self, model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
        k = len(self.calls)
        call = Call(model, context, options, list(context.messages))
        self.calls.append(call)
        if k >= len(self.responses):
            raise AssertionError(f"unexpected stream call #{k + 1}")
        return self.respond(self.responses[k], call)

    def respond(self, response: Any, call: Call) -> AssistantMessageEventStream:
        stream = AssistantMessageEventStream()
        if isinstance(response, AssistantMessage):
            push_final(stream, response)
        else:
            result = response(stream, call)
            if asyncio.iscoroutine(result):
                task = asyncio.ensure_future(result)
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        return stream

    @property
    def count(self) -> int:
        return len(self.calls)


def push_final(stream: AssistantMessageEventStream, message: AssistantMessage) -> None:
    if message.stop_reason in ("error", "aborted"):
        stream.push(ErrorEvent(reason=message.stop_reason, error=message))  # type: ignore[arg-type]
    else:
        stream.push(DoneEvent(reason=message.stop_reason, message=message))  # type: ignore[arg-type]


class Abortable(Script):
    """Like Script; an aborted signal at call time gives an aborted error, and "hang" streams
    a start and waits for the abort (any call past the script answers aborted if aborted)."""

    def __call__(self, model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
        signal = options.signal
        if signal is not None and signal.aborted:
            self.calls.append(Call(model, context, options, list(context.messages)))
            stream = AssistantMessageEventStream()
            stream.push(ErrorEvent(reason="aborted", error=AE("aborted", "Request was aborted")))
            return stream
        return super().__call__(model, context, options)

    def respond(self, response: Any, call: Call) -> AssistantMessageEventStream:
        if response == HANG:
            return super().respond(_hang, call)
        return super().respond(response, call)


async def _hang(stream: AssistantMessageEventStream, call: Call) -> None:
    partial = A([], "pending")
    stream.push(StartEvent(partial=partial))
    signal = call.options.signal
    assert signal is not None, "a hanging response needs a signal"
    await signal.wait()
    final = partial.model_copy(update={"stop_reason": "aborted", "error_message": "Request was aborted"})
    stream.push(ErrorEvent(reason="aborted", error=final))


# ---------------------------------------------------------------------------- tools


class EchoParams(BaseModel):
    value: str


class NoParams(BaseModel):
    model_config = ConfigDict(extra="allow")


@dataclass
class ToolLog:
    calls: list[tuple[str, Any]] = field(default_factory=list)


def make_echo(
    log: ToolLog | None = None, terminate: Callable[[str], bool | None] | None = None, **kw: Any
) -> AgentTool:
    """The echo tool of 4.0; records ``(id, value)`` in ``log``; ``terminate(value)`` sets the flag."""
    calls = log.calls if log is not None else []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        calls.append((tool_call_id, params.value))
        return AgentToolResult(
            content=[TextContent(text=f"echoed: {params.value}")],
            details={"value": params.value},
            terminate=terminate(params.value) if terminate else None,
        )

    return AgentTool(name="echo", label="Echo", description="Echo tool", parameters=EchoParams, execute=execute, **kw)


def make_tool(name: str, execute: Callable[..., Any], parameters: type[BaseModel] = EchoParams, **kw: Any) -> AgentTool:
    return AgentTool(name=name, label=name, description=f"{name} tool", parameters=parameters, execute=execute, **kw)


async def _noop(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text="done")], details=None)


def make_noop() -> AgentTool:
    return AgentTool(name="noop", label="Noop", description="Noop tool", parameters=NoParams, execute=_noop)


def decl(tool: AgentTool) -> Any:
    return to_tool_declaration(tool)


def S0(*tools: AgentTool) -> SystemMessage:
    return SystemMessage(content="", tools_added=[decl(t) for t in tools], timestamp=0)


# ---------------------------------------------------------------------------- spies and notation


class Poll:
    """A queue-poll spy: call k returns ``results[k]`` (or [] past the end) and is counted."""

    def __init__(self, *results: list[Any] | Callable[[], list[Any]]) -> None:
        self.results = list(results)
        self.count = 0

    def __call__(self) -> list[Any]:
        k = self.count
        self.count += 1
        if k < len(self.results):
            result = self.results[k]
            return result() if callable(result) else result
        return []


def sig(event: AgentEvent) -> str:
    """Compact notation of an event: AS, AE, TS, TE, MS:role, MU:kind, ME:role, XS:id, XU:id, XE:id:ok|err."""
    kind = event.type
    if kind == "agent_start":
        return "AS"
    if kind == "agent_end":
        return "AE"
    if kind == "turn_start":
        return "TS"
    if kind == "turn_end":
        return "TE"
    if kind == "message_start":
        return f"MS:{event.message.role}"
    if kind == "message_end":
        return f"ME:{event.message.role}"
    if kind == "message_update":
        return f"MU:{event.assistant_message_event.type}"
    if kind == "tool_execution_start":
        return f"XS:{event.tool_call_id}"
    if kind == "tool_execution_update":
        return f"XU:{event.tool_call_id}"
    assert kind == "tool_execution_end"
    return f"XE:{event.tool_call_id}:{'err' if event.is_error else 'ok'}"


def sigs(events: list[AgentEvent]) -> list[str]:
    return [sig(e) for e in events]


def of_type(events: list[AgentEvent], kind: str) -> list[AgentEvent]:
    return [e for e in events if e.type == kind]


async def run(prompts: list[Any], ctx: Any, config: AgentLoopConfig, fn: Any, signal: Any = None) -> tuple[list[AgentEvent], list[Any]]:
    """Drive ``agent_loop`` to the end; returns (events, result)."""
    stream = agent_loop(prompts, ctx, config, signal, fn)
    events = [e async for e in stream]
    return events, await asyncio.wait_for(stream.result(), 5)


async def run_continue(ctx: Any, config: AgentLoopConfig, fn: Any, signal: Any = None) -> tuple[list[AgentEvent], list[Any]]:
    stream = agent_loop_continue(ctx, config, signal, fn)
    events = [e async for e in stream]
    return events, await asyncio.wait_for(stream.result(), 5)


def texts(message: Any) -> list[str]:
    content = message.content
    if isinstance(content, str):
        return [content]
    return [b.text for b in content if getattr(b, "type", None) == "text"]
