"""The HTTP client context and the request step of every HTTP provider.

An :class:`HttpContext` holds the tunables (:class:`HttpSettings`) and the clients: one
``httpx.AsyncClient`` per event loop, created on first use (an httpx client is bound to the
loop its connections were opened on), or one injected client. A request uses
``StreamOptions.http`` when set, else :data:`DEFAULT_HTTP`, the one documented process-wide
default (its settings are the defaults below and never change; it only caches clients). Tests
and embedders pass their own context instead of changing module state.

Retry split (Pi 1.6's ``retry.provider.maxRetries`` = 0): by default nothing is
retried here. Provider errors end the stream and the agent session retries the whole turn in
the open (``agent_end`` with ``willRetry``, ``auto_retry_start``/``auto_retry_end``). When a
caller asks for provider retries (``StreamOptions.max_retries`` or ``HttpSettings.max_retries``),
statuses 429, 500, 502, 503, 504 and 529 and connection failures are retried before the first
byte of a body, honouring ``retry-after-ms`` / ``retry-after``. Either way, a server that asks
for a longer wait than ``max_retry_delay_ms`` fails fast with that delay in the message.

Bounds of one request: ``connect_timeout_s`` to connect, ``idle_timeout_s`` without a byte
(waiting for the first byte, and between bytes), and ``content_timeout_s`` without a content
event counted from the request's start (SSE pings and comments do not count), so a server that
never answers or only sends keep-alive pings ends with a named error.
"""

from __future__ import annotations

import asyncio
import email.utils
import errno
import json
import socket
import ssl
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

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
    is_overflow_text,
)

__all__ = [
    "DEFAULT_HTTP",
    "HttpContext",
    "HttpSettings",
    "RETRY_STATUSES",
    "aclose_clients",
    "api_error_text",
    "describe_transport_error",
    "parse_retry_after",
    "send_with_retries",
    "status_error",
]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpSettings:
    """HTTP tunables of one :class:`HttpContext` (defaults suit real APIs; tests shrink them)."""

    retry_base_delay_s: float = 1.0
    """First backoff delay of a provider-level retry; doubled on every further attempt."""
    retry_max_backoff_s: float = 30.0
    """Upper bound of our own backoff (a server's retry-after is bounded by max_retry_delay_ms)."""
    max_retries: int = 0
    """Provider-level retries when ``StreamOptions.max_retries`` is None (Pi 1.6: 0)."""
    max_retry_delay_ms: int = 60_000
    """Longest server-requested wait we accept when ``StreamOptions.max_retry_delay_ms`` is None."""
    connect_timeout_s: float = 15.0
    """Connecting (TCP and TLS) may take this long (``StreamOptions.connect_timeout_ms``)."""
    idle_timeout_s: float = 300.0
    """No byte for this long, first byte included, ends the request (``StreamOptions.timeout_ms``)."""
    content_timeout_s: float = 600.0
    """No content event for this long since the request started ends it, pings or not
    (``StreamOptions.content_timeout_ms``)."""


class HttpContext:
    """The clients and tunables providers use; pass one as ``StreamOptions.http``.

    Args:
        settings: The tunables (default :class:`HttpSettings`).
        client: A client every request of this context uses (the caller closes it); without
            one, a client per event loop is created on first use and closed by :meth:`aclose`.
    """

    __slots__ = ("settings", "_injected", "_clients")

    def __init__(self, settings: HttpSettings | None = None, *, client: httpx.AsyncClient | None = None) -> None:
        self.settings = settings if settings is not None else HttpSettings()
        self._injected = client
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )

    def client(self) -> httpx.AsyncClient:
        """The injected client, else the running loop's client (created on first use)."""
        if self._injected is not None:
            return self._injected
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            conf = self.settings
            client = httpx.AsyncClient(
                timeout=httpx.Timeout(conf.idle_timeout_s or None, connect=conf.connect_timeout_s or None),
                transport=_LazyTLSTransport(httpx.Limits(max_connections=64, max_keepalive_connections=16)),
                follow_redirects=False,
            )
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the client this context created for the running loop (optional, at shutdown)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()


DEFAULT_HTTP = HttpContext()
"""The context of requests whose ``StreamOptions.http`` is None: default settings, one client per loop."""


async def aclose_clients() -> None:
    """Close the default context's client of the running loop (call at shutdown; optional)."""
    await DEFAULT_HTTP.aclose()


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
    message: object = None
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
    if cls is ProviderStatusError and is_overflow_text(message):
        error = ContextOverflowError(message, status=status, request_id=request_id, retry_after_s=retry_after)
    return error


def _where(url: str) -> str:
    parsed = httpx.URL(url)
    host = parsed.host or url
    return f"{host}:{parsed.port}" if parsed.port else host


_ERRNO_CAUSES = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset by the server",
    errno.ECONNABORTED: "connection aborted",
    errno.EPIPE: "the server closed the connection",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ENETUNREACH: "network unreachable",
    errno.ETIMEDOUT: "timed out",
}


def _cause(exc: BaseException) -> str:
    """A short name for the OS-level cause of a transport failure (``connection refused``, ...)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, socket.gaierror):
            return "host name not found"
        if isinstance(current, ssl.SSLError):
            return f"TLS error: {current.reason or current}"
        if isinstance(current, OSError) and current.errno in _ERRNO_CAUSES:
            return _ERRNO_CAUSES[current.errno]
        current = current.__cause__ or current.__context__
    text = str(exc).lower()
    for marker, cause in (
        ("refused", "connection refused"),
        ("reset", "connection reset by the server"),
        ("name or service not known", "host name not found"),
        ("nodename nor servname", "host name not found"),
        ("unreachable", "host unreachable"),
    ):
        if marker in text:
            return cause
    return str(exc) or type(exc).__name__


def describe_transport_error(
    exc: httpx.HTTPError,
    url: str,
    timeout_s: float,
    started: bool,
    *,
    connect_timeout_s: float | None = None,
) -> ProviderError:
    """Turn an httpx transport failure into a ``ProviderConnectionError`` naming its cause.

    Args:
        exc: The httpx failure.
        url: The request URL (its host and port are named, never its query).
        timeout_s: The idle timeout in effect, for the message.
        started: Whether the response had started (headers received).
        connect_timeout_s: The connect timeout in effect, for the message.

    Returns:
        ``Connection error: <cause> (<host:port>)`` for connection failures, ``Request timed
        out ...`` naming what was being waited for and the setting for timeouts.
    """
    where = _where(url)
    if isinstance(exc, httpx.ConnectTimeout):
        after = f" after {connect_timeout_s:g} s" if connect_timeout_s else ""
        return ProviderTimeoutError(
            f"Connection error: timed out{after} connecting to {where} (setting http_connect_timeout_ms)"
        )
    if isinstance(exc, httpx.ReadTimeout):
        if started:
            return ProviderTimeoutError(
                f"Request timed out: no data from {where} for {timeout_s:g} s in the middle of the response "
                "(setting http_idle_timeout_ms)"
            )
        return ProviderTimeoutError(
            f"Request timed out after {timeout_s:g} s waiting for the first byte from {where} "
            "(setting http_idle_timeout_ms)"
        )
    if isinstance(exc, httpx.WriteTimeout):
        return ProviderTimeoutError(f"Request timed out sending the request to {where}")
    if isinstance(exc, httpx.PoolTimeout):
        return ProviderTimeoutError(f"Request timed out waiting for a free connection to {where}")
    if isinstance(exc, httpx.TimeoutException):
        return ProviderTimeoutError(f"Request timed out talking to {where}")
    if isinstance(exc, httpx.ConnectError):
        return ProviderConnectionError(f"Connection error: {_cause(exc)} ({where})")
    if isinstance(exc, httpx.RemoteProtocolError):
        if started:
            return ProviderConnectionError(f"Connection error: server closed the connection mid-stream ({where})")
        return ProviderConnectionError(
            f"Connection error: server closed the connection before sending a response ({where})"
        )
    if isinstance(exc, (httpx.ReadError, httpx.WriteError)):
        when = "mid-stream" if started else "before the response"
        return ProviderConnectionError(f"Connection error: {_cause(exc)} {when} ({where})")
    return ProviderConnectionError(f"Connection error: {_cause(exc)} ({where})")


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
    conf: HttpSettings | None = None,
    connect_timeout_s: float | None = None,
) -> httpx.Response:
    """Send a streaming request; retry transient failures before the first byte when asked to.

    Args:
        client: The HTTP client.
        build: Builds a fresh request per attempt.
        label: Provider name for error messages.
        max_retries: Retries after the first attempt (None: ``conf.max_retries``, 0 by default).
        max_retry_delay_ms: Fail fast when the server asks for a longer wait (None: 60 000; 0: no cap).
        timeout_s: Idle timeout, for messages.
        env_hint: Where the key comes from, for 401/403 messages.
        conf: The context's settings (backoff); default :class:`HttpSettings`.
        connect_timeout_s: Connect timeout, for messages.

    Returns:
        An open 2xx response; the caller must ``aclose()`` it.

    Raises:
        ProviderError: The request failed for good.
    """
    conf = conf if conf is not None else DEFAULT_HTTP.settings
    retries = conf.max_retries if max_retries is None else max(0, max_retries)
    limit_ms = conf.max_retry_delay_ms if max_retry_delay_ms is None else max_retry_delay_ms
    limit_s = limit_ms / 1000 if limit_ms > 0 else None
    attempt = 0
    while True:
        request = build()
        error: ProviderError
        wait: float | None = None
        try:
            response = await client.send(request, stream=True)
        except _RETRY_TRANSPORT as exc:
            error = describe_transport_error(
                exc, str(request.url), timeout_s, started=False, connect_timeout_s=connect_timeout_s
            )
        except httpx.HTTPError as exc:
            raise describe_transport_error(
                exc, str(request.url), timeout_s, started=False, connect_timeout_s=connect_timeout_s
            ) from exc
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
            wait = error.retry_after_s if isinstance(error, ProviderStatusError) else None
            if response.status_code in RETRY_STATUSES and wait is not None and limit_s is not None and wait > limit_s:
                raise _reword(
                    error,
                    f"{error} (the server asked to retry after {wait:g} s, more than the "
                    f"{limit_s:g} s maximum retry delay)",
                )
            if response.status_code not in RETRY_STATUSES:
                raise error
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
