"""``Agent``: the stateful wrapper around the loop.

It owns the transcript and tools (``AgentState``), the steering and follow-up queues, the
subscribers and the active run. Events are reduced into the state first, then every listener
is awaited in subscription order, so each event is a barrier for the loop.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections import deque
from collections.abc import Callable, Iterable
from itertools import compress
from operator import attrgetter
from types import CoroutineType
from typing import TypedDict, assert_never, cast

from pi_coder.agent.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from pi_coder.agent.loop import (
    _NO_DEFAULT,
    StreamFn,
    get_default_stream_fn,
    run_agent_loop,
    run_agent_loop_continue,
)
from pi_coder.agent.types import (
    AfterToolCallHook,
    AgentContext,
    AgentError,
    AgentLoopConfig,
    AgentMessage,
    AgentTool,
    AgentTurnContext,
    BeforeToolCallHook,
    FinishTurnHook,
    MaybeAwaitable,
    PrepareNextTurnHook,
    QueueMode,
    ToolExecutionMode,
    TurnUpdateAnswer,
)
from pi_coder.ai.abort import AbortController, AbortSignal
from pi_coder.ai.context import (
    create_initial_system_message,
    get_current_system_message,
    get_current_system_prompt,
)
from pi_coder.ai.events import ServerSentEvent
from pi_coder.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_coder.json_types import JsonObject

__all__ = ["Agent", "AgentState", "InitialState", "default_convert_to_llm", "placeholder_model"]

Listener = Callable[[AgentEvent, AbortSignal], object]
"""``listener(event, signal)``; an awaitable result is awaited (in subscription order)."""


class InitialState(TypedDict, total=False):
    """``Agent(initial_state=...)``: Pi's ``Partial<AgentState>`` plus a ``system_prompt``."""

    model: Model
    thinking_level: str
    tools: list[AgentTool]
    messages: list[AgentMessage]
    system_prompt: str
    """Becomes the first system message (with the tools) unless ``messages`` starts with one."""

_LLM_ROLES = frozenset({"system", "user", "assistant", "toolResult"})
_LLM_MESSAGES = (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)
_role = attrgetter("role")
_PROMPT_BUSY = (
    "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, or wait for completion."
)
_CONTINUE_BUSY = "Agent is already processing. Wait for completion before continuing."
_RESET_BUSY = "Agent is already processing. Wait for completion before resetting."


def default_convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    """Keep the roles a model understands: system, user, assistant and toolResult."""
    # Runs over the whole transcript before every request, so the common cases stay in C.
    try:
        roles = list(map(_role, messages))
    except AttributeError:  # an object outside the AgentMessage union: keep only model messages
        return [m for m in messages if isinstance(m, _LLM_MESSAGES)]
    # Only the model roles are kept, and only the four model message classes have them.
    if _LLM_ROLES.issuperset(roles):
        return cast("list[Message]", list(messages))
    return cast("list[Message]", list(compress(messages, map(_LLM_ROLES.__contains__, roles))))


def placeholder_model() -> Model:
    """The model an agent holds until it is given one: ``unknown`` everywhere, never sent anywhere."""
    return Model(
        id="unknown", name="unknown", api="unknown", provider="unknown", base_url="",
        reasoning=False, input=[], context_window=0, max_tokens=0,
    )  # fmt: skip


class AgentState:
    """The agent's live state. List setters copy; list getters return the live list."""

    __slots__ = (
        "model",
        "thinking_level",
        "_tools",
        "_messages",
        "_is_streaming",
        "_streaming_message",
        "_pending_tool_calls",
        "_error_message",
    )

    def __init__(self, *, model: Model, thinking_level: str, tools: list[AgentTool], messages: list[AgentMessage]):
        self.model = model
        """Model of future runs (read at run start)."""
        self.thinking_level = thinking_level
        """``"off"`` or a level (read at run start)."""
        self._tools = tools
        self._messages = messages
        self._is_streaming = False
        self._streaming_message: AgentMessage | None = None
        self._pending_tool_calls: frozenset[str] = frozenset()
        self._error_message: str | None = None

    @property
    def system_prompt(self) -> str:
        """The prompt the transcript's system messages give; append a system message to change it."""
        return get_current_system_prompt(self._messages)

    @property
    def tools(self) -> list[AgentTool]:
        return self._tools

    @tools.setter
    def tools(self, tools: Iterable[AgentTool]) -> None:
        self._tools = list(tools)

    @property
    def messages(self) -> list[AgentMessage]:
        return self._messages

    @messages.setter
    def messages(self, messages: Iterable[AgentMessage]) -> None:
        self._messages = list(messages)

    @property
    def is_streaming(self) -> bool:
        """True from the run's claim until it has fully settled (``agent_end`` listeners included)."""
        return self._is_streaming

    @property
    def streaming_message(self) -> AgentMessage | None:
        """The message between its ``message_start`` and ``message_end``."""
        return self._streaming_message

    @property
    def pending_tool_calls(self) -> frozenset[str]:
        """Ids of tool calls between ``tool_execution_start`` and ``tool_execution_end``."""
        return self._pending_tool_calls

    @property
    def error_message(self) -> str | None:
        """``error_message`` of this run's most recent failed assistant turn."""
        return self._error_message


class _Queue:
    __slots__ = ("mode", "_items")

    def __init__(self, mode: QueueMode) -> None:
        self.mode: QueueMode = mode
        self._items: deque[AgentMessage] = deque()

    def drain(self) -> list[AgentMessage]:
        if not self._items:
            return []
        if self.mode == "all":
            items = list(self._items)
            self._items.clear()
            return items
        return [self._items.popleft()]


class _ActiveRun:
    __slots__ = ("controller", "settled")

    def __init__(self, controller: AbortController, settled: asyncio.Future[None]) -> None:
        self.controller = controller
        self.settled = settled


class Agent:
    """A stateful agent: transcript, tools, queues and subscribers around the loop.

    Hooks and options are public attributes, read when a run starts.

    Args:
        initial_state: ``system_prompt``, ``model``, ``thinking_level``, ``tools``, ``messages``
            (a mapping or an object with these attributes). Without a leading system message,
            one is created from the prompt and the tools' declarations.
        stream_fn: ``(model, context, options) -> AssistantMessageEventStream``; defaults to
            the one set with ``set_default_stream_fn``.
        prepare_next_turn: legacy form, called with the run signal only.
        prepare_next_turn_with_context: ``(turn_context, signal)``; preferred when both are set.

    Raises:
        AgentError: no ``stream_fn`` and no default stream function.
    """

    def __init__(
        self,
        *,
        initial_state: InitialState | None = None,
        stream_fn: StreamFn | None = None,
        convert_to_llm: Callable[[list[AgentMessage]], MaybeAwaitable[list[Message]]] | None = None,
        transform_context: (
            Callable[[list[AgentMessage], AbortSignal | None], MaybeAwaitable[list[AgentMessage]]] | None
        ) = None,
        get_api_key: Callable[[str], MaybeAwaitable[str | None]] | None = None,
        on_payload: Callable[[JsonObject], object] | None = None,
        on_response: Callable[[JsonObject], object] | None = None,
        on_headers: Callable[[dict[str, str]], object] | None = None,
        before_tool_call: BeforeToolCallHook | None = None,
        after_tool_call: AfterToolCallHook | None = None,
        finish_turn: FinishTurnHook | None = None,
        prepare_next_turn: Callable[[AbortSignal], MaybeAwaitable[TurnUpdateAnswer]] | None = None,
        prepare_next_turn_with_context: (
            Callable[[AgentTurnContext, AbortSignal], MaybeAwaitable[TurnUpdateAnswer]] | None
        ) = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        session_id: str | None = None,
        thinking_budgets: dict[str, int] | None = None,
        transport: str = "auto",
        max_retry_delay_ms: int | None = None,
        tool_execution: ToolExecutionMode = "parallel",
    ) -> None:
        stream_fn = stream_fn or get_default_stream_fn()
        if stream_fn is None:
            raise AgentError(_NO_DEFAULT)
        self.stream_fn: StreamFn = stream_fn
        self.convert_to_llm = convert_to_llm
        self.transform_context = transform_context
        self.get_api_key = get_api_key
        self.on_payload = on_payload
        self.on_response = on_response
        self.on_headers = on_headers
        self.on_stream_event: Callable[[list[ServerSentEvent]], object] | None = None
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.finish_turn = finish_turn
        self.prepare_next_turn = prepare_next_turn
        self.prepare_next_turn_with_context = prepare_next_turn_with_context
        self.session_id = session_id
        self.thinking_budgets = thinking_budgets
        self.transport = transport
        self.max_retry_delay_ms = max_retry_delay_ms
        self.tool_execution: ToolExecutionMode = tool_execution
        self._steering = _Queue(steering_mode)
        self._follow_up = _Queue(follow_up_mode)
        self._listeners: dict[Listener | Callable[[AgentEvent], object], Listener] = {}
        self._active: _ActiveRun | None = None
        self._state = _initial_state(initial_state)

    # ------------------------------------------------------------------------ state and options

    @property
    def state(self) -> AgentState:
        return self._state

    @property
    def steering_mode(self) -> QueueMode:
        return self._steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._steering.mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._follow_up.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._follow_up.mode = mode

    @property
    def signal(self) -> AbortSignal | None:
        """The active run's abort signal, or None when idle."""
        return self._active.controller.signal if self._active is not None else None

    def subscribe(self, listener: Listener | Callable[[AgentEvent], object]) -> Callable[[], None]:
        """Register ``listener(event, signal)`` (or ``listener(event)``); it may be async.

        Returns:
            A function that unsubscribes it. Subscribing the same function twice keeps one entry.
        """
        if listener not in self._listeners:
            self._listeners[listener] = _two_arguments(listener)

        def unsubscribe() -> None:
            self._listeners.pop(listener, None)

        return unsubscribe

    # ------------------------------------------------------------------------ queues

    def steer(self, message: AgentMessage | str) -> None:
        """Queue a message for the next turn (it never interrupts a running stream or tool)."""
        self._steering._items.append(_as_message(message))

    def follow_up(self, message: AgentMessage | str) -> None:
        """Queue a message for when the agent would otherwise stop."""
        self._follow_up._items.append(_as_message(message))

    def clear_steering_queue(self) -> None:
        self._steering._items.clear()

    def clear_follow_up_queue(self) -> None:
        self._follow_up._items.clear()

    def clear_all_queues(self) -> None:
        self.clear_steering_queue()
        self.clear_follow_up_queue()

    def has_queued_messages(self) -> bool:
        return bool(self._steering._items or self._follow_up._items)

    # ------------------------------------------------------------------------ runs

    async def prompt(
        self, input: str | AgentMessage | list[AgentMessage], images: list[ImageContent] | None = None
    ) -> None:
        """Run a prompt: a text (plus images) as one user message, a message, or a list of them.

        Resolves when the run has settled; run failures end as an error assistant message.

        Raises:
            AgentError: a run is active.
        """
        if self._active is not None:
            raise AgentError(_PROMPT_BUSY)
        if isinstance(input, str):
            messages: list[AgentMessage] = [UserMessage(content=[TextContent(text=input), *(images or ())])]
        elif isinstance(input, list):
            messages = input
        else:
            messages = [input]
        await self._run(messages)

    async def continue_(self) -> None:
        """Continue from the transcript, or from queued messages after an assistant tail.

        Raises:
            AgentError: a run is active, there is nothing to continue from, or the tail is an
                assistant message and both queues are empty.
        """
        if self._active is not None:
            raise AgentError(_CONTINUE_BUSY)
        messages = self._state._messages
        if not any(m.role != "system" for m in messages):
            raise AgentError("No messages to continue from")
        if getattr(messages[-1], "role", None) == "assistant":
            steering = self._steering.drain()
            if steering:
                return await self._run(steering, skip_initial_steering_poll=True)
            follow_ups = self._follow_up.drain()
            if follow_ups:
                return await self._run(follow_ups)
            raise AgentError("Cannot continue from message role: assistant")
        await self._run(None)

    def abort(self) -> None:
        """Abort the active run's signal; does nothing when idle."""
        if self._active is not None:
            self._active.controller.abort()

    async def wait_for_idle(self) -> None:
        """Return when the active run has fully settled (at once when idle)."""
        if self._active is not None:
            await asyncio.shield(self._active.settled)

    def reset(self) -> None:
        """Keep only the replayed system message; clear run state and both queues.

        Raises:
            AgentError: a run is active (nothing is changed).
        """
        if self._active is not None:
            raise AgentError(_RESET_BUSY)
        state = self._state
        system = get_current_system_message(state._messages)
        state._messages = [system] if system is not None else []
        state._is_streaming = False
        state._streaming_message = None
        state._pending_tool_calls = frozenset()
        state._error_message = None
        self.clear_all_queues()

    async def _run(self, prompts: list[AgentMessage] | None, skip_initial_steering_poll: bool = False) -> None:
        if self._active is not None:
            raise AgentError("Agent is already processing.")
        controller = AbortController()
        run = self._active = _ActiveRun(controller, asyncio.get_running_loop().create_future())
        state = self._state
        state._is_streaming = True
        state._streaming_message = None
        state._error_message = None
        signal = controller.signal
        try:
            context = AgentContext(messages=list(state._messages), tools=list(state._tools))
            config = self._loop_config(signal, skip_initial_steering_poll)

            emit = functools.partial(self._process_event, signal=signal)  # a coroutine function

            try:
                if prompts is None:
                    await run_agent_loop_continue(context, config, emit, signal, self.stream_fn)
                else:
                    await run_agent_loop(prompts, context, config, emit, signal, self.stream_fn)
            except Exception as exc:
                await self._handle_run_failure(exc, signal)
        finally:
            state._is_streaming = False
            state._streaming_message = None
            state._pending_tool_calls = frozenset()
            if not run.settled.done():
                run.settled.set_result(None)
            self._active = None

    def _loop_config(self, signal: AbortSignal, skip_initial_steering_poll: bool) -> AgentLoopConfig:
        state = self._state
        skip = skip_initial_steering_poll

        def get_steering_messages() -> list[AgentMessage]:
            nonlocal skip
            if skip:
                skip = False
                return []
            return self._steering.drain()

        prepare: PrepareNextTurnHook | None = None
        with_context, legacy = self.prepare_next_turn_with_context, self.prepare_next_turn
        if with_context is not None:
            prepare = lambda turn: with_context(turn, signal)  # noqa: E731
        elif legacy is not None:
            prepare = lambda turn: legacy(signal)  # noqa: E731

        return AgentLoopConfig(
            model=state.model,
            reasoning=None if state.thinking_level == "off" else state.thinking_level,
            convert_to_llm=self.convert_to_llm or default_convert_to_llm,
            transform_context=self.transform_context,
            get_api_key=self.get_api_key,
            get_steering_messages=get_steering_messages,
            get_follow_up_messages=self._follow_up.drain,
            tool_execution=self.tool_execution,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            finish_turn=self.finish_turn,
            prepare_next_turn=prepare,
            session_id=self.session_id,
            thinking_budgets=self.thinking_budgets,
            transport=self.transport,
            max_retry_delay_ms=self.max_retry_delay_ms,
            on_payload=self.on_payload,
            on_response=self.on_response,
            on_headers=self.on_headers,
            on_stream_event=self.on_stream_event,
        )

    async def _process_event(self, event: AgentEvent, signal: AbortSignal) -> None:
        state = self._state
        match event:
            case MessageUpdate() | MessageStart():
                state._streaming_message = event.message
            case MessageEnd():
                state._streaming_message = None
                state._messages.append(event.message)
            case ToolExecutionStart():
                state._pending_tool_calls = state._pending_tool_calls | {event.tool_call_id}
            case ToolExecutionEnd():
                state._pending_tool_calls = state._pending_tool_calls - {event.tool_call_id}
            case TurnEnd():
                message = event.message
                if isinstance(message, AssistantMessage) and message.error_message:
                    state._error_message = message.error_message
            case AgentEnd():
                state._streaming_message = None
            case AgentStart() | TurnStart() | ToolExecutionUpdate():
                pass
            case _:
                assert_never(event)
        for listener in tuple(self._listeners.values()):
            result = listener(event, signal)
            if result is not None and (type(result) is CoroutineType or inspect.isawaitable(result)):
                await result

    async def _handle_run_failure(self, exc: Exception, signal: AbortSignal) -> None:
        model = self._state.model
        failure = AssistantMessage(
            content=[TextContent(text="")],
            api=model.api,
            provider=model.provider,
            model=model.id,
            usage=Usage(),
            stop_reason="aborted" if signal.aborted else "error",
            error_message=str(exc) or type(exc).__name__,
        )
        for event in (
            MessageStart(message=failure),
            MessageEnd(message=failure),
            TurnEnd(message=failure, tool_results=[]),
            AgentEnd(messages=[failure]),
        ):
            await self._process_event(event, signal)


def _initial_state(initial: InitialState | None) -> AgentState:
    initial = initial or {}
    tools = list(initial.get("tools") or ())
    messages = list(initial.get("messages") or ())
    if not messages or not isinstance(messages[0], SystemMessage):
        system = create_initial_system_message(initial.get("system_prompt"), tools)
        if system is not None:
            messages.insert(0, system)
    return AgentState(
        model=initial.get("model") or placeholder_model(),
        thinking_level=initial.get("thinking_level") or "off",
        tools=tools,
        messages=messages,
    )


def _as_message(message: AgentMessage | str) -> AgentMessage:
    if isinstance(message, str):
        return UserMessage(content=[TextContent(text=message)])
    return message


def _two_arguments(listener: Listener | Callable[[AgentEvent], object]) -> Listener:
    """Adapt a one-argument listener ``f(event)`` to the ``(event, signal)`` form."""
    # Which of the two forms it is shows only in its signature (the casts say what was found).
    try:
        parameters = inspect.signature(listener).parameters.values()
    except (TypeError, ValueError):
        return cast(Listener, listener)
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) == 1 and not any(p.kind == p.VAR_POSITIONAL for p in parameters):
        one = cast("Callable[[AgentEvent], object]", listener)
        return lambda event, signal: one(event)
    return cast(Listener, listener)
