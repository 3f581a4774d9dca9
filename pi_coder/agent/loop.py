"""The agent loop: turns of one assistant response plus its tool batch.

Read top to bottom, this module follows one run: the entry points, the run prologue,
the core loop (``_run_loop``), then the model boundary (``stream_assistant_response``). Tool
execution lives in ``_tools_exec``; system-message reconciliation in ``_reconcile``.

The loop holds no state between runs. Every emit is awaited: ``run_agent_loop`` callers get a
barrier per event, while ``agent_loop`` only enqueues into the stream it returns.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping
from types import CoroutineType

from pi_coder.agent._reconcile import ToolLedger, declare_tool_changes
from pi_coder.agent._tools_exec import (
    execute_tool_calls,
    fail_truncated_tool_calls,
    maybe_await,
)
from pi_coder.agent.events import (
    AgentEnd,
    AgentEvent,
    AgentEventStream,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TurnEnd,
    TurnStart,
)
from pi_coder.agent.types import (
    AgentContext,
    AgentError,
    AgentLoopConfig,
    AgentLoopTurnUpdate,
    AgentMessage,
    AgentTurnContext,
    FinishTurnResult,
    MaybeAwaitable,
    hook_result,
)
from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.events import AssistantMessageEventStream, DoneEvent, ErrorEvent
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.types import AssistantMessage, Context, Model, ToolCall

__all__ = [
    "Emit",
    "StreamFn",
    "agent_loop",
    "agent_loop_continue",
    "get_default_stream_fn",
    "run_agent_loop",
    "run_agent_loop_continue",
    "set_default_stream_fn",
    "stream_assistant_response",
]

StreamFn = Callable[[Model, Context, StreamOptions], MaybeAwaitable[AssistantMessageEventStream]]
"""``(model, context, options) -> AssistantMessageEventStream`` (or an awaitable of one)."""
Emit = Callable[[AgentEvent], Awaitable[None] | None]

_BLOCK_EVENTS = frozenset(
    {
        "text_start", "text_delta", "text_end",
        "thinking_start", "thinking_delta", "thinking_end",
        "toolcall_start", "toolcall_delta", "toolcall_end",
    }
)  # fmt: skip
_HARD_EXIT = ("error", "aborted")
_PASSTHROUGH = tuple(
    f.name
    for f in dataclasses.fields(StreamOptions)
    if f.name not in ("signal", "reasoning", "api_key")
)
_NO_DEFAULT = "No default stream function configured. Pass stream_fn explicitly or call set_default_stream_fn()."

_default_stream_fn: StreamFn | None = None


def set_default_stream_fn(stream_fn: StreamFn | None) -> None:
    """Set the stream function used when a run or an ``Agent`` is given none."""
    global _default_stream_fn
    _default_stream_fn = stream_fn


def get_default_stream_fn() -> StreamFn | None:
    return _default_stream_fn


# ---------------------------------------------------------------------------- entry points


def agent_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> AgentEventStream:
    """Start a prompt run in the background and return its event stream.

    The caller's ``context.messages`` is not changed. ``await stream.result()`` gives the run's
    new messages. Must be called with an event loop running.
    """
    stream = AgentEventStream()
    run = run_agent_loop(prompts, context, config, _enqueue(stream), signal, stream_fn)
    stream.task = asyncio.ensure_future(_feed(stream, run))
    return stream


def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> AgentEventStream:
    """Start a continue run from ``context`` in the background and return its event stream.

    Appends to the caller's ``context.messages``.

    Raises:
        AgentError: ``context.messages`` is empty or ends with an assistant message (raised
            here, before any event).
    """
    _check_continue(context)
    stream = AgentEventStream()
    run = run_agent_loop_continue(context, config, _enqueue(stream), signal, stream_fn)
    stream.task = asyncio.ensure_future(_feed(stream, run))
    return stream


def _enqueue(stream: AgentEventStream) -> Emit:
    push = stream.push

    def emit(event: AgentEvent) -> None:
        push(event)

    return emit


async def _feed(stream: AgentEventStream, run: Awaitable[list[AgentMessage]]) -> None:
    try:
        await run
    except Exception as exc:
        stream.fail(exc)
    except BaseException as exc:
        stream.fail(exc)
        raise


def _check_continue(context: AgentContext) -> None:
    if not context.messages:
        raise AgentError("Cannot continue: no messages in context")
    role = getattr(context.messages[-1], "role", None)
    if role == "assistant":
        raise AgentError(f"Cannot continue from message role: {role}")


async def run_agent_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """Run a prompt run to completion, awaiting ``emit`` for every event.

    Returns:
        The run's new messages (the list ``agent_end`` carried).
    """
    emit = _awaiting(emit)
    ledger = ToolLedger()
    initial = declare_tool_changes(context, list(prompts), ledger)
    new_messages = list(initial)
    current = dataclasses.replace(context, messages=[*context.messages, *initial])
    await emit(AgentStart())
    await emit(TurnStart())
    for message in initial:
        await emit(MessageStart(message=message))
        await emit(MessageEnd(message=message))
    await _run_loop(current, new_messages, config, signal, emit, stream_fn, ledger)
    return new_messages


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """Run a continue run; appends to the caller's ``context.messages``.

    Raises:
        AgentError: as ``agent_loop_continue``, before any event.
    """
    _check_continue(context)
    emit = _awaiting(emit)
    new_messages: list[AgentMessage] = []
    current = dataclasses.replace(context)
    await emit(AgentStart())
    await emit(TurnStart())
    await _run_loop(current, new_messages, config, signal, emit, stream_fn, ToolLedger())
    return new_messages


def _awaiting(emit: Emit) -> Callable[[AgentEvent], Awaitable[None]]:
    """``emit`` as a coroutine function (an ``async def`` is used as it is: one frame less per event)."""
    if inspect.iscoroutinefunction(emit):
        return emit

    async def awaited(event: AgentEvent) -> None:
        result = emit(event)
        if result is not None and (type(result) is CoroutineType or inspect.isawaitable(result)):
            await result

    return awaited


_new = object.__new__
_set = object.__setattr__


def _snapshot(message: AssistantMessage) -> AssistantMessage:
    """What ``message.model_copy()`` gives (a shallow copy: its own field dict, shared values),
    without pydantic's generic copy path; the loop takes one per streamed event."""
    if getattr(message, "__pydantic_private__", None) is not None:
        return message.model_copy()
    copy = _new(type(message))
    _set(copy, "__dict__", message.__dict__.copy())
    extra = message.__pydantic_extra__
    _set(copy, "__pydantic_extra__", None if extra is None else extra.copy())
    _set(copy, "__pydantic_fields_set__", message.__pydantic_fields_set__.copy())
    _set(copy, "__pydantic_private__", None)
    return copy


# ---------------------------------------------------------------------------- core loop


async def _run_loop(
    context: AgentContext,
    new_messages: list[AgentMessage],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Callable[[AgentEvent], Awaitable[None]],
    stream_fn: StreamFn | None,
    ledger: ToolLedger,
) -> None:
    model, reasoning = config.model, config.reasoning
    last_turn: AgentTurnContext | None = None
    explicit_continuation = False
    pending = await _poll(config.get_steering_messages)  # steering typed before the run starts
    while True:
        has_more_tool_calls = True
        while has_more_tool_calls or pending:
            if last_turn is not None:  # every turn but the run's first starts with the hook and a poll
                if config.prepare_next_turn is not None:
                    update = hook_result(await maybe_await(config.prepare_next_turn(last_turn)), AgentLoopTurnUpdate)
                    if update is not None:
                        context = update.context or context
                        model = update.model or model
                        level = update.thinking_level
                        if level is not None:
                            reasoning = None if level == "off" else level
                if not pending:  # the second ("refresh") poll
                    pending = await _poll(config.get_steering_messages)
                await emit(TurnStart())

            for message in declare_tool_changes(context, pending, ledger):  # tool changes are declared before the model call
                await emit(MessageStart(message=message))
                await emit(MessageEnd(message=message))
                context.messages.append(message)
                new_messages.append(message)
            pending = []

            message = await stream_assistant_response(
                context, model, reasoning, config, signal, emit, stream_fn
            )
            new_messages.append(message)

            if message.stop_reason in _HARD_EXIT:  # error/abort ends the run; its tool calls never run
                last_turn = AgentTurnContext(message=message, tool_results=[], context=context, new_messages=new_messages)
                await _finish_turn(config, last_turn, signal)
                await emit(TurnEnd(message=message, tool_results=[]))
                await emit(AgentEnd(messages=new_messages))
                return

            calls = [block for block in message.content if isinstance(block, ToolCall)]
            tool_results = []
            has_more_tool_calls = False
            if calls:
                if message.stop_reason == "length":
                    batch = await fail_truncated_tool_calls(calls, emit)
                else:
                    batch = await execute_tool_calls(context, message, calls, config, signal, emit)
                tool_results = batch.messages
                has_more_tool_calls = not batch.terminate
                context.messages.extend(tool_results)
                new_messages.extend(tool_results)

            last_turn = AgentTurnContext(  # what finish_turn and the next turn's hook see
                message=message, tool_results=tool_results, context=context, new_messages=new_messages
            )
            decision = _action(await _finish_turn(config, last_turn, signal))
            await emit(TurnEnd(message=message, tool_results=tool_results))
            if decision == "end":
                await emit(AgentEnd(messages=new_messages))
                return
            explicit_continuation = decision == "continue"
            pending = await _poll(config.get_steering_messages)  # post-turn poll
            if has_more_tool_calls or pending:
                explicit_continuation = False

        follow_ups = await _poll(config.get_follow_up_messages)  # F1: stable boundary
        if follow_ups:
            explicit_continuation = False
            pending = follow_ups
            continue
        if explicit_continuation:  # F2: one context-only request
            explicit_continuation = False
            continue
        break  # F3
    await emit(AgentEnd(messages=new_messages))


async def _poll(get_messages: Callable[[], MaybeAwaitable[list[AgentMessage]]] | None) -> list[AgentMessage]:
    if get_messages is None:
        return []
    return list(await maybe_await(get_messages()) or ())


async def _finish_turn(config: AgentLoopConfig, turn: AgentTurnContext, signal: AbortSignal | None) -> object:
    hook = config.finish_turn
    if hook is None:
        return None
    answer: object = await maybe_await(hook(turn, signal))
    return answer


def _action(decision: object) -> str | None:
    """``finish_turn``'s decision (a string, a ``FinishTurnResult`` or a dict) as "end", "continue" or None."""
    if isinstance(decision, FinishTurnResult):
        return decision.action
    if isinstance(decision, Mapping):
        decision = decision.get("action")
    return decision if decision in ("end", "continue") else None


# ---------------------------------------------------------------------------- model boundary


async def stream_assistant_response(
    context: AgentContext,
    model: Model,
    reasoning: str | None,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Callable[[AgentEvent], Awaitable[None]],
    stream_fn: StreamFn | None,
) -> AssistantMessage:
    """Make one request and stream its answer into one transcript slot, replaced in place.

    Returns:
        The final assistant message (the object placed in ``context.messages``).
    """
    messages = context.messages
    if config.transform_context is not None:
        messages = await maybe_await(config.transform_context(messages, signal))
    llm = await maybe_await(config.convert_to_llm(messages))
    request = Context.model_construct(messages=llm if isinstance(llm, list) else list(llm))

    api_key = None
    if config.get_api_key is not None:
        api_key = await maybe_await(config.get_api_key(model.provider))
    options = StreamOptions(
        signal=signal,
        reasoning=reasoning,
        api_key=api_key or config.api_key,
        **{name: getattr(config, name) for name in _PASSTHROUGH},
    )
    stream_fn = stream_fn or _default_stream_fn
    if stream_fn is None:
        raise AgentError(_NO_DEFAULT)
    stream = await maybe_await(stream_fn(model, request, options))

    partial: AssistantMessage | None = None
    events = aiter(stream)
    try:
        async for event in events:
            if isinstance(event, DoneEvent | ErrorEvent):
                break  # anything after the terminal event is never read
            kind = event.type
            if kind == "start":
                partial = event.partial
                context.messages.append(partial)
                await emit(MessageStart(message=_snapshot(partial)))
            elif kind in _BLOCK_EVENTS:
                if partial is not None:
                    partial = event.partial
                    context.messages[-1] = partial
                    await emit(MessageUpdate(message=_snapshot(partial), assistant_message_event=event))
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
    final: AssistantMessage = await stream.result()
    if partial is not None:
        context.messages[-1] = final
    else:
        context.messages.append(final)
        await emit(MessageStart(message=final.model_copy()))
    await emit(MessageEnd(message=final))
    return final
