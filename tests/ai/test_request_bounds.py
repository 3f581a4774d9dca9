"""Every request is bounded and every failure names its cause (issues 12 and 19).

Real HTTP servers on 127.0.0.1: the scripted model server, plus raw sockets for a server that
accepts and closes. Timeouts are the StreamOptions fields the session fills from settings.
"""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from pi_coder.ai._http import HttpContext
from pi_coder.ai.errors import is_retryable_error
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.providers import anthropic, openai_completions
from pi_coder.ai.types import AssistantMessage, Context, Model, SystemMessage, UserMessage
from tests.support.sse_server import SSEServer, Text, Turn

APIS = {"anthropic-messages": anthropic, "openai-completions": openai_completions}


@pytest.fixture(params=list(APIS))
def api(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def http() -> object:
    context = HttpContext()
    yield context
    await context.aclose()


def context() -> Context:
    return Context(messages=[SystemMessage(content="sys"), UserMessage(content="hi")])


async def run(model: Model, http: HttpContext, **options: object) -> tuple[list[str], AssistantMessage]:
    stream = APIS[model.api].stream(model, context(), StreamOptions(api_key="k", http=http, **options))  # type: ignore[arg-type]
    kinds = [event.type async for event in stream]
    return kinds, await stream.result()


def _ping_body(api: str, pings: int) -> tuple[bytes, int]:
    """A stream that starts, then only keeps the connection alive."""
    if api == "anthropic-messages":
        start = {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {"input_tokens": 1}}}
        head = b"event: message_start\ndata: " + json.dumps(start).encode() + b"\n\n"
        ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    else:
        head = b""
        ping = b": keep-alive\n\n"
    return head + ping * pings, len(ping)


async def test_never_answering_server_errors_within_the_idle_bound(sse_server: SSEServer, api: str, http: HttpContext) -> None:
    """No first byte within timeout_ms: one attempt, a message naming the wait and the setting."""
    sse_server.enqueue(Turn([Text("late")], hang=math.inf), Turn([Text("late")], hang=math.inf))
    began = time.monotonic()
    kinds, message = await run(sse_server.model(api), http, timeout_ms=400)
    assert time.monotonic() - began < 30  # the server never answers
    assert kinds == ["error"]
    assert message.error_message == (
        f"Request timed out after 0.4 s waiting for the first byte from 127.0.0.1:{sse_server.port} "
        "(setting http_idle_timeout_ms)"
    )
    assert len(sse_server.requests) == 1
    assert is_retryable_error(message)  # Pi 1.6 retries timeouts at the session level (bounded there)


async def test_ping_forever_server_errors_within_the_content_bound(sse_server: SSEServer, api: str, http: HttpContext) -> None:
    """Pings keep bytes flowing, so the idle timeout never fires; the content timeout does."""
    body, size = _ping_body(api, pings=400)
    sse_server.enqueue(Turn(raw=body, chunk_size=size, delay=0.05))  # 20 s of pings
    began = time.monotonic()
    kinds, message = await run(sse_server.model(api), http, timeout_ms=5000, content_timeout_ms=600)
    elapsed = time.monotonic() - began
    assert 0.5 < elapsed < 15  # the pings go on for 20 s
    assert kinds[-1] == "error"
    assert message.stop_reason == "error"
    assert message.error_message == (
        f"Request timed out: no content from 127.0.0.1:{sse_server.port} for 0.6 s, only keep-alive pings "
        "or nothing (setting http_content_timeout_ms)"
    )
    assert await sse_server.requests[0].wait_disconnected_async()


async def test_content_events_keep_a_slow_stream_alive(sse_server: SSEServer, api: str, http: HttpContext) -> None:
    """A stream slower in total than the content timeout succeeds while content keeps coming."""
    sse_server.enqueue(Turn([Text("abcdefghijklmnop")], delta_chars=1, delay=0.08))  # ~1.6 s in all
    kinds, message = await run(sse_server.model(api), http, content_timeout_ms=700)
    assert message.stop_reason == "stop" and message.text() == "abcdefghijklmnop"
    assert kinds[-1] == "done"


async def test_connection_refused_is_named(api: str, http: HttpContext) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}" + ("/v1" if api == "openai-completions" else "")
    kinds, message = await run(Model(id="m", api=api, provider="t", base_url=base), http)
    assert kinds == ["error"]
    assert message.error_message == f"Connection error: connection refused (127.0.0.1:{port})"
    assert is_retryable_error(message)


def _read_request(conn: socket.socket) -> None:
    """Read the whole request (headers, then Content-Length bytes of body). Closing with a part
    unread would reset the connection (RST), and the client would see a reset, not a close."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


@pytest.fixture
def closing_server() -> Iterator[int]:
    """Accepts a connection, reads the request, closes without answering."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    _read_request(conn)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(2)
    listener.close()


async def test_closed_before_a_response_is_named(closing_server: int, api: str, http: HttpContext) -> None:
    base = f"http://127.0.0.1:{closing_server}" + ("/v1" if api == "openai-completions" else "")
    kinds, message = await run(Model(id="m", api=api, provider="t", base_url=base), http)
    assert kinds == ["error"]
    assert message.error_message == (
        f"Connection error: server closed the connection before sending a response (127.0.0.1:{closing_server})"
    )


async def test_llama_cpp_error_event_shows_the_server_message(sse_server: SSEServer, http: HttpContext) -> None:
    """llama.cpp's Anthropic endpoint: `event: error` whose data's type is server_error."""
    start = {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {"input_tokens": 1}}}
    error = {"type": "server_error", "code": 500, "message": "failed to decode the batch: KV cache is full"}
    body = (
        b"event: message_start\ndata: " + json.dumps(start).encode() + b"\n\n"
        b"event: error\ndata: " + json.dumps(error).encode() + b"\n\n"
    )
    sse_server.enqueue(Turn(raw=body))
    kinds, message = await run(sse_server.model("anthropic-messages"), http)
    assert kinds == ["start", "error"]
    assert message.error_message == "sse-test API error (server_error): failed to decode the batch: KV cache is full"


async def test_anthropic_error_event_in_its_own_shape(sse_server: SSEServer, http: HttpContext) -> None:
    sse_server.enqueue(Turn([Text("part")], error_event="Overloaded", error_type="overloaded_error"))
    _, message = await run(sse_server.model("anthropic-messages"), http)
    assert message.error_message == "sse-test API error (overloaded_error): Overloaded"
    assert message.text() == "part"


async def test_openai_error_event_name(sse_server: SSEServer, http: HttpContext) -> None:
    body = b'event: error\ndata: {"message": "model crashed", "type": "server_error"}\n\n'
    sse_server.enqueue(Turn(raw=body))
    _, message = await run(sse_server.model("openai-completions"), http)
    assert message.error_message == "sse-test API error: model crashed"
