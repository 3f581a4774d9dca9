"""Provider failures are encoded in the stream: opt-in retries, timeouts, aborts, clear error messages."""

from __future__ import annotations

import asyncio
import math
import socket
import time

import pytest

from pi_coder.ai._http import HttpContext, HttpSettings
from pi_coder.ai.abort import AbortController
from pi_coder.ai.errors import is_context_overflow, is_overflow_text, is_retryable_error
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.providers import anthropic, openai_completions
from pi_coder.ai.types import AssistantMessage, Context, Model, SystemMessage, Usage, UserMessage
from tests.support.sse_server import SSEServer, Text, Turn, error_turn
from tests.support.sse_server import ToolCall as WireToolCall

APIS = {"anthropic-messages": anthropic, "openai-completions": openai_completions}
OVERLOADED = {"anthropic-messages": 529, "openai-completions": 503}


@pytest.fixture(autouse=True)
async def _fast_retries():
    global FAST
    FAST = HttpContext(HttpSettings(retry_base_delay_s=0.01))
    yield
    await FAST.aclose()


FAST = HttpContext(HttpSettings(retry_base_delay_s=0.01))
"""Short provider-level backoff (an explicit context: nothing global is changed)."""
PROVIDER_RETRIES = 3


@pytest.fixture(params=list(APIS))
def api(request: pytest.FixtureRequest) -> str:
    return request.param


def context() -> Context:
    return Context(messages=[SystemMessage(content="sys"), UserMessage(content="hi")])


def start(server: SSEServer, api: str, model=None, **options):
    options.setdefault("api_key", "sk-secret-key-123")
    options.setdefault("http", FAST)
    model = model or server.model(api)
    return APIS[api].stream(model, context(), StreamOptions(**options))


async def drain(stream) -> tuple[list, AssistantMessage]:
    events = [event async for event in stream]
    return events, await stream.result()


# ---------------------------------------------------------------------------- retries (opt-in)


async def test_no_provider_retry_by_default(sse_server: SSEServer, api: str) -> None:
    """Pi 1.6's split: the provider does not retry a 500 (the agent session retries in the open)."""
    sse_server.enqueue(error_turn(500, "Internal server error", error_type="api_error"), Turn([Text("never")]))
    events, message = await drain(start(sse_server, api))
    assert [e.type for e in events] == ["error"]
    assert message.error_message == "sse-test API error (500 api_error): Internal server error"
    assert len(sse_server.requests) == 1
    assert is_retryable_error(message)


async def test_429_with_retry_after_then_success(sse_server: SSEServer, api: str) -> None:
    """A 429 is retried after the server's retry-after delay; the second attempt streams normally."""
    sse_server.enqueue(error_turn(429, "Rate limited", error_type="rate_limit_error", retry_after="0.3"), Turn([Text("ok")]))
    began = time.monotonic()
    events, message = await drain(start(sse_server, api, max_retries=PROVIDER_RETRIES))
    assert time.monotonic() - began >= 0.3
    assert message.stop_reason == "stop" and message.text() == "ok"
    assert [e.type for e in events][0] == "start"  # nothing was emitted for the failed attempt
    assert len(sse_server.requests) == 2


async def test_retry_after_ms_is_honoured(sse_server: SSEServer, api: str) -> None:
    """retry-after-ms takes precedence over retry-after."""
    sse_server.enqueue(error_turn(429, "slow down", retry_after="30", retry_after_ms=250), Turn([Text("ok")]))
    began = time.monotonic()
    _, message = await drain(start(sse_server, api, max_retries=PROVIDER_RETRIES))
    assert 0.25 <= time.monotonic() - began < 20  # retry-after (30 s) was not used
    assert message.text() == "ok"


async def test_overloaded_is_retried(sse_server: SSEServer, api: str) -> None:
    """529 (Anthropic overloaded) / 503 are retried with backoff."""
    status = OVERLOADED[api]
    sse_server.enqueue(error_turn(status, "Overloaded", error_type="overloaded_error"), Turn([Text("fine")]))
    _, message = await drain(start(sse_server, api, max_retries=PROVIDER_RETRIES))
    assert message.text() == "fine" and len(sse_server.requests) == 2


async def test_500_exhausts_retries_into_an_error_message(sse_server: SSEServer, api: str) -> None:
    """After max_retries, the last error ends the stream, naming the status and the API's message."""
    sse_server.enqueue(*[error_turn(500, "Internal server error", error_type="api_error") for _ in range(4)])
    events, message = await drain(start(sse_server, api, max_retries=PROVIDER_RETRIES))
    assert [e.type for e in events] == ["error"]
    assert events[0].reason == "error"
    assert message.stop_reason == "error"
    assert message.error_message == "sse-test API error (500 api_error): Internal server error (after 3 retries)"
    assert len(sse_server.requests) == 4
    # Already retried by the provider: the session-level retry must not multiply the attempts.
    assert not is_retryable_error(message)


async def test_max_retries_option(sse_server: SSEServer, api: str) -> None:
    """options.max_retries=0 fails on the first transient error."""
    sse_server.enqueue(error_turn(502, "Bad gateway"), Turn([Text("never")]))
    _, message = await drain(start(sse_server, api, max_retries=0))
    assert message.stop_reason == "error" and "502" in message.error_message
    assert len(sse_server.requests) == 1


async def test_long_retry_after_fails_fast_with_the_delay(sse_server: SSEServer, api: str) -> None:
    """A server asking to wait longer than max_retry_delay_ms fails at once, saying how long."""
    sse_server.enqueue(error_turn(429, "Quota", retry_after="120"))
    began = time.monotonic()
    _, message = await drain(start(sse_server, api))
    assert time.monotonic() - began < 60  # it did not wait the 120 s
    assert "429" in message.error_message and "120 s" in message.error_message
    assert len(sse_server.requests) == 1

    sse_server.enqueue(error_turn(429, "Quota", retry_after="2"))
    _, message = await drain(start(sse_server, api, max_retry_delay_ms=1000))
    assert "2 s" in message.error_message and "1 s maximum" in message.error_message


async def test_connection_refused_is_retried_then_reported(api: str) -> None:
    """Connection errors are retried; the final message says it is a connection error."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}" + ("/v1" if api == "openai-completions" else "")
    model = Model(id="m", api=api, provider="sse-test", base_url=base)
    _, message = await drain(APIS[api].stream(model, context(), StreamOptions(api_key="k", max_retries=2, http=FAST)))
    assert message.stop_reason == "error"
    assert message.error_message.startswith(f"Connection error: connection refused (127.0.0.1:{port})")
    assert "(after 2 retries)" in message.error_message
    assert not is_retryable_error(message)
    assert is_retryable_error(message.model_copy(update={"error_message": "Connection error: reset by peer"}))


# ---------------------------------------------------------------------------- messages


async def test_401_says_the_key_was_rejected_without_the_key(sse_server: SSEServer, api: str) -> None:
    """401 names provider, status and the API's message; the key never appears, even if echoed."""
    key = "sk-secret-key-123"
    sse_server.enqueue(error_turn(401, f"Incorrect API key provided: {key}", error_type="authentication_error"))
    _, message = await drain(start(sse_server, api, api_key=key))
    assert message.stop_reason == "error"
    assert message.error_message.startswith("sse-test rejected the API key (401 authentication_error): Incorrect API key")
    assert key not in message.error_message
    assert len(sse_server.requests) == 1  # not retried
    assert not is_retryable_error(message)


async def test_403_and_anthropic_builtin_key_hint(sse_server: SSEServer) -> None:
    """For a built-in provider the 401/403 message names the environment variable to check."""
    sse_server.enqueue(error_turn(403, "forbidden", error_type="permission_error"))
    model = sse_server.model("anthropic-messages", provider="anthropic")
    _, message = await drain(start(sse_server, "anthropic-messages", model=model))
    assert message.error_message.startswith("Anthropic rejected the API key (403 permission_error): forbidden.")
    assert "ANTHROPIC_API_KEY" in message.error_message


async def test_missing_key_for_a_builtin_provider(sse_server: SSEServer, api: str) -> None:
    """No key for a provider that needs one: a clear error naming the variable, and no request."""
    provider = "anthropic" if api == "anthropic-messages" else "openai"
    model = sse_server.model(api, provider=provider)
    events, message = await drain(start(sse_server, api, model=model, api_key=None))
    assert [e.type for e in events] == ["error"]
    env = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    assert env in message.error_message and "No API key" in message.error_message
    assert sse_server.requests == []


async def test_other_status_includes_status_and_api_message(sse_server: SSEServer, api: str) -> None:
    """A 400 is not retried and reports the API's message."""
    sse_server.enqueue(error_turn(400, "messages: field required", error_type="invalid_request_error"))
    _, message = await drain(start(sse_server, api))
    assert message.error_message == "sse-test API error (400 invalid_request_error): messages: field required"
    assert len(sse_server.requests) == 1


async def test_non_json_error_body(sse_server: SSEServer, api: str) -> None:
    """A plain-text error body is quoted; an empty one says so."""
    sse_server.enqueue(error_turn(404, body=b"Not Found"), error_turn(400, body=b""))
    _, first = await drain(start(sse_server, api))
    _, second = await drain(start(sse_server, api))
    assert first.error_message == "sse-test API error (404): Not Found. Check the provider's base_url."
    assert second.error_message == "sse-test API error (400): 400 status code (no body)"


async def test_context_overflow_is_recognised(sse_server: SSEServer, api: str) -> None:
    """The providers' overflow errors are recognised by is_context_overflow and not retried."""
    text = (
        "prompt is too long: 210000 tokens > 200000 maximum"
        if api == "anthropic-messages"
        else "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."
    )
    sse_server.enqueue(error_turn(400, text, error_type="invalid_request_error"))
    _, message = await drain(start(sse_server, api))
    assert is_context_overflow(message)
    assert not is_retryable_error(message)


async def test_connection_closed_mid_stream(sse_server: SSEServer, api: str) -> None:
    """A connection cut mid-stream ends with a connection error; the streamed text is kept."""
    sse_server.enqueue(Turn([Text("x" * 400)], delta_chars=10, close_after=900))
    events, message = await drain(start(sse_server, api))
    assert events[0].type == "start" and events[-1].type == "error"
    assert message.stop_reason == "error"
    assert message.error_message.startswith("Connection error:")
    assert "server closed the connection mid-stream" in message.error_message
    assert message.text() and set(message.text()) == {"x"}
    assert is_retryable_error(message)


async def test_garbage_data_is_an_error_not_an_exception(sse_server: SSEServer, api: str) -> None:
    """Malformed stream data ends with an error event instead of raising."""
    sse_server.enqueue(Turn(raw=b"data: {not json\n\n"))
    events, message = await drain(start(sse_server, api))
    assert events[-1].type == "error"
    assert message.error_message.startswith("Invalid data in the response stream")


async def test_failing_payload_hook_is_an_error_event(sse_server: SSEServer, api: str) -> None:
    """Even a failure in request setup (an on_payload hook raising) becomes an error event."""

    def hook(payload: dict) -> None:
        raise RuntimeError("hook broke")

    events, message = await drain(start(sse_server, api, on_payload=hook))
    assert [e.type for e in events] == ["error"] and message.error_message == "hook broke"


async def test_on_payload_may_replace_the_body_and_on_response_sees_status(sse_server: SSEServer, api: str) -> None:
    """on_payload can return a new payload; on_response gets the status and headers."""
    seen: list[dict] = []

    async def payload_hook(payload: dict) -> dict:
        return {**payload, "custom": True}

    sse_server.enqueue(Turn([Text("ok")], headers={"x-request-id": "req_1"}))
    await drain(start(sse_server, api, on_payload=payload_hook, on_response=seen.append))
    assert sse_server.requests[0].json["custom"] is True
    assert seen[0]["status"] == 200 and seen[0]["headers"]["x-request-id"] == "req_1"


# ---------------------------------------------------------------------------- timeouts and aborts


async def test_idle_timeout_mid_stream(sse_server: SSEServer, api: str) -> None:
    """No bytes for timeout_ms ends the stream with an idle-timeout error, keeping the text."""
    sse_server.enqueue(Turn([Text("abcdefgh")], delta_chars=4, delay=10))
    began = time.monotonic()
    events, message = await drain(start(sse_server, api, timeout_ms=300))
    assert time.monotonic() - began < 8  # before the server's 10 s pause ended
    assert message.stop_reason == "error"
    assert f"no data from 127.0.0.1:{sse_server.port} for 0.3 s in the middle" in message.error_message
    assert "http_idle_timeout_ms" in message.error_message
    assert events[0].type == "start"


async def test_hang_before_first_byte_times_out(sse_server: SSEServer, api: str) -> None:
    """A server that never answers ends as a timeout error instead of hanging."""
    sse_server.enqueue(Turn([Text("late")], hang=math.inf))
    began = time.monotonic()
    events, message = await drain(start(sse_server, api, timeout_ms=300))
    assert time.monotonic() - began < 30  # the server never answers
    assert [e.type for e in events] == ["error"]
    assert message.error_message == (
        f"Request timed out after 0.3 s waiting for the first byte from 127.0.0.1:{sse_server.port} "
        "(setting http_idle_timeout_ms)"
    )


async def test_abort_mid_stream_closes_the_connection(sse_server: SSEServer, api: str) -> None:
    """Aborting after the first delta ends promptly as aborted, keeps the text, and the server sees the close."""
    sse_server.enqueue(Turn([Text("a" * 200), WireToolCall("read", {"path": "x"})], delta_chars=2, delay=0.05))
    controller = AbortController()
    stream = start(sse_server, api, signal=controller.signal)
    events = []
    aborted_at = None
    async for event in stream:
        events.append(event)
        if event.type == "text_delta" and aborted_at is None:
            controller.abort()
            aborted_at = time.monotonic()
    message = await stream.result()
    assert time.monotonic() - aborted_at < 4  # the stream would run 5 s more
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert message.stop_reason == "aborted" and message.error_message == "Request was aborted"
    assert message.text().startswith("aa")
    request = sse_server.requests[0]
    assert await request.wait_disconnected_async()
    assert not request.completed


async def test_abort_before_the_call(sse_server: SSEServer, api: str) -> None:
    """An already-aborted signal gives only an aborted error event and sends nothing."""
    controller = AbortController()
    controller.abort()
    events, message = await drain(start(sse_server, api, signal=controller.signal))
    assert [(e.type, e.reason) for e in events] == [("error", "aborted")]
    assert message.error_message == "Request was aborted"
    assert sse_server.requests == []


async def test_abort_while_waiting_before_first_byte(sse_server: SSEServer, api: str) -> None:
    """Aborting while the server has not answered ends promptly and closes the connection."""
    sse_server.enqueue(Turn([Text("late")], hang=math.inf))
    controller = AbortController()
    stream = start(sse_server, api, signal=controller.signal)
    assert await sse_server.wait_for_requests_async(1)
    began = time.monotonic()
    controller.abort()
    events, message = await drain(stream)
    assert time.monotonic() - began < 30  # the server never answers
    assert [e.type for e in events] == ["error"] and message.stop_reason == "aborted"
    assert await sse_server.requests[0].wait_disconnected_async()


async def test_abort_during_retry_wait(sse_server: SSEServer, api: str) -> None:
    """An abort while sleeping before a retry ends at once as aborted, with no further request."""
    sse_server.enqueue(error_turn(429, "Rate limited", retry_after="30"), Turn([Text("never")]))
    controller = AbortController()
    stream = start(sse_server, api, signal=controller.signal, max_retries=PROVIDER_RETRIES)
    assert await sse_server.wait_for_requests_async(1)
    await asyncio.sleep(0.1)
    began = time.monotonic()
    controller.abort()
    events, message = await drain(stream)
    assert time.monotonic() - began < 20  # the retry waits 30 s
    assert [(e.type, e.reason) for e in events] == [("error", "aborted")]
    assert message.stop_reason == "aborted"
    assert len(sse_server.requests) == 1


# ---------------------------------------------------------------------------- classifiers


def failed(text: str) -> AssistantMessage:
    return AssistantMessage(stop_reason="error", error_message=text)


@pytest.mark.parametrize(
    "text",
    [
        "prompt is too long: 213462 tokens > 200000 maximum",
        "Your input exceeds the context window of this model",
        "This model's maximum context length is 8192 tokens",
        "Error code: context_length_exceeded",
        "Too many tokens in request",
        "the request exceeds the available context size, try increasing it",
        "trying to keep 5000 tokens which is greater than the context length",
        "400 status code (no body)",
        "413 (no body)",
    ],
)
def test_is_context_overflow_patterns(text: str) -> None:
    """Provider overflow wordings are recognised on error messages."""
    assert is_context_overflow(failed(text))
    assert not is_retryable_error(failed(text))


def test_is_context_overflow_silent_and_negative_cases() -> None:
    """A successful response whose input exceeds the window is a silent overflow; other errors are not."""
    ok = AssistantMessage(stop_reason="stop", usage=Usage(input=150_000, cache_read=60_000))
    assert is_context_overflow(ok, context_window=200_000)
    assert not is_context_overflow(ok, context_window=300_000)
    assert not is_context_overflow(ok)
    assert not is_context_overflow(failed("Overloaded"))
    assert not is_context_overflow(AssistantMessage(stop_reason="stop"))
    assert is_overflow_text("prompt is too long")


@pytest.mark.parametrize(
    ("text", "retryable"),
    [
        ("sse-test API error (529 overloaded_error): Overloaded", True),
        ("Rate limit reached for requests", True),
        ("429 Too Many Requests", True),
        ("OpenAI API error (502): Bad gateway", True),
        ("Service Unavailable", True),
        ("Connection error: could not connect to api.anthropic.com", True),
        ("fetch failed", True),
        ("socket terminated", True),
        ("Anthropic rejected the API key (401 authentication_error): invalid x-api-key", False),
        ("Request was aborted", False),
        ("prompt is too long: 1 tokens > 0 maximum", False),
    ],
)
def test_is_retryable_error(text: str, retryable: bool) -> None:
    """Transient failures are retryable; auth errors, aborts and overflows are not."""
    assert is_retryable_error(failed(text)) is retryable


def test_only_error_messages_are_retryable() -> None:
    """An aborted or successful message is never retryable."""
    assert not is_retryable_error(AssistantMessage(stop_reason="aborted", error_message="503"))
    assert not is_retryable_error(AssistantMessage(stop_reason="stop"))


async def test_json_instead_of_an_event_stream(sse_server: SSEServer, api: str) -> None:
    """A 200 JSON answer (a server ignoring "stream") is an error naming what came back."""
    sse_server.enqueue(
        Turn(raw=b'{"error": {"message": "streaming not supported"}}', headers={"content-type": "application/json"})
    )
    events, message = await drain(start(sse_server, api))
    assert [e.type for e in events] == ["start", "error"]
    assert message.error_message == "Expected an event stream from sse-test, got JSON: streaming not supported"


async def test_injected_client_transport_failure_after_one_delta(api: str) -> None:
    """C98 through an injected httpx client: a transport that fails after one delta gives
    start, text_start, text_delta, error with the failure text and the partial text kept."""
    import httpx

    from tests.support.sse_server import encode_anthropic, encode_openai

    encode = encode_anthropic if api == "anthropic-messages" else encode_openai
    body = encode(Turn([Text("Hi")]))
    cut = body.index(b"\n\n", body.index(b"Hi")) + 2  # through the first text delta event

    async def chunks():
        yield body[:cut]
        raise OSError("socket closed")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=chunks())

    base = "http://mock.test" + ("/v1" if api == "openai-completions" else "")
    model = Model(id="m", api=api, provider="sse-test", base_url=base)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        http = HttpContext(client=client)
        events, message = await drain(APIS[api].stream(model, context(), StreamOptions(api_key="k", http=http)))
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "error"]
    assert events[-1].reason == "error"
    assert message.error_message == "socket closed"
    assert message.text() == "Hi"
