"""Options a stream function receives (Pi's ``SimpleStreamOptions``, snake_case)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pi_coder.ai.abort import AbortSignal
from pi_coder.json_types import JsonObject

if TYPE_CHECKING:
    from pi_coder.ai._http import HttpContext
    from pi_coder.ai._sse import ServerSentEvent

__all__ = ["StreamOptions", "resolve_cache_retention"]


@dataclass(slots=True, kw_only=True)
class StreamOptions:
    signal: AbortSignal | None = None
    reasoning: str | None = None
    """Thinking level (``minimal`` .. ``max``); None means thinking off."""
    api_key: str | None = None
    session_id: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    headers: dict[str, str] | None = None
    thinking_budgets: dict[str, int] | None = None
    max_retries: int | None = None
    """Provider-level retries before the first byte (default 0: the agent session retries turns)."""
    max_retry_delay_ms: int | None = None
    """Fail fast when the server asks to wait longer than this (default 60 000; 0 = no cap)."""
    timeout_ms: int | None = None
    """Idle timeout: no byte for this long (the first byte included) ends the stream; 0 = none."""
    connect_timeout_ms: int | None = None
    """Connecting may take this long (default 15 000; 0 = no limit)."""
    content_timeout_ms: int | None = None
    """No content event (pings do not count) for this long since the request started ends the
    stream (default 600 000; 0 = no limit)."""
    http: HttpContext | None = None
    """Client and HTTP tunables; None uses ``pi_coder.ai._http.DEFAULT_HTTP``."""
    cache_retention: str | None = None
    """``none``, ``short`` or ``long``; None: ``long`` when ``PI_CACHE_RETENTION=long``, else ``short``."""
    transport: str | None = None
    metadata: JsonObject | None = None
    on_payload: Callable[[JsonObject], object] | None = None
    """Called (and awaited when it returns an awaitable) with the request body; a dict result replaces it."""
    on_response: Callable[[JsonObject], object] | None = None
    """Called with ``{"status", "headers"}`` of the response (awaited when async)."""
    on_headers: Callable[[dict[str, str]], object] | None = None
    on_stream_event: Callable[[list[ServerSentEvent]], object] | None = None
    """Called (and awaited) with each batch of parsed server-sent events before they are
    normalized; observe only (extensions' ``provider_stream_event``)."""
    """Called with the request headers (a mutable dict) before an HTTP request is sent; a dict
    result replaces them, ``None`` values delete a header."""


def resolve_cache_retention(value: str | None) -> str:
    """The prompt-cache retention to use: ``value``, else ``PI_CACHE_RETENTION`` (``long``), else ``short``.

    ``long`` means a 1-hour cache on api.anthropic.com and 24 hours on api.openai.com (Pi's
    ``PI_CACHE_RETENTION=long``); other servers get their default caching.
    """
    if value:
        return value
    return "long" if os.environ.get("PI_CACHE_RETENTION", "").strip().lower() == "long" else "short"
