"""A scriptable model API server on 127.0.0.1 for provider, CLI and TUI tests.

It speaks both wire formats the providers use: Anthropic Messages (``POST .../v1/messages``)
and OpenAI Chat Completions (``POST .../chat/completions``), picking the format from the
request path, so one script works for either provider. Each request takes the next scripted
``Turn`` from a queue; every request is recorded for assertions.

Quick start (the ``sse_server`` fixture is registered in ``tests/conftest.py``)::

    from tests.support.sse_server import Text, Thinking, ToolCall, Turn, error_turn

    async def test_two_turns(sse_server):
        sse_server.enqueue(
            Turn([ToolCall("read", {"path": "a.txt"}, id="call_1")]),   # stop -> tool_use
            Turn([Text("The file says hi.")], usage={"input": 50, "output": 7}),
        )
        model = sse_server.model("anthropic-messages")   # or "openai-completions"
        ...  # run the agent / CLI with this model and any api key
        first = sse_server.requests[0]
        assert first.path == "/v1/messages" and first.json["messages"][0]["role"] == "user"

For a CLI run in a subprocess, point a models.toml provider at ``sse_server.anthropic_base_url``
(``api = "anthropic-messages"``) or ``sse_server.openai_base_url`` (``api =
"openai-completions"``), any ``api_key``.

Scripting (all ``Turn`` fields are optional):

- ``Turn(blocks, stop=None, usage=None)``: blocks are ``Text(text)``,
  ``Thinking(text, signature="sig")``, ``RedactedThinking(data)`` (Anthropic only) and
  ``ToolCall(name, arguments, id=None)`` (``arguments`` a dict or raw JSON text). ``stop`` is
  the wire stop reason (default ``tool_use``/``tool_calls`` when there is a tool call, else
  ``end_turn``/``stop``; ``None`` on OpenAI is sent as JSON null). ``usage`` keys are Pi's:
  ``input``, ``output``, ``cache_read``, ``cache_write`` (OpenAI ``prompt_tokens`` is
  ``input + cache_read``).
- ``delta_chars=4``: characters per text/thinking/argument delta.
- ``chunk_size=None``: bytes per HTTP write (None: one write per SSE event). Boundaries may
  fall inside a UTF-8 character. ``delay=0.0``: seconds to sleep between writes (drip).
- ``hang=None``: seconds to wait before sending anything (``math.inf``: until the client
  disconnects or the server stops).
- ``close_after=None``: close the connection abruptly after this many body bytes.
- ``error_event=None``: an in-stream API error message sent after the blocks (instead of
  the normal end).
- ``raw=None``: exact SSE body bytes to stream instead of generating them.
- ``error_turn(status, message, error_type=None, retry_after=None, retry_after_ms=None,
  body=None)``: an HTTP error response with the provider's JSON error shape (or ``body``).
- ``Turn(..., headers={...})``: extra response headers. ``Turn(..., format="anthropic")``
  forces a wire format.

An unscripted request gets a 400 with the message "sse_server: no scripted response left".

Recording: ``server.requests`` is a list of ``RecordedRequest`` (``method``, ``path``,
``headers`` with lower-case names, ``body`` bytes, ``json``), each with
``wait_disconnected(timeout)`` (True once the server saw the client close the connection
before the response was complete) and ``completed`` (the whole response was written).
``server.wait_for_requests(n, timeout)`` blocks until ``n`` requests arrived. In async tests
use ``await server.wait_for_requests_async(n)`` / ``await request.wait_disconnected_async()``
so the event loop (which runs the provider) keeps going.

``encode_anthropic(turn)`` / ``encode_openai(turn)`` give a turn's SSE body bytes (used by
``bench/stream_throughput.py`` to prebuild large bodies).
"""

from __future__ import annotations

import asyncio
import json
import math
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import pytest

__all__ = [
    "RecordedRequest",
    "RedactedThinking",
    "SSEServer",
    "Text",
    "Thinking",
    "ToolCall",
    "Turn",
    "encode_anthropic",
    "encode_openai",
    "error_turn",
    "sse_server",
]

WireFormat = Literal["anthropic", "openai"]


# ---------------------------------------------------------------------------- script


@dataclass
class Text:
    text: str


@dataclass
class Thinking:
    text: str
    signature: str = "sig"


@dataclass
class RedactedThinking:
    data: str


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


Block = Text | Thinking | RedactedThinking | ToolCall


@dataclass
class Turn:
    """One scripted response (see the module docstring)."""

    blocks: list[Block] = field(default_factory=list)
    stop: str | None = "auto"
    usage: dict[str, int] | None = None
    delta_chars: int = 4
    chunk_size: int | None = None
    delay: float = 0.0
    hang: float | None = None
    close_after: int | None = None
    error_event: str | None = None
    raw: bytes | None = None
    status: int = 200
    error_message: str = ""
    error_type: str | None = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    format: WireFormat | None = None
    model: str = "test-model"
    reasoning_field: str = "reasoning_content"


def error_turn(
    status: int,
    message: str = "error",
    *,
    error_type: str | None = None,
    retry_after: float | str | None = None,
    retry_after_ms: float | None = None,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Turn:
    """An HTTP error response in the provider's JSON error shape."""
    extra = dict(headers or {})
    if retry_after is not None:
        extra["retry-after"] = str(retry_after)
    if retry_after_ms is not None:
        extra["retry-after-ms"] = str(retry_after_ms)
    return Turn(status=status, error_message=message, error_type=error_type, body=body, headers=extra)


def _pieces(text: str, size: int) -> Iterator[str]:
    size = max(1, size)
    for i in range(0, len(text), size):
        yield text[i : i + size]


def _args_text(call: ToolCall) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _anthropic_events(turn: Turn) -> Iterator[bytes]:
    usage = turn.usage or {}

    def ev(kind: str, data: dict[str, Any]) -> bytes:
        return f"event: {kind}\ndata: {_dumps(data)}\n\n".encode()

    yield ev(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_test",
                "type": "message",
                "role": "assistant",
                "model": turn.model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": usage.get("input", 0),
                    "output_tokens": 1,
                    "cache_read_input_tokens": usage.get("cache_read", 0),
                    "cache_creation_input_tokens": usage.get("cache_write", 0),
                },
            },
        },
    )
    yield ev("ping", {"type": "ping"})
    n = turn.delta_chars
    for i, block in enumerate(turn.blocks):
        if isinstance(block, Text):
            yield ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            for piece in _pieces(block.text, n):
                yield ev("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": piece}})
        elif isinstance(block, Thinking):
            yield ev(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
            )
            for piece in _pieces(block.text, n):
                yield ev(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": piece}},
                )
            if block.signature:
                yield ev(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": block.signature}},
                )
        elif isinstance(block, RedactedThinking):
            yield ev(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": {"type": "redacted_thinking", "data": block.data}},
            )
        else:
            yield ev(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {"type": "tool_use", "id": block.id or f"toolu_{i}", "name": block.name, "input": {}},
                },
            )
            for piece in _pieces(_args_text(block), n):
                yield ev(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": piece}},
                )
        yield ev("content_block_stop", {"type": "content_block_stop", "index": i})
    if turn.error_event is not None:
        yield ev("error", {"type": "error", "error": {"type": turn.error_type or "overloaded_error", "message": turn.error_event}})
        return
    stop = turn.stop
    if stop == "auto":
        stop = "tool_use" if any(isinstance(b, ToolCall) for b in turn.blocks) else "end_turn"
    yield ev(
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": usage.get("output", 0)}},
    )
    yield ev("message_stop", {"type": "message_stop"})


def _openai_events(turn: Turn) -> Iterator[bytes]:
    usage = turn.usage
    head = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0, "model": turn.model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {_dumps(body)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    n = turn.delta_chars
    tool_slot = 0
    for i, block in enumerate(turn.blocks):
        if isinstance(block, Text):
            for piece in _pieces(block.text, n):
                yield chunk({"content": piece})
        elif isinstance(block, Thinking):
            for piece in _pieces(block.text, n):
                yield chunk({turn.reasoning_field: piece})
        elif isinstance(block, ToolCall):
            call_id = block.id or f"call_{i}"
            yield chunk(
                {"tool_calls": [{"index": tool_slot, "id": call_id, "type": "function", "function": {"name": block.name, "arguments": ""}}]}
            )
            for piece in _pieces(_args_text(block), n):
                yield chunk({"tool_calls": [{"index": tool_slot, "function": {"arguments": piece}}]})
            tool_slot += 1
    if turn.error_event is not None:
        yield f"data: {_dumps({'error': {'message': turn.error_event, 'type': turn.error_type or 'server_error'}})}\n\n".encode()
        return
    stop = turn.stop
    if stop == "auto":
        stop = "tool_calls" if any(isinstance(b, ToolCall) for b in turn.blocks) else "stop"
    yield chunk({}, stop)
    if usage is not None:
        prompt = usage.get("input", 0) + usage.get("cache_read", 0)
        body = {
            **head,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": usage.get("output", 0),
                "total_tokens": prompt + usage.get("output", 0),
                "prompt_tokens_details": {"cached_tokens": usage.get("cache_read", 0)},
                "completion_tokens_details": {"reasoning_tokens": usage.get("reasoning", 0)},
            },
        }
        yield f"data: {_dumps(body)}\n\n".encode()
    yield b"data: [DONE]\n\n"


def encode_anthropic(turn: Turn) -> bytes:
    """The Anthropic Messages SSE body of ``turn``."""
    return b"".join(_anthropic_events(turn))


def encode_openai(turn: Turn) -> bytes:
    """The OpenAI Chat Completions SSE body of ``turn``."""
    return b"".join(_openai_events(turn))


def _error_body(turn: Turn, fmt: WireFormat) -> bytes:
    if turn.body is not None:
        return turn.body
    if fmt == "anthropic":
        kind = turn.error_type or "api_error"
        return _dumps({"type": "error", "error": {"type": kind, "message": turn.error_message}}).encode()
    return _dumps({"error": {"message": turn.error_message, "type": turn.error_type or "api_error", "code": None}}).encode()


# ---------------------------------------------------------------------------- server


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any
    received_at: float
    completed: bool = False
    """The whole scripted response was written."""
    disconnected: threading.Event = field(default_factory=threading.Event)
    disconnected_at: float | None = None

    def wait_disconnected(self, timeout: float = 30.0) -> bool:
        """True once the client closed the connection before the response was complete."""
        return self.disconnected.wait(timeout)

    async def wait_disconnected_async(self, timeout: float = 30.0) -> bool:
        """``wait_disconnected`` for async tests (does not block the event loop)."""
        return await asyncio.to_thread(self.disconnected.wait, timeout)

    def _mark_disconnected(self) -> None:
        if not self.disconnected.is_set():
            self.disconnected_at = time.monotonic()
            self.disconnected.set()


class _ClientGone(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self._reply_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        record = RecordedRequest(
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            json=parsed,
            received_at=time.monotonic(),
        )
        owner = self.server.owner
        turn = owner._take(record)
        # Pi's Anthropic client posts to /v1/messages?beta=true: the query does not pick the format.
        path = self.path.split("?", 1)[0].rstrip("/")
        fmt: WireFormat = "anthropic" if path.endswith("/messages") else "openai"
        if turn is None:
            message = "sse_server: no scripted response left"
            self._reply_json(400, json.loads(_error_body(Turn(error_message=message, error_type="invalid_request_error"), fmt)))
            return
        fmt = turn.format or fmt
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            if turn.hang is not None:
                self._wait(turn.hang, record)
            if turn.status != 200:
                payload = _error_body(turn, fmt)
                self.send_response(turn.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in turn.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
                record.completed = True
                return
            self._stream(turn, fmt, record)
        except _ClientGone:
            record._mark_disconnected()
            self.close_connection = True
        except OSError:
            record._mark_disconnected()
            self.close_connection = True

    def _reply_json(self, status: int, data: Any) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _client_closed(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _wait(self, seconds: float, record: RecordedRequest) -> None:
        """Sleep, noticing promptly when the client goes away or the server stops."""
        deadline = time.monotonic() + seconds
        stopping = self.server.owner._stopping
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            step = min(remaining, 0.02) if not math.isinf(remaining) else 0.02
            try:
                readable, _, _ = select.select([self.connection], [], [], step)
            except OSError as exc:
                raise _ClientGone from exc
            if readable and self._client_closed():
                raise _ClientGone
            if stopping.is_set():
                raise _ClientGone

    def _stream(self, turn: Turn, fmt: WireFormat, record: RecordedRequest) -> None:
        if turn.raw is not None:
            pieces: list[bytes] = [turn.raw]
        else:
            pieces = list(_anthropic_events(turn) if fmt == "anthropic" else _openai_events(turn))
        if turn.chunk_size is not None:
            data = b"".join(pieces)
            size = max(1, turn.chunk_size)
            pieces = [data[i : i + size] for i in range(0, len(data), size)]
        headers = {"content-type": "text/event-stream", "cache-control": "no-cache"}
        headers.update({name.lower(): value for name, value in turn.headers.items()})
        headers["transfer-encoding"] = "chunked"
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        sent = 0
        write = self.wfile.write
        for i, piece in enumerate(pieces):
            if turn.close_after is not None and sent + len(piece) > turn.close_after:
                piece = piece[: turn.close_after - sent]
                if piece:
                    write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if i and turn.delay:
                self._wait(turn.delay, record)
            elif i % 64 == 0 and self._client_closed():
                raise _ClientGone
            write(b"%x\r\n%s\r\n" % (len(piece), piece))
            sent += len(piece)
        write(b"0\r\n\r\n")
        record.completed = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: SSEServer


class SSEServer:
    """A scripted Anthropic/OpenAI-compatible SSE server on 127.0.0.1 (random port)."""

    def __init__(self) -> None:
        self._turns: deque[Turn] = deque()
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self.requests: list[RecordedRequest] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------- lifecycle

    def start(self) -> SSEServer:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> SSEServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -------------------------------------------------------------- addresses

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for ``anthropic-messages`` models (the provider appends ``/v1/messages``)."""
        return self.url

    @property
    def openai_base_url(self) -> str:
        """Base URL for ``openai-completions`` models (the provider appends ``/chat/completions``)."""
        return self.url + "/v1"

    def model(self, api: str = "anthropic-messages", **overrides: Any) -> Any:
        """A ``pi_coder.ai.Model`` pointing at this server (``provider="sse-test"``, id ``test-model``).

        Args:
            api: ``anthropic-messages`` or ``openai-completions``.
            **overrides: Other ``Model`` fields (``reasoning``, ``cost``, ``compat``, ...).
        """
        from pi_coder.ai.types import Model

        base = self.anthropic_base_url if api == "anthropic-messages" else self.openai_base_url
        fields: dict[str, Any] = {"id": "test-model", "api": api, "provider": "sse-test", "base_url": base}
        fields.update(overrides)
        return Model(**fields)

    # -------------------------------------------------------------- script and records

    def enqueue(self, *turns: Turn) -> None:
        """Append scripted responses; each request takes the next one."""
        with self._lock:
            self._turns.extend(turns)

    @property
    def pending(self) -> int:
        """Scripted responses not used yet."""
        with self._lock:
            return len(self._turns)

    def clear(self) -> int:
        """Drop the scripted responses not used yet; returns how many there were."""
        with self._lock:
            count = len(self._turns)
            self._turns.clear()
            return count

    def _take(self, record: RecordedRequest) -> Turn | None:
        with self._lock:
            self.requests.append(record)
            self._lock.notify_all()
            return self._turns.popleft() if self._turns else None

    async def wait_for_requests_async(self, count: int, timeout: float = 30.0) -> bool:
        """``wait_for_requests`` for async tests (does not block the event loop)."""
        return await asyncio.to_thread(self.wait_for_requests, count, timeout)

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> bool:
        """Block until at least ``count`` requests have arrived."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.requests) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._lock.wait(remaining)
            return True


@pytest.fixture
def sse_server() -> Iterator[SSEServer]:
    """A started ``SSEServer``, stopped after the test."""
    with SSEServer() as server:
        yield server
