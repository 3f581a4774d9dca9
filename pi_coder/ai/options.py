"""Options a stream function receives (Pi's ``SimpleStreamOptions``, snake_case)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_coder.ai.abort import AbortSignal

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
    """Provider-level retries before the first byte (default 3)."""
    max_retry_delay_ms: int | None = None
    """Fail fast when the server asks to wait longer than this (default 60 000)."""
    timeout_ms: int | None = None
    """Idle-read timeout: no byte for this long ends the stream with an error."""
    cache_retention: str | None = None
    """``none``, ``short`` or ``long``; None: ``long`` when ``PI_CACHE_RETENTION=long``, else ``short``."""
    transport: str | None = None
    metadata: dict[str, Any] | None = None
    on_payload: Callable[[dict[str, Any]], Any] | None = None
    on_response: Callable[[Any], Any] | None = None


def resolve_cache_retention(value: str | None) -> str:
    """The prompt-cache retention to use: ``value``, else ``PI_CACHE_RETENTION`` (``long``), else ``short``.

    ``long`` means a 1-hour cache on api.anthropic.com and 24 hours on api.openai.com (Pi's
    ``PI_CACHE_RETENTION=long``); other servers get their default caching.
    """
    if value:
        return value
    return "long" if os.environ.get("PI_CACHE_RETENTION", "").strip().lower() == "long" else "short"
