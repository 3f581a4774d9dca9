"""Shared streaming machinery of the HTTP providers.

:class:`StreamWriter` owns the live partial ``AssistantMessage`` (one
object mutated in place, so every event's ``partial`` is the same object) and pushes protocol events. :func:`run_provider` runs a provider
body in a task, turns every failure into an ``error`` event and cancels the task
when the abort signal fires, which closes the HTTP connection at once.

Hot-path notes (the benchmark streams 50,000 events):

- Deltas are applied to the partial once per network chunk (:meth:`StreamWriter.flush`), not
  once per event: text deltas are collected in a list and joined, tool-call arguments are
  re-parsed once. A consumer only runs when the provider task awaits the next chunk, so it
  observes exactly the partial it would see with per-delta updates, while a 400 KB answer no
  longer costs a full copy of the text per delta (~10 GB of copying for 50,000 deltas).
  Events that expose text directly (``*_end``, ``done``, ``error``) flush first.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol, TypeVar

import httpx

from pi_coder.ai import _http
from pi_coder.ai._http import api_error_text, describe_transport_error
from pi_coder.ai._partial_json import parse_final_json, parse_streaming_json
from pi_coder.ai._sse import ServerSentEvent, SSEDecoder
from pi_coder.ai.cost import calculate_cost
from pi_coder.ai.errors import ProviderError, ProviderResponseError, ProviderTimeoutError
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
from pi_coder.ai.keys import env_vars_for
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.types import (
    AssistantMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from pi_coder.json_types import JsonObject

__all__ = [
    "ABORTED_MESSAGE",
    "ContentWatchdog",
    "post_and_stream",
    "StreamParser",
    "StreamWriter",
    "call_hook",
    "describe_exception",
    "env_hint",
    "idle_timeout_s",
    "provider_label",
    "pump_sse",
    "require_api_key",
    "run_provider",
]

ABORTED_MESSAGE = "Request was aborted"

_Arg = TypeVar("_Arg")

_LABELS = {"anthropic": "Anthropic", "openai": "OpenAI"}
_tasks: set[asyncio.Task[None]] = set()


def provider_label(model: Model) -> str:
    """How error messages name the provider (``Anthropic``, ``OpenAI``, else the provider id)."""
    return _LABELS.get(model.provider, model.provider or model.api)


def env_hint(model: Model) -> str | None:
    """The environment variable(s) that hold this provider's key, for messages."""
    names = sorted(env_vars_for(model.provider), key=lambda n: not n.endswith("_API_KEY"))
    return " or ".join(names) if names else None


def require_api_key(model: Model, options: StreamOptions) -> str | None:
    """The key to send, or a clear error when a built-in cloud provider has none.

    Providers without a known environment variable (custom servers from models.toml) may run
    without a key; the request is then sent without credentials.

    Raises:
        ProviderError: The provider needs a key and ``options.api_key`` is empty.
    """
    key = options.api_key.strip() if options.api_key else None
    if key:
        if not key.isascii() or any(ch < " " or ch == "\x7f" for ch in key):
            # httpx would refuse the header with the key in its message, or fail with a bare codec error.
            where = env_hint(model) or f"api_key of [providers.{model.provider}] in models.toml"
            raise ProviderError(
                f'The API key for provider "{model.provider}" contains a line break, a control character '
                f"or a non-ASCII character; check {where}."
            )
        return key
    hint = env_hint(model)
    if hint is None:
        return None
    raise ProviderError(f'No API key for provider "{model.provider}". Set {hint} or pass --api-key.')


async def call_hook(hook: Callable[[_Arg], object] | None, arg: _Arg) -> object:
    """Call an optional sync-or-async hook with ``arg`` and return its (awaited) result."""
    if hook is None:
        return None
    result = hook(arg)
    if inspect.isawaitable(result):
        result = await result
    return result


def describe_exception(exc: BaseException) -> str:
    """The ``errorMessage`` for an exception: its text, with the type for bare lookups."""
    text = str(exc)
    if isinstance(exc, ProviderError) and text:
        return text
    if not text or isinstance(exc, (LookupError, AttributeError, TypeError)):
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text


class StreamWriter:
    """Builds the live partial message of one response and pushes its events."""

    __slots__ = (
        "stream",
        "model",
        "output",
        "secret",
        "_content",
        "_push",
        "_update",
        "_json",
        "_dirty",
        "_open",
        "_open_field",
        "_parts",
    )

    def __init__(self, model: Model) -> None:
        self.stream = AssistantMessageEventStream()
        self.model = model
        self.output = AssistantMessage(
            api=model.api, provider=model.provider, model=model.id, usage=Usage(), stop_reason="pending"
        )
        self.secret: str | None = None
        """The API key, scrubbed from any error message."""
        self._content = self.output.content
        self._push = self.stream.push
        self._update = self.stream.push_update
        self._json: dict[int, str] = {}
        self._dirty: set[int] = set()
        self._open = -1
        """Index of the text/thinking block whose deltas are waiting in ``_parts``."""
        self._open_field = "text"
        self._parts: list[str] = []

    @property
    def done(self) -> bool:
        return self.stream.done

    def start(self) -> None:
        self._push(StartEvent(partial=self.output))

    # ------------------------------------------------------------------ text

    def start_text(self, text: str = "") -> int:
        index = len(self._content)
        self._content.append(TextContent(text=text))
        self._push(TextStartEvent(content_index=index, partial=self.output))
        return index

    def text_delta(self, index: int, delta: str) -> None:
        if index != self._open:
            self._open_block(index, "text")
        self._parts.append(delta)
        self._update(TextDeltaEvent(content_index=index, delta=delta, partial=self.output))

    def end_text(self, index: int) -> None:
        self._apply_parts()
        block = self._content[index]
        assert isinstance(block, TextContent)
        self._push(TextEndEvent(content_index=index, content=block.text, partial=self.output))

    # ------------------------------------------------------------------ thinking

    def start_thinking(self, thinking: str = "", signature: str | None = None, redacted: bool | None = None) -> int:
        index = len(self._content)
        self._content.append(ThinkingContent(thinking=thinking, thinking_signature=signature, redacted=redacted))
        self._push(ThinkingStartEvent(content_index=index, partial=self.output))
        return index

    def thinking_delta(self, index: int, delta: str) -> None:
        if index != self._open:
            self._open_block(index, "thinking")
        self._parts.append(delta)
        self._update(ThinkingDeltaEvent(content_index=index, delta=delta, partial=self.output))

    def signature_delta(self, index: int, delta: str) -> None:
        fields = self._content[index].__dict__
        fields["thinking_signature"] = (fields["thinking_signature"] or "") + delta

    def end_thinking(self, index: int) -> None:
        self._apply_parts()
        block = self._content[index]
        assert isinstance(block, ThinkingContent)
        self._push(ThinkingEndEvent(content_index=index, content=block.thinking, partial=self.output))

    # ------------------------------------------------------------------ tool calls

    def start_tool_call(self, call_id: str, name: str, arguments: JsonObject | None = None) -> int:
        index = len(self._content)
        self._content.append(ToolCall(id=call_id, name=name, arguments=arguments or {}))
        self._json[index] = ""
        self._push(ToolCallStartEvent(content_index=index, partial=self.output))
        return index

    def tool_call_delta(self, index: int, delta: str) -> None:
        text = self._json.pop(index, "")
        text += delta
        self._json[index] = text
        self._dirty.add(index)
        self._update(ToolCallDeltaEvent(content_index=index, delta=delta, partial=self.output))

    def end_tool_call(self, index: int) -> None:
        block = self._content[index]
        assert isinstance(block, ToolCall)
        self._finalize_arguments(index)
        self._push(ToolCallEndEvent(content_index=index, tool_call=block, partial=self.output))

    def _finalize_arguments(self, index: int) -> None:
        # The repair that makes streaming arguments showable must not make a cut-off call
        # runnable: a final text that is not one JSON object marks the call (agent refuses it).
        block = self._content[index]
        assert isinstance(block, ToolCall)
        raw = self._json.pop(index, None)
        self._dirty.discard(index)
        if raw is not None and (raw or not block.arguments):
            arguments, error = parse_final_json(raw)
            block.__dict__["arguments"] = arguments
            block.arguments_error = error

    def _open_block(self, index: int, field: str) -> None:
        self._apply_parts()
        self._open = index
        self._open_field = field

    def _apply_parts(self) -> None:
        parts = self._parts
        if parts:
            fields = self._content[self._open].__dict__
            name = self._open_field
            text = fields[name]
            fields[name] = ""  # drop the block's reference so `+=` may extend in place
            text += parts[0] if len(parts) == 1 else "".join(parts)
            fields[name] = text
            parts.clear()

    def flush(self) -> None:
        """Apply pending deltas to the partial (call before every await on the network)."""
        if self._parts:
            self._apply_parts()
        if self._dirty:
            for index in self._dirty:
                self._content[index].__dict__["arguments"] = parse_streaming_json(self._json[index])
            self._dirty.clear()

    # ------------------------------------------------------------------ usage and the end

    def new_usage(self) -> Usage:
        """The partial's usage, ready to change: a copy of it on a shallow copy of the partial.

        Events already pushed keep the message, and so the usage, they were sent with (the
        content list is shared, so text stays live). A consumer reads ``event.partial.usage``
        after the provider may have parsed the rest of the HTTP chunk; without the copy a
        ``message_update``'s usage would depend on where the response's chunks were cut.
        Usage changes once or twice a response, so the copies cost nothing measurable.
        """
        output = self.output.model_copy()
        output.usage = self.output.usage.model_copy(deep=True)
        self.output = output
        return output.usage

    def update_cost(self) -> None:
        usage = self.output.usage
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        calculate_cost(self.model, usage)

    def finish(self, reason: str) -> None:
        """Push ``done`` with ``reason`` (stop, length or toolUse)."""
        self.flush()
        for index in list(self._json):  # a tool call the server never closed
            self._finalize_arguments(index)
        self.output.stop_reason = reason  # type: ignore[assignment]
        self._push(DoneEvent(reason=reason, message=self.output))  # type: ignore[arg-type]

    def fail(self, message: str, *, aborted: bool = False) -> None:
        """Push ``error`` keeping the content so far; ignored once the stream is done."""
        if self.stream.done:
            return
        self.flush()
        secret = self.secret
        if secret and len(secret) >= 4:
            # Also the escaped forms a repr() of the header value shows (b'...\\n...').
            for form in {secret, repr(secret)[1:-1], repr(secret.encode("utf-8", "backslashreplace"))[2:-1]}:
                message = message.replace(form, "***")
        output = self.output
        output.stop_reason = "aborted" if aborted else "error"
        output.error_message = message
        self._push(ErrorEvent(reason=output.stop_reason, error=output))


ProviderBody = Callable[[StreamWriter], Awaitable[None]]


def run_provider(model: Model, options: StreamOptions, body: ProviderBody) -> AssistantMessageEventStream:
    """Start ``body`` in a task and return its stream at once.

    The task never raises to the consumer: failures become an ``error`` event (stopReason
    ``error``, or ``aborted`` with "Request was aborted" when the signal fired). Aborting
    cancels the task, so an open HTTP response is closed immediately.

    Args:
        model: The model being called.
        options: Stream options (``signal`` is honoured here).
        body: Coroutine function that performs the request and feeds the writer.

    Returns:
        The event stream.
    """
    writer = StreamWriter(model)
    task = asyncio.get_running_loop().create_task(_drive(writer, options, body))
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return writer.stream


async def _drive(writer: StreamWriter, options: StreamOptions, body: ProviderBody) -> None:
    signal = options.signal
    if signal is not None and signal.aborted:
        writer.fail(ABORTED_MESSAGE, aborted=True)
        return
    task = asyncio.current_task()
    assert task is not None
    cancelled_by_abort = False

    def on_abort() -> None:
        nonlocal cancelled_by_abort
        if not task.done() and not writer.done:
            cancelled_by_abort = True
            task.cancel()

    if signal is not None:
        signal.add_listener(on_abort)
    try:
        await body(writer)
        if not writer.done:
            raise ProviderError("The provider ended the stream without a result")
    except asyncio.CancelledError:
        writer.fail(ABORTED_MESSAGE, aborted=True)
        if cancelled_by_abort:
            task.uncancel()
        else:
            raise
    except Exception as exc:
        if signal is not None and signal.aborted:
            writer.fail(ABORTED_MESSAGE, aborted=True)
        else:
            writer.fail(describe_exception(exc))
    finally:
        if signal is not None:
            signal.remove_listener(on_abort)


class ContentWatchdog:
    """Ends a request that goes ``limit_s`` without a content event (pings do not count).

    Arming costs one timer; :meth:`touch` (once per network chunk that carried a content
    event) only stores the time, and the timer re-arms itself lazily when it fires early.
    When the limit passes, the request task is cancelled and :attr:`expired` is set, so the
    reader can tell the cancellation from an abort.
    """

    __slots__ = ("limit_s", "expired", "_last", "_loop", "_task", "_handle")

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.expired = False
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._last = self._loop.time()
        self._handle: asyncio.TimerHandle | None = None
        if limit_s > 0 and self._task is not None:
            self._handle = self._loop.call_at(self._last + limit_s, self._check)

    def touch(self) -> None:
        self._last = self._loop.time()

    def _check(self) -> None:
        due = self._last + self.limit_s
        if self._loop.time() < due:
            self._handle = self._loop.call_at(due, self._check)
            return
        self._handle = None
        self.expired = True
        assert self._task is not None
        self._task.cancel()

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def error(self, url: str) -> ProviderTimeoutError:
        host = httpx.URL(url)
        where = f"{host.host}:{host.port}" if host.port else host.host
        return ProviderTimeoutError(
            f"Request timed out: no content from {where} for {self.limit_s:g} s, only keep-alive pings or "
            "nothing (setting http_content_timeout_ms)"
        )


def _has_content(events: list[ServerSentEvent]) -> bool:
    for event in events:
        if event.event != "ping" and event.raw.find(b'"ping"', 0, 40) < 0:
            return True
    return False


async def pump_sse(
    writer: StreamWriter,
    response: httpx.Response,
    handle: Callable[[list[ServerSentEvent]], None],
    timeout_s: float,
    watchdog: ContentWatchdog | None = None,
    observe: Callable[[list[ServerSentEvent]], object] | None = None,
) -> None:
    """Read an SSE response to its end, handing each chunk's events to ``observe`` (awaited) and ``handle``.

    Raises:
        ProviderError: The connection broke or went idle.
    """
    content_type = response.headers.get("content-type", "")
    if "json" in content_type:  # a server that ignored "stream": true, or an error with status 200
        body = await response.aread()
        kind, message = api_error_text(body)
        detail = f" ({kind})" if kind else ""
        raise ProviderResponseError(
            f"Expected an event stream from {provider_label(writer.model)}, got JSON{detail}: {message[:300]}"
        )
    if content_type.startswith("text/html"):  # a web server, not the API: base_url is wrong
        page = " ".join((await response.aread())[:2000].decode("utf-8", "replace").split())
        raise ProviderResponseError(
            f"Expected an event stream from {provider_label(writer.model)}, got a web page (text/html); "
            f"check the provider's base_url: {page[:200]}"
        )
    decoder = SSEDecoder()
    decode = decoder.decode
    flush = writer.flush
    touch = watchdog.touch if watchdog is not None else None
    try:
        # Without a content encoding the raw body is the body: skip httpx's decoder layer per chunk.
        encoding = response.headers.get("content-encoding", "").strip().lower()
        chunks = response.aiter_raw() if encoding in ("", "identity") else response.aiter_bytes()
        async for chunk in chunks:
            events = decode(chunk)
            if events:
                if touch is not None and _has_content(events):
                    touch()
                if observe is not None:
                    await call_hook(observe, events)
                handle(events)
                flush()
        events = decoder.flush()
        if events:
            if observe is not None:
                await call_hook(observe, events)
            handle(events)
            flush()
    except httpx.HTTPError as exc:
        flush()
        raise describe_transport_error(exc, str(response.request.url), timeout_s, started=True) from exc
    except ValueError as exc:  # jiter: a data line that is not JSON
        flush()
        raise ProviderResponseError(f"Invalid data in the response stream: {exc}") from exc


def idle_timeout_s(options: StreamOptions, default_s: float) -> float:
    """The idle-read timeout in seconds for this request (0: none)."""
    if options.timeout_ms is not None and options.timeout_ms >= 0:
        return options.timeout_ms / 1000
    return default_s


def _seconds(value_ms: int | None, default_s: float) -> float:
    return value_ms / 1000 if value_ms is not None and value_ms >= 0 else default_s


async def _edited_headers(hook: Callable[[dict[str, str]], object], headers: dict[str, str]) -> dict[str, str]:
    """``on_headers``: edits in place or a returned dict; ``None`` values remove a header."""
    mutable = dict(headers)
    replaced = await call_hook(hook, mutable)
    if isinstance(replaced, dict):
        return {str(k): str(v) for k, v in replaced.items() if v is not None}
    return {str(k): str(v) for k, v in mutable.items() if v is not None}


class StreamParser(Protocol):
    """A provider's parser of one response: fed the SSE events chunk by chunk, then finished."""

    def handle(self, events: list[ServerSentEvent]) -> None: ...

    def finish(self) -> None: ...


async def post_and_stream(
    writer: StreamWriter,
    options: StreamOptions,
    *,
    url: str,
    payload: JsonObject,
    headers: dict[str, str],
    make_parser: Callable[[StreamWriter], StreamParser],
) -> None:
    """POST ``payload`` (after the ``on_payload`` hook), then feed the SSE response to a parser
    built by ``make_parser`` until the stream ends.

    The request is bounded by the connect, idle and content timeouts of ``options`` (falling
    back to the HTTP context's settings). Shared by the HTTP providers: only the payload, URL,
    headers and parser differ.
    """
    model = writer.model
    replaced = await call_hook(options.on_payload, payload)
    if isinstance(replaced, dict):
        payload = replaced
    if options.on_headers is not None:
        headers = await _edited_headers(options.on_headers, headers)
    body = json.dumps(payload).encode()
    context = options.http if options.http is not None else _http.DEFAULT_HTTP
    conf = context.settings
    timeout_s = idle_timeout_s(options, conf.idle_timeout_s)
    connect_s = _seconds(options.connect_timeout_ms, conf.connect_timeout_s)
    timeout = httpx.Timeout(timeout_s or None, connect=connect_s or None)
    client = context.client()
    watchdog = ContentWatchdog(_seconds(options.content_timeout_ms, conf.content_timeout_s))
    try:
        response = await _http.send_with_retries(
            client,
            lambda: client.build_request("POST", url, content=body, headers=headers, timeout=timeout),
            label=provider_label(model),
            max_retries=options.max_retries,
            max_retry_delay_ms=options.max_retry_delay_ms,
            timeout_s=timeout_s,
            env_hint=env_hint(model),
            conf=conf,
            connect_timeout_s=connect_s,
        )
        try:
            seen: JsonObject = {"status": response.status_code, "headers": dict(response.headers)}
            await call_hook(options.on_response, seen)
            writer.start()
            parser = make_parser(writer)
            await pump_sse(writer, response, parser.handle, timeout_s, watchdog, options.on_stream_event)
        finally:
            await response.aclose()
    except asyncio.CancelledError:
        if not watchdog.expired:
            raise
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        writer.flush()
        raise watchdog.error(url) from None
    finally:
        watchdog.cancel()
    parser.finish()


# ---------------------------------------------------------------------------- reading wire JSON
# A server's answer is decoded JSON: each field is narrowed where it is read, and a value of the
# wrong JSON type counts as missing.


def wire_text(value: object) -> str:
    """``value`` when the server sent a string there, else the empty string."""
    return value if isinstance(value, str) else ""


def wire_object(value: object) -> Mapping[str, object]:
    """``value`` when the server sent a JSON object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def wire_count(value: object) -> int:
    """A token count the server sent (0 when it is missing or not a number)."""
    return value if isinstance(value, int) else 0

