"""The faux provider: scripted responses streamed like a real provider.

For tests and demos::

    faux = faux_provider([faux_message("Hello!"), faux_message(faux_tool_call("read", {"path": "a"}))])
    models.set_provider(faux)            # or use faux.stream directly as a StreamFn
    stream = faux.stream(faux.model, Context(messages=[...]), None)

Each call takes the next scripted response: an ``AssistantMessage``, a string (one text block),
or a factory ``(context, options, state, model)`` returning either (it may be async). With
``responses=None`` the provider has a default script for demos (``pi --provider faux``): every
call answers ``You said: <last user text>``. Responses queued with ``append`` are used first.

Streaming: ``start`` (partial with ``stopReason: "pending"`` and no content), then each block
as ``*_start``, deltas of 3, 4, 5, 3, ... tokens of 4 characters (tool arguments as compact JSON
text, with ``arguments`` left ``{}`` until ``toolcall_end``), ``*_end``, then ``done`` (or
``error`` for a scripted error/aborted message). Every partial is a fresh shallow copy. The
abort signal is checked before ``start`` and between chunks. A call needs a running event loop.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from pi_coder.ai.events import (
    AssistantMessageEventStream,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.registry import Provider
from pi_coder.ai.types import (
    AssistantMessage,
    Context,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    now_ms,
)
from pi_coder.json_types import JsonValue

__all__ = [
    "ABORTED_MESSAGE",
    "EXHAUSTED_MESSAGE",
    "FauxProvider",
    "FauxResponse",
    "FauxState",
    "faux_message",
    "faux_provider",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
]

EXHAUSTED_MESSAGE = "No more faux responses queued"
ABORTED_MESSAGE = "Request was aborted"

FauxResponse: TypeAlias = (
    AssistantMessage
    | str
    | Callable[
        [Context, StreamOptions | None, "FauxState", Model],
        "AssistantMessage | str | Awaitable[AssistantMessage | str]",
    ]
)


@dataclass(slots=True)
class FauxState:
    """What a faux provider has seen."""

    call_count: int = 0
    """Calls so far, aborted and failed ones included."""
    contexts: list[Context] = field(default_factory=list)
    """The context of every call, in order."""


@dataclass(kw_only=True, repr=False)
class FauxProvider(Provider):
    """A ``Provider`` whose ``stream`` plays scripted responses. Build it with ``faux_provider``."""

    responses: deque[FauxResponse] = field(default_factory=deque)
    default_response: FauxResponse | None = None
    """Used when the queue is empty; None means an empty queue is an error."""
    state: FauxState = field(default_factory=FauxState)
    chunk_delay: float = 0.0
    """Seconds to sleep between chunks (0 still yields to the event loop)."""
    token_size: int = 4
    tokens_per_chunk: tuple[int, ...] = (3, 4, 5)

    def __post_init__(self) -> None:
        self.stream = self.stream_response
        self.requires_key = False

    @property
    def model(self) -> Model:
        """The provider's first model."""
        return self.models[0]

    @property
    def pending(self) -> int:
        """How many queued responses are left."""
        return len(self.responses)

    def append(self, *responses: FauxResponse) -> None:
        """Queue more responses after the current ones."""
        self.responses.extend(responses)

    def stream_response(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """Play the next scripted response (a ``StreamFn``)."""
        self.state.call_count += 1
        self.state.contexts.append(context)
        out = AssistantMessageEventStream()
        signal = options.signal if options is not None else None
        if signal is not None and signal.aborted:
            out.push(ErrorEvent(reason="aborted", error=_failure(model, "aborted", ABORTED_MESSAGE)))
            return out
        if self.responses:
            response: FauxResponse | None = self.responses.popleft()
        else:
            response = self.default_response
        if response is None:
            out.push(ErrorEvent(reason="error", error=_failure(model, "error", EXHAUSTED_MESSAGE)))
            return out
        task = asyncio.get_running_loop().create_task(self._play(response, model, context, options, out))
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)
        return out

    async def _play(
        self,
        response: FauxResponse,
        model: Model,
        context: Context,
        options: StreamOptions | None,
        out: AssistantMessageEventStream,
    ) -> None:
        try:
            scripted = await self._resolve(response, model, context, options)
        except Exception as exc:  # a broken factory is reported like a provider failure
            out.push(ErrorEvent(reason="error", error=_failure(model, "error", str(exc) or type(exc).__name__)))
            return
        await _Player(self, model, options, out).play(_finalize(scripted, model))

    async def _resolve(
        self, response: FauxResponse, model: Model, context: Context, options: StreamOptions | None
    ) -> AssistantMessage:
        resolved: object = response
        if callable(response) and not isinstance(response, AssistantMessage):
            resolved = response(context, options, self.state, model)
            if inspect.isawaitable(resolved):
                resolved = await resolved
        if isinstance(resolved, str):
            return faux_message(resolved)
        if not isinstance(resolved, AssistantMessage):
            raise TypeError(f"faux response must be an AssistantMessage or str, got {type(resolved).__name__}")
        return resolved

    def chunks(self, text: str) -> list[str]:
        """Split ``text`` into the deltas the provider streams."""
        out: list[str] = []
        pos, turn = 0, 0
        while pos < len(text):
            size = self.tokens_per_chunk[turn % len(self.tokens_per_chunk)] * self.token_size
            out.append(text[pos : pos + size])
            pos += size
            turn += 1
        return out


_tasks: set[asyncio.Task[None]] = set()


class _Aborted(Exception):
    pass


class _Player:
    """Streams one finalized message, keeping the partial as a list of finished blocks."""

    def __init__(
        self,
        provider: FauxProvider,
        model: Model,
        options: StreamOptions | None,
        out: AssistantMessageEventStream,
    ) -> None:
        self.provider = provider
        self.signal = options.signal if options is not None else None
        self.out = out
        self.content: list[TextContent | ThinkingContent | ToolCall] = []
        self.partial = AssistantMessage(
            content=[], api=model.api, provider=model.provider, model=model.id, stop_reason="pending"
        )

    def snapshot(self) -> AssistantMessage:
        return self.partial.model_copy(update={"content": list(self.content)})

    async def tick(self) -> None:
        delay = self.provider.chunk_delay
        await asyncio.sleep(delay if delay > 0 else 0)
        if self.signal is not None and self.signal.aborted:
            raise _Aborted

    async def play(self, final: AssistantMessage) -> None:
        self.partial.timestamp = final.timestamp
        out = self.out
        try:
            out.push(StartEvent(partial=self.snapshot()))
            for index, block in enumerate(final.content):
                await self.tick()
                if isinstance(block, TextContent):
                    await self.play_text(index, block)
                elif isinstance(block, ThinkingContent):
                    await self.play_thinking(index, block)
                elif isinstance(block, ToolCall):
                    await self.play_tool_call(index, block)
            await self.tick()
        except _Aborted:
            aborted = self.snapshot()
            aborted.stop_reason = "aborted"
            aborted.error_message = ABORTED_MESSAGE
            out.push(ErrorEvent(reason="aborted", error=aborted))
            return
        if final.stop_reason in ("error", "aborted"):
            out.push(ErrorEvent(reason=final.stop_reason, error=final))
        else:
            out.push(DoneEvent(reason=final.stop_reason, message=final))  # type: ignore[arg-type]

    async def play_text(self, index: int, block: TextContent) -> None:
        self.content.append(TextContent(text=""))
        self.out.push(TextStartEvent(content_index=index, partial=self.snapshot()))
        text = ""
        for chunk in self.provider.chunks(block.text):
            await self.tick()
            text += chunk
            self.content[index] = TextContent(text=text)
            self.out.push(TextDeltaEvent(content_index=index, delta=chunk, partial=self.snapshot()))
        self.content[index] = block
        self.out.push(TextEndEvent(content_index=index, content=block.text, partial=self.snapshot()))

    async def play_thinking(self, index: int, block: ThinkingContent) -> None:
        if block.redacted:  # a redacted block arrives complete
            self.content.append(block)
            self.out.push(ThinkingStartEvent(content_index=index, partial=self.snapshot()))
            self.out.push(ThinkingEndEvent(content_index=index, content=block.thinking, partial=self.snapshot()))
            return
        self.content.append(ThinkingContent(thinking=""))
        self.out.push(ThinkingStartEvent(content_index=index, partial=self.snapshot()))
        text = ""
        for chunk in self.provider.chunks(block.thinking):
            await self.tick()
            text += chunk
            self.content[index] = ThinkingContent(thinking=text)
            self.out.push(ThinkingDeltaEvent(content_index=index, delta=chunk, partial=self.snapshot()))
        self.content[index] = block
        self.out.push(ThinkingEndEvent(content_index=index, content=block.thinking, partial=self.snapshot()))

    async def play_tool_call(self, index: int, block: ToolCall) -> None:
        self.content.append(ToolCall(id=block.id, name=block.name, arguments={}))
        self.out.push(ToolCallStartEvent(content_index=index, partial=self.snapshot()))
        raw = json.dumps(block.arguments, separators=(",", ":"), ensure_ascii=False)
        for chunk in self.provider.chunks(raw):
            await self.tick()
            self.out.push(ToolCallDeltaEvent(content_index=index, delta=chunk, partial=self.snapshot()))
        self.content[index] = block
        self.out.push(ToolCallEndEvent(content_index=index, tool_call=block, partial=self.snapshot()))


def _failure(model: Model, reason: str, message: str) -> AssistantMessage:
    return AssistantMessage(
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason=reason,
        error_message=message,
    )


def _finalize(scripted: AssistantMessage, model: Model) -> AssistantMessage:
    """A fresh copy of a scripted message, stamped with the model when it names none."""
    final = scripted.model_copy(deep=True)
    final.api = final.api or model.api
    final.provider = final.provider or model.provider
    final.model = final.model or model.id
    final.timestamp = now_ms()
    if final.stop_reason == "pending":
        final.stop_reason = "stop"
    usage = final.usage
    if usage.cost.total == 0 and (usage.input or usage.output or usage.cache_read or usage.cache_write):
        from pi_coder.ai.cost import calculate_cost

        calculate_cost(model, usage)
    return final


# ---------------------------------------------------------------------- builders


def faux_text(text: str, *, signature: str | None = None) -> TextContent:
    """A text block."""
    return TextContent(text=text, text_signature=signature)


def faux_thinking(thinking: str, *, signature: str | None = None, redacted: bool | None = None) -> ThinkingContent:
    """A thinking block (``redacted=True`` streams it as one complete block)."""
    return ThinkingContent(thinking=thinking, thinking_signature=signature, redacted=redacted)


def faux_tool_call(name: str, args: Mapping[str, JsonValue] | None = None, id: str | None = None) -> ToolCall:
    """A tool-call block; ``id`` defaults to a fresh ``call_<hex>``."""
    return ToolCall(id=id or f"call_{uuid.uuid4().hex[:12]}", name=name, arguments=dict(args or {}))


def faux_message(
    *blocks: TextContent | ThinkingContent | ToolCall | str,
    stop_reason: str | None = None,
    error_message: str | None = None,
    usage: Usage | None = None,
) -> AssistantMessage:
    """A scripted assistant message.

    Args:
        *blocks: Content blocks; a string is a text block.
        stop_reason: Defaults to ``toolUse`` when a tool call is present, else ``stop``.
        error_message: For scripted ``error``/``aborted`` messages.
        usage: Token usage to report (cost is computed from the model's prices if zero).

    Returns:
        The message; api/provider/model are filled in by the provider at call time.
    """
    content = [TextContent(text=b) if isinstance(b, str) else b for b in blocks]
    if stop_reason is None:
        stop_reason = "toolUse" if any(isinstance(b, ToolCall) for b in content) else "stop"
    return AssistantMessage(
        content=content,
        stop_reason=stop_reason,
        error_message=error_message,
        usage=usage if usage is not None else Usage(),
    )


def _echo(context: Context, options: StreamOptions | None, state: FauxState, model: Model) -> AssistantMessage:
    """The demo script: repeat the last user text, with a rough token count as usage."""
    text = ""
    chars = 0
    for message in context.messages:
        content = getattr(message, "content", "")
        body = content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)
        chars += len(body)
        if message.role == "user":
            text = body
    reply = f"You said: {text}" if text.strip() else "Hello from the faux provider."
    usage = Usage(input=(chars + 3) // 4, output=(len(reply) + 3) // 4)
    usage.total_tokens = usage.input + usage.output
    return faux_message(reply, usage=usage)


def faux_provider(
    responses: list[FauxResponse] | None = None,
    *,
    name: str = "faux",
    model_id: str = "faux-1",
    model_name: str | None = None,
    api: str = "faux",
    reasoning: bool = False,
    context_window: int = 128_000,
    max_tokens: int = 16_384,
    cost: ModelCost | None = None,
    chunk_delay: float = 0.0,
) -> FauxProvider:
    """Build a faux provider with one model.

    Args:
        responses: Scripted responses, played in order. None selects the demo script (echo
            the last user text, forever); ``[]`` means every call fails with
            "No more faux responses queued" until ``append`` adds some.
        name: Provider name (``Model.provider``).
        model_id: The model's id.
        model_name: The model's display name (defaults to the id).
        api: The model's ``api`` string.
        reasoning: Whether the model claims reasoning support.
        context_window: The model's context window.
        max_tokens: The model's output limit.
        cost: Prices per million tokens (zeros by default).
        chunk_delay: Seconds between streamed chunks, for watching a UI stream.

    Returns:
        A ``FauxProvider``, accepted by ``Models.set_provider``.
    """
    model = Model(
        id=model_id,
        name=model_name or model_id,
        api=api,
        provider=name,
        reasoning=reasoning,
        input=["text", "image"],
        cost=cost or ModelCost(),
        context_window=context_window,
        max_tokens=max_tokens,
    )
    return FauxProvider(
        name=name,
        api=api,
        models=[model],
        responses=deque(responses or ()),
        default_response=_echo if responses is None else None,
        chunk_delay=chunk_delay,
    )
