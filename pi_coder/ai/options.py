"""Options a stream function receives (Pi's ``SimpleStreamOptions``, snake_case)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_coder.ai.abort import AbortSignal

if TYPE_CHECKING:
    from pi_coder.ai._http import HttpContext

__all__ = ["StreamOptions"]


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
    transport: str | None = None
    metadata: dict[str, Any] | None = None
    on_payload: Callable[[dict[str, Any]], Any] | None = None
    on_response: Callable[[Any], Any] | None = None
