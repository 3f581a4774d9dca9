"""Token estimates for compaction.

A message is estimated at ``ceil(chars / 4)`` of what it contributes to a request: text,
thinking, tool-call names and JSON arguments, tool-result text, ``!`` command and output,
summary text; an image counts as 4800 characters. The context size prefers what the provider
reported: the last successful assistant message's usage plus estimates of the messages after
it. Messages are parsed objects (docs/architecture.md#types).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pi_coder.ai.types import (
    AssistantMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from pi_coder.session.messages import (
    AgentMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    UnknownMessage,
)

ContentBlock = TextContent | ThinkingContent | ImageContent | ToolCall

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


def _json_chars(arguments: object) -> int:
    return len(json.dumps(arguments if arguments is not None else {}, ensure_ascii=False, separators=(",", ":")))


def _blocks_chars(content: str | Sequence[ContentBlock]) -> int:
    if isinstance(content, str):
        return len(content)
    chars = 0
    for block in content:
        if isinstance(block, TextContent):
            chars += len(block.text)
        elif isinstance(block, ThinkingContent):
            chars += len(block.thinking)
        elif isinstance(block, ImageContent):
            chars += IMAGE_CHARS
        elif isinstance(block, ToolCall):
            chars += len(block.name) + _json_chars(block.arguments)
    return chars


def _unknown_chars(message: UnknownMessage) -> int:
    """The ``content`` of a message whose role is not known here, as read (unparsed JSON)."""
    content = (message.model_extra or {}).get("content")
    if isinstance(content, str):
        return len(content)
    if not isinstance(content, list):
        return 0
    chars = 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("text", "thinking"):
            text = block.get(kind)
            chars += len(text) if isinstance(text, str) else 0
        elif kind == "image":
            chars += IMAGE_CHARS
        elif kind == "toolCall":
            name = block.get("name")
            chars += (len(name) if isinstance(name, str) else 0) + _json_chars(block.get("arguments"))
    return chars


def estimate_tokens(message: AgentMessage) -> int:
    """Estimated tokens of one agent message: ``ceil(chars / 4)``.

    Args:
        message: Any agent message. A system message counts its prompt text only; unknown
            roles count their ``content``.

    Returns:
        The estimate (0 for an empty message).
    """
    if isinstance(message, BashExecutionMessage):
        if message.exclude_from_context:
            return 0  # `!!` output never reaches the model
        chars = len(message.command) + len(message.output)
    elif isinstance(message, CompactionSummaryMessage | BranchSummaryMessage):
        chars = len(message.summary)
    elif isinstance(message, UnknownMessage):
        chars = _unknown_chars(message)
    else:
        chars = _blocks_chars(message.content)
    return math.ceil(chars / 4)


def estimate_messages_tokens(messages: Iterable[AgentMessage]) -> int:
    """Sum of :func:`estimate_tokens` over ``messages`` (system messages skipped)."""
    return sum(estimate_tokens(m) for m in messages if not isinstance(m, SystemMessage))


def usage_context_tokens(usage: Usage | None) -> int:
    """A response's context size: ``totalTokens``, else input + output + cache read + cache write."""
    if usage is None:
        return 0
    return usage.total_tokens or (usage.input + usage.output + usage.cache_read + usage.cache_write)


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


def estimate_context_tokens(messages: Sequence[AgentMessage], estimates: Sequence[int] | None = None) -> ContextEstimate:
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
        pairs = zip(messages[start:], estimates[start:], strict=True)
        return sum(e for m, e in pairs if not isinstance(m, SystemMessage))

    compacted_at = None
    for message in messages:
        if isinstance(message, CompactionSummaryMessage):
            compacted_at = message.timestamp or 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, AssistantMessage):
            continue
        if message.stop_reason in ("error", "aborted"):
            continue
        if compacted_at is not None and (message.timestamp or 0) < compacted_at:
            break
        used = usage_context_tokens(message.usage)
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
