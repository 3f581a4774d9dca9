"""Token estimates for compaction.

A message is estimated at ``ceil(chars / 4)`` of what it contributes to a request: text,
thinking, tool-call names and JSON arguments, tool-result text, ``!`` command and output,
summary text; an image counts as 4800 characters. The context size prefers what the provider
reported: the last successful assistant message's usage plus estimates of the messages after
it. Messages may be typed messages or their JSON dicts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "IMAGE_CHARS",
    "ContextEstimate",
    "effective_reserve_tokens",
    "estimate_context_tokens",
    "estimate_messages_tokens",
    "estimate_tokens",
    "should_compact",
    "usage_context_tokens",
]

IMAGE_CHARS = 4800
"""An image counts as this many characters (about 1200 tokens)."""


def _get(obj: Any, name: str, key: str | None = None) -> Any:
    if type(obj) is dict:
        return obj.get(key or name)
    return getattr(obj, name, None)


def _json_chars(arguments: Any) -> int:
    return len(json.dumps(arguments if arguments is not None else {}, ensure_ascii=False, separators=(",", ":")))


def _blocks_chars(content: Any) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content)
    chars = 0
    for block in content:
        if isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                chars += len(block.get("text") or "")
            elif kind == "thinking":
                chars += len(block.get("thinking") or "")
            elif kind == "image":
                chars += IMAGE_CHARS
            elif kind == "toolCall":
                chars += len(block.get("name") or "") + _json_chars(block.get("arguments"))
            continue
        kind = getattr(block, "type", None)
        if kind == "text":
            chars += len(block.text or "")
        elif kind == "thinking":
            chars += len(block.thinking or "")
        elif kind == "image":
            chars += IMAGE_CHARS
        elif kind == "toolCall":
            chars += len(block.name or "") + _json_chars(block.arguments)
    return chars


def estimate_tokens(message: Any) -> int:
    """Estimated tokens of one agent message: ``ceil(chars / 4)``.

    Args:
        message: Any agent message (typed or a JSON dict). A system message counts its prompt
            text only; unknown roles count their ``content``.

    Returns:
        The estimate (0 for an empty message).
    """
    role = _get(message, "role")
    if role == "bashExecution":
        if _get(message, "exclude_from_context", "excludeFromContext"):
            return 0  # `!!` output never reaches the model
        chars = len(_get(message, "command") or "") + len(_get(message, "output") or "")
    elif role in ("compactionSummary", "branchSummary"):
        chars = len(_get(message, "summary") or "")
    else:
        chars = _blocks_chars(_get(message, "content"))
    return math.ceil(chars / 4)


def estimate_messages_tokens(messages: Iterable[Any]) -> int:
    """Sum of :func:`estimate_tokens` over ``messages`` (system messages skipped)."""
    return sum(estimate_tokens(m) for m in messages if _get(m, "role") != "system")


def usage_context_tokens(usage: Any) -> int:
    """A response's context size: ``totalTokens``, else input + output + cache read + cache write."""
    if usage is None:
        return 0
    total = _get(usage, "total_tokens", "totalTokens") or 0
    if total:
        return int(total)
    parts = (
        _get(usage, "input"),
        _get(usage, "output"),
        _get(usage, "cache_read", "cacheRead"),
        _get(usage, "cache_write", "cacheWrite"),
    )
    return int(sum(p or 0 for p in parts))


@dataclass(slots=True, frozen=True)
class ContextEstimate:
    """How big the context is, and where the number comes from."""

    tokens: int
    """Reported usage plus the estimated trailing messages."""
    usage_tokens: int
    """The context size the provider reported for the last usable reply (0 if none)."""
    trailing_tokens: int
    """Estimated tokens of the messages after that reply (all messages when there is none)."""
    last_usage_index: int | None
    """Index of the reply whose usage was used."""


def estimate_context_tokens(messages: Sequence[Any], estimates: Sequence[int] | None = None) -> ContextEstimate:
    """Estimate the context size of ``messages`` (Pi's ``estimateContextTokens``).

    The last assistant message that did not fail or get aborted and reported a non-zero usage
    gives the base; the messages after it are estimated. Usage reported before the context was
    compacted describes a larger context, so a reply older than the compaction summary in
    ``messages`` is not used (the kept messages come after the summary but are older than it).

    Args:
        messages: The context (system messages are ignored).
        estimates: :func:`estimate_tokens` of each message, when the caller has them.

    Returns:
        The estimate.
    """

    def trailing_from(start: int) -> int:
        if estimates is None:
            return estimate_messages_tokens(messages[start:])
        return sum(e for m, e in zip(messages[start:], estimates[start:], strict=True) if _get(m, "role") != "system")

    compacted_at = None
    for message in messages:
        if _get(message, "role") == "compactionSummary":
            compacted_at = _get(message, "timestamp") or 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if _get(message, "role") != "assistant":
            continue
        if (_get(message, "stop_reason", "stopReason") or "stop") in ("error", "aborted"):
            continue
        if compacted_at is not None and (_get(message, "timestamp") or 0) < compacted_at:
            break
        used = usage_context_tokens(_get(message, "usage"))
        if used <= 0:
            continue
        trailing = trailing_from(index + 1)
        return ContextEstimate(used + trailing, used, trailing, index)
    estimated = trailing_from(0)
    return ContextEstimate(estimated, 0, estimated, None)


def effective_reserve_tokens(context_window: int, reserve_tokens: int) -> int:
    """The reserve actually applied: at most half the window.

    A reserve as large as the window (16384 of an 8k local model) would compact after every
    reply; half the window keeps compaction useful and the summary call within the window.
    """
    if context_window <= 0:
        return reserve_tokens
    return min(reserve_tokens, context_window // 2)


def should_compact(context_tokens: int, context_window: int, reserve_tokens: int) -> bool:
    """Whether a context of ``context_tokens`` passes ``window - reserve``.

    Args:
        context_tokens: The context size (see :func:`estimate_context_tokens`).
        context_window: The model's window; 0 (unknown) never compacts.
        reserve_tokens: ``compaction.reserve_tokens`` (clamped by :func:`effective_reserve_tokens`).
    """
    if context_window <= 0:
        return False
    return context_tokens > context_window - effective_reserve_tokens(context_window, reserve_tokens)
