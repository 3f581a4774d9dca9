"""The shared HTTP client and the request-with-retries step of every HTTP provider.

One ``httpx.AsyncClient`` per event loop is created on first use (an httpx client is bound
to the loop its connections were opened on). Tests and embedders can inject a client and
shrink the retry delays with :func:`http_overrides`.

Retries happen here, before the first byte of a response body: statuses 429, 500, 502, 503,
504 and 529 and connection failures are retried with exponential backoff, honouring
``retry-after-ms`` / ``retry-after``. A server that asks for a longer wait than the caller's
``max_retry_delay_ms`` fails fast. Once a stream has started nothing is retried here
(the agent session retries whole turns).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, replace
from typing import Any

import httpx

from pi_coder.ai.errors import (
    AuthError,
    ContextOverflowError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderStatusError,
    ProviderTimeoutError,
    RateLimitError,
    is_context_overflow,
)

__all__ = [
    "HttpSettings",
    "RETRY_STATUSES",
    "aclose_clients",
    "api_error_text",
    "describe_transport_error",
    "get_client",
    "http_overrides",
    "parse_retry_after",
    "send_with_retries",
    "settings",
    "status_error",
]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})


@dataclass(slots=True, kw_only=True)
class HttpSettings:
    """Process-wide HTTP tunables (defaults suit real APIs; tests shrink the delays)."""

    retry_base_delay_s: float = 1.0
    """First backoff delay; doubled on every further attempt."""
    retry_max_backoff_s: float = 30.0
    """Upper bound of our own backoff (a server's retry-after is bounded by max_retry_delay_ms)."""
    max_retries: int = 3
    """Retries when ``StreamOptions.max_retries`` is None."""
    max_retry_delay_ms: int = 60_000
    """Longest server-requested wait we accept when ``StreamOptions.max_retry_delay_ms`` is None."""
    connect_timeout_s: float = 20.0
    idle_timeout_s: float = 120.0
    """No byte for this long ends the request (when ``StreamOptions.timeout_ms`` is None)."""


_settings = HttpSettings()
_injected: httpx.AsyncClient | None = None
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def settings() -> HttpSettings:
    """The current settings object (read it per request, do not cache it)."""
    return _settings


@contextlib.contextmanager
def http_overrides(client: httpx.AsyncClient | None = None, **changes: Any) -> Iterator[HttpSettings]:
    """Temporarily inject a client and/or change :class:`HttpSettings` fields.

    Args:
        client: A client every provider request uses instead of the shared one.
        **changes: ``HttpSettings`` fields to override, e.g. ``retry_base_delay_s=0.01``.

    Yields:
        The settings in effect.
    """
    global _settings, _injected
    known = {f.name for f in fields(HttpSettings)}
    unknown = set(changes) - known
    if unknown:
        raise TypeError(f"unknown HTTP settings: {', '.join(sorted(unknown))}")
    saved = (_settings, _injected)
    _settings = replace(_settings, **changes)
    if client is not None:
        _injected = client
    try:
        yield _settings
    finally:
        _settings, _injected = saved


class _LazyTLSTransport(httpx.AsyncBaseTransport):
    """Plain-HTTP requests never build an SSL context; HTTPS ones build it on first use.

    httpx loads the CA bundle when a transport is created (20-30 ms, far more on a busy
    machine), which a local ``http://`` model server never needs.
    """

    def __init__(self, limits: httpx.Limits) -> None:
        self._limits = limits
        self._plain: httpx.AsyncHTTPTransport | None = None
        self._tls: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme == "https":
            if self._tls is None:
                self._tls = httpx.AsyncHTTPTransport(limits=self._limits)
            return await self._tls.handle_async_request(request)
        if self._plain is None:
            self._plain = httpx.AsyncHTTPTransport(limits=self._limits, verify=False)  # no TLS on http://
        return await self._plain.handle_async_request(request)

    async def aclose(self) -> None:
        for transport in (self._plain, self._tls):
            if transport is not None:
                await transport.aclose()


def get_client() -> httpx.AsyncClient:
    """The shared client of the running event loop (created on first use)."""
    if _injected is not None:
        return _injected
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            timeout=httpx.Timeout(_settings.idle_timeout_s, connect=_settings.connect_timeout_s),
            transport=_LazyTLSTransport(httpx.Limits(max_connections=64, max_keepalive_connections=16)),
            follow_redirects=False,
        )
        _clients[loop] = client
    return client


async def aclose_clients() -> None:
    """Close the shared client of the running loop (call at shutdown; optional)."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asks us to wait, from ``retry-after-ms`` or ``retry-after``."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def api_error_text(body: bytes) -> tuple[str | None, str]:
    """(error type, message) from an error body in Anthropic's, OpenAI's or a generic shape."""
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return None, ""
    try:
        data = json.loads(text)
    except ValueError:
        return None, text[:1000]
    kind: str | None = None
    message: Any = None
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict):
            kind = err.get("type") or err.get("code")
            message = err.get("message")
        elif isinstance(err, str):
            message = err
        message = message or data.get("message") or data.get("detail")
    if message is None:
        message = text[:1000]
    elif not isinstance(message, str):
        message = json.dumps(message)
    return (str(kind) if kind else None), message


def status_error(
    label: str,
    status: int,
    headers: httpx.Headers,
    body: bytes,
    env_hint: str | None = None,
) -> ProviderStatusError:
    """Build the error for a non-2xx response.

    Args:
        label: Provider name for the message, e.g. ``Anthropic``.
        status: HTTP status.
        headers: Response headers (request id, retry-after).
        body: Response body (JSON error or text).
        env_hint: Where the key comes from, named in the 401/403 message.

    Returns:
        A ``ProviderStatusError`` subclass whose text names the provider and status and carries
        the API's own error message.
    """
    kind, api_message = api_error_text(body)
    code = f"{status} {kind}" if kind else str(status)
    detail = api_message or f"{status} status code (no body)"
    request_id = headers.get("request-id") or headers.get("x-request-id")
    retry_after = parse_retry_after(headers)
    cls: type[ProviderStatusError] = ProviderStatusError
    if status in (401, 403):
        hint = f" Check {env_hint}." if env_hint else ""
        message = f"{label} rejected the API key ({code}): {detail.rstrip('.')}.{hint}"
        cls = AuthError
    else:
        message = f"{label} API error ({code}): {detail}"
        if status == 404 and kind is None:  # not the API's own JSON error: no such endpoint
            message = f"{message.rstrip('.')}. Check the provider's base_url."
        if status == 429:
            cls = RateLimitError
        elif status == 529 or (kind or "").startswith("overloaded"):
            cls = OverloadedError
    error = cls(message, status=status, request_id=request_id, retry_after_s=retry_after)
    if cls is ProviderStatusError and is_context_overflow({"stopReason": "error", "errorMessage": message}):
        error = ContextOverflowError(message, status=status, request_id=request_id, retry_after_s=retry_after)
    return error


def describe_transport_error(exc: httpx.HTTPError, url: str, timeout_s: float, started: bool) -> ProviderError:
    """Turn an httpx transport failure into a ``ProviderConnectionError`` with a clear message."""
    host = httpx.URL(url).host or url
    if isinstance(exc, httpx.ConnectTimeout):
        return ProviderTimeoutError(f"Connection error: timed out connecting to {host}")
    if isinstance(exc, httpx.ReadTimeout):
        what = "in the middle of the response" if started else "before the response started"
        return ProviderTimeoutError(
            f"Connection error: no data from {host} for {timeout_s:g} s {what} (idle timeout)"
        )
    if isinstance(exc, httpx.TimeoutException):
        return ProviderTimeoutError(f"Connection error: timed out talking to {host}")
    if isinstance(exc, httpx.ConnectError):
        return ProviderConnectionError(f"Connection error: could not connect to {host} ({exc or 'refused'})")
    if started:
        return ProviderConnectionError(
            f"Connection error: the connection to {host} closed before the response was complete ({exc})"
        )
    return ProviderConnectionError(f"Connection error: {exc or type(exc).__name__} ({host})")


_RETRY_TRANSPORT = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.RemoteProtocolError,
    httpx.ReadError,
    httpx.WriteError,
    httpx.WriteTimeout,
    httpx.PoolTimeout,
)


async def send_with_retries(
    client: httpx.AsyncClient,
    build: Callable[[], httpx.Request],
    *,
    label: str,
    max_retries: int | None,
    max_retry_delay_ms: int | None,
    timeout_s: float,
    env_hint: str | None = None,
) -> httpx.Response:
    """Send a streaming request, retrying transient failures before the first byte.

    Args:
        client: The HTTP client.
        build: Builds a fresh request per attempt.
        label: Provider name for error messages.
        max_retries: Retries after the first attempt (None: ``HttpSettings.max_retries``).
        max_retry_delay_ms: Fail fast when the server asks for a longer wait (None: 60 000).
        timeout_s: Idle timeout, for messages.
        env_hint: Where the key comes from, for 401/403 messages.

    Returns:
        An open 2xx response; the caller must ``aclose()`` it.

    Raises:
        ProviderError: The request failed for good.
    """
    conf = _settings
    retries = conf.max_retries if max_retries is None else max(0, max_retries)
    limit_s = (conf.max_retry_delay_ms if max_retry_delay_ms is None else max_retry_delay_ms) / 1000
    attempt = 0
    while True:
        request = build()
        error: ProviderError
        wait: float | None = None
        try:
            response = await client.send(request, stream=True)
        except _RETRY_TRANSPORT as exc:
            error = describe_transport_error(exc, str(request.url), timeout_s, started=False)
        except httpx.HTTPError as exc:
            raise describe_transport_error(exc, str(request.url), timeout_s, started=False) from exc
        else:
            if response.status_code < 300:
                return response
            try:
                body = await response.aread()
            except httpx.HTTPError:
                body = b""
            finally:
                await response.aclose()
            error = status_error(label, response.status_code, response.headers, body, env_hint)
            if response.status_code not in RETRY_STATUSES:
                raise error
            wait = error.retry_after_s if isinstance(error, ProviderStatusError) else None
            if wait is not None and wait > limit_s:
                raise _reword(
                    error,
                    f"{error} (the server asked to retry after {wait:g} s, more than the "
                    f"{limit_s:g} s maximum retry delay)",
                )
        if attempt >= retries:
            raise _reword(error, f"{error} (after {attempt} retries)") if attempt else error
        if wait is None:
            wait = min(conf.retry_base_delay_s * (2**attempt), conf.retry_max_backoff_s)
        attempt += 1
        await asyncio.sleep(wait)


def _reword(error: ProviderError, message: str) -> ProviderError:
    """The same kind of error with another message."""
    if isinstance(error, ProviderStatusError):
        return type(error)(
            message, status=error.status, request_id=error.request_id, retry_after_s=error.retry_after_s
        )
    return type(error)(message)
