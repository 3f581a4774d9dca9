"""Session statistics: message counts, token and cost totals, context usage."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pi_coder.ai.types import AssistantMessage, SystemMessage, ToolCall, ToolResultMessage, Usage, UserMessage
from pi_coder.session.messages import CompactionSummaryMessage
from pi_coder.session.tokens import estimate_context_tokens as _estimate_context
from pi_coder.session.tokens import estimate_tokens

__all__ = [
    "SessionStats",
    "UsageTotals",
    "compute_stats",
    "estimate_context_tokens",
    "estimate_message_tokens",
    "usage_tokens",
]

@dataclass(slots=True, kw_only=True)
class SessionStats:
    """What ``/session``, the footer and RPC ``get_session_stats`` show."""

    session_file: str | None = None
    session_id: str = ""
    user_messages: int = 0
    """Counts are over the messages of the current context (branch)."""
    assistant_messages: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    total_messages: int = 0
    input: int = 0
    """Token and cost totals are over every assistant message of the session (all branches)."""
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: float = 0.0
    context_tokens: int | None = None
    """Estimated size of the next request; None right after a compaction (unknown until the next reply)."""
    context_window: int = 0
    context_percent: float | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """Pi's ``get_session_stats`` shape (plus ``contextUsage``)."""
        out: dict[str, Any] = {
            "sessionFile": self.session_file,
            "sessionId": self.session_id,
            "userMessages": self.user_messages,
            "assistantMessages": self.assistant_messages,
            "toolCalls": self.tool_calls,
            "toolResults": self.tool_results,
            "totalMessages": self.total_messages,
            "tokens": {
                "input": self.input,
                "output": self.output,
                "cacheRead": self.cache_read,
                "cacheWrite": self.cache_write,
                "total": self.total_tokens,
            },
            "cost": self.cost,
            "contextUsage": {
                "tokens": self.context_tokens,
                "contextWindow": self.context_window,
                "percent": self.context_percent,
            },
        }
        if self.session_file is None:
            del out["sessionFile"]
        return out


@dataclass(slots=True)
class UsageTotals:
    """Token and cost totals over assistant messages, kept up to date incrementally."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    counted: int = 0
    """How many entries (of the source being followed) have been looked at."""
    source: object = None
    """Identity of what was counted (so a new session starts over)."""

    def add(self, usage: Usage) -> None:
        """Add one response's usage."""
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.cost += usage.cost.total

    @classmethod
    def of_messages(cls, messages: Iterable[object]) -> UsageTotals:
        totals = cls()
        for message in messages:
            if isinstance(message, AssistantMessage):
                totals.add(message.usage)
        return totals


def usage_tokens(usage: Usage) -> int:
    """A response's context size: ``totalTokens``, or the sum of its parts when that is 0."""
    return usage.total_tokens or (usage.input + usage.output + usage.cache_read + usage.cache_write)


def estimate_message_tokens(message: Any) -> int:
    """ceil(chars / 4) of what the message contributes to a request."""
    return estimate_tokens(message)


def estimate_context_tokens(messages: list[Any]) -> int | None:
    """Last good assistant usage plus chars/4 of the messages after it.

    Returns None when the context holds a compaction summary with no good assistant reply after
    it: the usage of older replies no longer describes the context.
    """
    estimate = _estimate_context(messages)
    if estimate.last_usage_index is None and any(isinstance(m, CompactionSummaryMessage) for m in messages):
        return None
    return estimate.tokens


def compute_stats(
    context_messages: list[Any],
    totals: UsageTotals | Iterable[Any],
    *,
    context_window: int = 0,
    session_file: str | None = None,
    session_id: str = "",
) -> SessionStats:
    """Build :class:`SessionStats`.

    Args:
        context_messages: The live transcript (current branch, after compaction).
        totals: Token/cost totals of the whole session (all branches), or the session's
            messages to total.
        context_window: The current model's context window (0 if unknown).
        session_file: The session file path, if any.
        session_id: The session id.
    """
    stats = SessionStats(session_file=session_file, session_id=session_id, context_window=context_window)
    for message in context_messages:
        if isinstance(message, SystemMessage):
            continue
        stats.total_messages += 1
        if isinstance(message, UserMessage):
            stats.user_messages += 1
        elif isinstance(message, AssistantMessage):
            stats.assistant_messages += 1
            stats.tool_calls += sum(1 for block in message.content if isinstance(block, ToolCall))
        elif isinstance(message, ToolResultMessage):
            stats.tool_results += 1
    if not isinstance(totals, UsageTotals):
        totals = UsageTotals.of_messages(totals)
    stats.input, stats.output = totals.input, totals.output
    stats.cache_read, stats.cache_write = totals.cache_read, totals.cache_write
    stats.cost = totals.cost
    stats.total_tokens = stats.input + stats.output + stats.cache_read + stats.cache_write
    stats.context_tokens = estimate_context_tokens(context_messages)
    if stats.context_tokens is not None and context_window > 0:
        stats.context_percent = round(stats.context_tokens / context_window * 100, 1)
    return stats
