"""Tool execution for one assistant message.

Per call: preflight (lookup, ``prepare_arguments``, validation with coercion,
``before_tool_call``), execution with progress updates, then ``after_tool_call`` overrides.
Calls run one by one (sequential) or prepared in order and executed concurrently (parallel);
either way the tool-result messages follow source order.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from pi_coder.agent.events import (
    AgentEvent,
    MessageEnd,
    MessageStart,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from pi_coder.agent.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    MaybeAwaitable,
    ToolArgs,
    hook_result,
)
from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage

__all__ = [
    "ToolBatch",
    "execute_tool_calls",
    "fail_truncated_tool_calls",
    "maybe_await",
    "validate_tool_arguments",
]

Emit = Callable[[AgentEvent], Awaitable[None]]
T = TypeVar("T")

INVALID_JSON_TEXT = (
    'Invalid arguments for tool "{name}": {error}. The tool was not executed, because its arguments '
    "may be cut off. Re-issue the tool call with complete, valid JSON arguments."
)

TRUNCATED_TEXT = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its '
    "arguments may be truncated. Re-issue the tool call with complete arguments."
)


async def maybe_await(value: MaybeAwaitable[T]) -> T:
    """``value``, awaited first if it is awaitable (hooks may be sync or async)."""
    if isinstance(value, Awaitable):
        return await value
    return value


@dataclass(slots=True)
class ToolBatch:
    messages: list[ToolResultMessage]
    """One result per processed call, in source order."""
    terminate: bool
    """Every processed call asked to terminate (and there was at least one)."""


@dataclass(slots=True)
class _Prepared:
    call: ToolCall
    tool: AgentTool
    args: ToolArgs


@dataclass(slots=True)
class _Outcome:
    call: ToolCall
    result: AgentToolResult
    is_error: bool
    duration_ms: int | None = None
    """How long ``execute()`` ran; None when the tool did not run."""


def _error_result(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], details={})


def _message_of(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _result_message(outcome: _Outcome) -> ToolResultMessage:
    result = outcome.result
    return ToolResultMessage(
        tool_call_id=outcome.call.id,
        tool_name=outcome.call.name,
        content=result.content or [],
        details=result.details,
        usage=result.usage,
        is_error=outcome.is_error,
    )


async def _emit_result(emit: Emit, outcome: _Outcome) -> None:
    call = outcome.call
    await emit(
        ToolExecutionEnd(
            tool_call_id=call.id,
            tool_name=call.name,
            result=outcome.result,
            is_error=outcome.is_error,
            duration_ms=outcome.duration_ms,
        )
    )


async def _emit_message(emit: Emit, message: ToolResultMessage) -> None:
    await emit(MessageStart(message=message))
    await emit(MessageEnd(message=message))


# ---------------------------------------------------------------------------- length-truncated


async def fail_truncated_tool_calls(calls: list[ToolCall], emit: Emit) -> ToolBatch:
    """Fail every call of a ``length``-truncated message without running anything."""
    messages = []
    for call in calls:
        await emit(ToolExecutionStart(tool_call_id=call.id, tool_name=call.name, args=call.arguments))
        outcome = _Outcome(call, _error_result(TRUNCATED_TEXT.format(name=call.name)), True)
        await _emit_result(emit, outcome)
        result_message = _result_message(outcome)
        messages.append(result_message)
        await _emit_message(emit, result_message)
    return ToolBatch(messages=messages, terminate=False)


# ---------------------------------------------------------------------------- batch


async def execute_tool_calls(
    context: AgentContext,
    message: AssistantMessage,
    calls: list[ToolCall],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> ToolBatch:
    """Run the tool calls of ``message``; results (and their messages) follow source order."""
    tools: dict[str, AgentTool] = {}
    for tool in reversed(context.tools or ()):
        tools[tool.name] = tool  # the first tool of a name wins
    run = _Runner(context, message, config, signal, emit, tools)
    sequential = config.tool_execution == "sequential" or any(
        (found := tools.get(call.name)) is not None and found.execution_mode == "sequential" for call in calls
    )
    if sequential:
        return await run.sequential(calls)
    return await run.parallel(calls)


class _Runner:
    __slots__ = ("context", "message", "config", "signal", "emit", "tools")

    def __init__(
        self,
        context: AgentContext,
        message: AssistantMessage,
        config: AgentLoopConfig,
        signal: AbortSignal | None,
        emit: Emit,
        tools: dict[str, AgentTool],
    ) -> None:
        self.context = context
        self.message = message
        self.config = config
        self.signal = signal
        self.emit = emit
        self.tools = tools

    def _aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    async def sequential(self, calls: list[ToolCall]) -> ToolBatch:
        outcomes: list[_Outcome] = []
        messages: list[ToolResultMessage] = []
        for call in calls:
            await self.emit(ToolExecutionStart(tool_call_id=call.id, tool_name=call.name, args=call.arguments))
            prepared = await self.prepare(call)
            outcome = prepared if isinstance(prepared, _Outcome) else await self.run(prepared)
            await _emit_result(self.emit, outcome)
            outcomes.append(outcome)
            result_message = _result_message(outcome)
            messages.append(result_message)
            await _emit_message(self.emit, result_message)
            if self._aborted():
                break
        return ToolBatch(messages=messages, terminate=_batch_terminates(outcomes))

    async def parallel(self, calls: list[ToolCall]) -> ToolBatch:
        slots: list[_Outcome | _Prepared] = []
        for call in calls:  # phase 1: prepare in source order
            await self.emit(ToolExecutionStart(tool_call_id=call.id, tool_name=call.name, args=call.arguments))
            prepared = await self.prepare(call)
            if isinstance(prepared, _Outcome):
                await _emit_result(self.emit, prepared)
            slots.append(prepared)
            if self._aborted():
                break

        async def run_and_report(index: int, prepared: _Prepared) -> None:
            outcome = await self.run(prepared)
            await _emit_result(self.emit, outcome)  # completion order
            slots[index] = outcome

        runners = [run_and_report(i, p) for i, p in enumerate(slots) if isinstance(p, _Prepared)]
        if len(runners) == 1:  # phase 2: execute concurrently
            await runners[0]
        elif runners:
            tasks = [asyncio.ensure_future(r) for r in runners]
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:
                    task.cancel()
                raise

        outcomes: list[_Outcome] = slots  # type: ignore[assignment]
        messages = []
        for outcome in outcomes:  # phase 3: results in source order
            result_message = _result_message(outcome)
            messages.append(result_message)
            await _emit_message(self.emit, result_message)
        return ToolBatch(messages=messages, terminate=_batch_terminates(outcomes))

    # ------------------------------------------------------------------------ one call

    async def prepare(self, call: ToolCall) -> _Prepared | _Outcome:
        """Preflight: a prepared call, or an immediate error outcome."""
        tool = self.tools.get(call.name)
        if tool is None:
            return _Outcome(call, _error_result(f"Tool {call.name} not found"), True)
        if call.arguments_error is not None:
            text = INVALID_JSON_TEXT.format(name=call.name, error=call.arguments_error)
            return _Outcome(call, _error_result(text), True)
        try:
            raw_args: object = call.arguments
            if tool.prepare_arguments is not None:
                raw_args = await maybe_await(tool.prepare_arguments(raw_args))
            args = validate_tool_arguments(tool, raw_args)
            before = self.config.before_tool_call
            if before is not None:
                context = BeforeToolCallContext(
                    assistant_message=self.message, tool_call=call, args=args, context=self.context
                )
                decision = hook_result(await maybe_await(before(context, self.signal)), BeforeToolCallResult)
                if self._aborted():
                    return _Outcome(call, _error_result("Operation aborted"), True)
                if decision is not None and decision.block:
                    result = _error_result(decision.reason or "Tool execution was blocked")
                    if decision.terminate is True:
                        result.terminate = True
                    return _Outcome(call, result, True)
            if self._aborted():
                return _Outcome(call, _error_result("Operation aborted"), True)
        except Exception as exc:
            return _Outcome(call, _error_result(_message_of(exc)), True)
        return _Prepared(call, tool, args)

    async def run(self, prepared: _Prepared) -> _Outcome:
        """Execute, then apply ``after_tool_call``."""
        call = prepared.call
        updates: list[asyncio.Future[None]] = []
        running = True

        def on_update(partial_result: AgentToolResult) -> None:
            if running:
                event = ToolExecutionUpdate(
                    tool_call_id=call.id, tool_name=call.name, args=call.arguments, partial_result=partial_result
                )
                updates.append(asyncio.ensure_future(self.emit(event)))

        started = time.monotonic()
        try:
            running_call = prepared.tool.execute(call.id, prepared.args, self.signal, on_update)
            result = await running_call if isinstance(running_call, Awaitable) else running_call
            if not isinstance(result, AgentToolResult):
                raise TypeError(f"Tool {call.name} returned {type(result).__name__}, not an AgentToolResult")
            is_error = False
        except Exception as exc:
            result, is_error = _error_result(_message_of(exc)), True
        finally:
            running = False
        duration_ms = round((time.monotonic() - started) * 1000)
        if updates:
            await asyncio.gather(*updates)

        after = self.config.after_tool_call
        if after is None:
            return _Outcome(call, result, is_error, duration_ms)
        context = AfterToolCallContext(
            assistant_message=self.message,
            tool_call=call,
            args=prepared.args,
            result=result,
            is_error=is_error,
            context=self.context,
        )
        try:
            override = hook_result(await maybe_await(after(context, self.signal)), AfterToolCallResult)
        except Exception as exc:
            return _Outcome(call, _error_result(_message_of(exc)), True, duration_ms)
        if override is None:
            return _Outcome(call, result, is_error, duration_ms)
        result = AgentToolResult(
            content=override.content if override.content is not None else result.content,
            details=override.details if override.details is not None else result.details,
            usage=override.usage if override.usage is not None else result.usage,
            terminate=override.terminate if override.terminate is not None else result.terminate,
        )
        return _Outcome(call, result, override.is_error if override.is_error is not None else is_error, duration_ms)


def _batch_terminates(outcomes: list[_Outcome]) -> bool:
    return bool(outcomes) and all(o.result.terminate is True for o in outcomes)


# ---------------------------------------------------------------------------- validation


def _json_copy(value: object) -> object:
    if isinstance(value, dict):
        return {key: _json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_copy(item) for item in value]
    return value


def validate_tool_arguments(tool: AgentTool, raw_args: object) -> ToolArgs:
    """Validate ``raw_args`` against the tool's parameters model, coercing types.

    Returns:
        A new, validated parameters object (the raw arguments are not changed).

    Raises:
        ValueError: with the model-facing message listing every problem.
    """
    parameters = tool.parameters
    if not (isinstance(parameters, type) and issubclass(parameters, BaseModel)):
        raise TypeError(f"Tool {tool.name} has no parameters model")
    try:
        # A copy, so that fields typed Any never share objects with the assistant's tool-call block.
        return parameters.model_validate(_json_copy(raw_args))
    except ValidationError as exc:
        lines = [f"  - {'/'.join(str(p) for p in error['loc']) or 'root'}: {error['msg']}" for error in exc.errors()]
        received = json.dumps(raw_args, indent=2, ensure_ascii=False, default=str)
        raise ValueError(
            f'Validation failed for tool "{tool.name}":\n' + "\n".join(lines) + f"\n\nReceived arguments:\n{received}"
        ) from None
