"""Branch summaries for ``/tree`` navigation.

When the user moves to another point of the session tree, the branch being left (from the old
leaf back to the deepest common ancestor with the new position) can be summarised into a
``branch_summary`` entry at the new position, so the work done there is not forgotten.
:func:`collect_branch_entries` finds those entries, :func:`prepare_branch_entries` picks the
newest messages that fit the token budget, and :func:`generate_branch_summary` asks the
injected stream function for the summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.types import Model
from pi_coder.json_types import JsonObject
from pi_coder.session._summary import (
    BRANCH_SUMMARY_PROMPT,
    CompactionCancelled,
    CompactionError,
    SummaryStreamFn,
    summarize_conversation,
    with_focus,
)
from pi_coder.session.compaction import FileOperations, entry_message, format_file_operations
from pi_coder.session.entries import BranchSummaryEntry, CompactionEntry, SessionEntry
from pi_coder.session.messages import AgentMessage
from pi_coder.session.store import SessionStore
from pi_coder.session.tokens import estimate_tokens

__all__ = [
    "BRANCH_SUMMARY_MAX_TOKENS",
    "BRANCH_SUMMARY_PREAMBLE",
    "DEFAULT_CONTEXT_WINDOW",
    "NO_CONTENT_SUMMARY",
    "BranchEntries",
    "BranchPreparation",
    "BranchSummary",
    "CompactionCancelled",
    "CompactionError",
    "branch_token_budget",
    "collect_branch_entries",
    "generate_branch_summary",
    "prepare_branch_entries",
]

BRANCH_SUMMARY_PREAMBLE = (
    "The user explored a different branch of this conversation and then came back to this point. "
    "What happened on that branch:\n\n"
)
"""Put before the generated summary so the model knows the work is not on the current path."""

BRANCH_SUMMARY_MAX_TOKENS = 2048
DEFAULT_CONTEXT_WINDOW = 128_000
NO_CONTENT_SUMMARY = "No content to summarize"


@dataclass(slots=True, kw_only=True)
class BranchEntries:
    """The branch being left."""

    entries: list[SessionEntry]
    """From just after the common ancestor to the old leaf, oldest first."""
    common_ancestor_id: str | None
    """The deepest entry shared by the old and the new position (None: they share nothing)."""


def collect_branch_entries(store: SessionStore, old_leaf_id: str | None, new_leaf_id: str | None) -> BranchEntries:
    """The entries abandoned when the leaf moves from ``old_leaf_id`` to ``new_leaf_id``.

    Args:
        store: The session.
        old_leaf_id: The current leaf (None: empty session or before the root).
        new_leaf_id: Where the leaf goes (None: before the root).

    Returns:
        The entries from the old leaf back to, excluding, the deepest common ancestor.
    """
    if old_leaf_id is None:
        return BranchEntries(entries=[], common_ancestor_id=None)
    new_path = {entry.id for entry in store.get_branch(new_leaf_id)} if new_leaf_id is not None else set()
    old_path = store.get_branch(old_leaf_id)
    index = len(old_path)
    while index > 0 and old_path[index - 1].id not in new_path:
        index -= 1
    ancestor = old_path[index - 1].id if index > 0 else None
    return BranchEntries(entries=list(old_path[index:]), common_ancestor_id=ancestor)


@dataclass(slots=True, kw_only=True)
class BranchPreparation:
    """The messages to summarise (oldest first) and the files touched on the whole branch."""

    messages: list[AgentMessage]
    file_ops: FileOperations = field(default_factory=FileOperations)
    total_tokens: int = 0


def branch_token_budget(context_window: int, reserve_tokens: int) -> int:
    """Tokens of branch history to summarise: the window (default 128000) minus the reserve."""
    window = context_window if context_window > 0 else DEFAULT_CONTEXT_WINDOW
    return max(0, window - reserve_tokens)


def prepare_branch_entries(entries: Sequence[SessionEntry], token_budget: int = 0) -> BranchPreparation:
    """Pick the messages to summarise, newest first, until ``token_budget`` is used up.

    Tool results are left out (the tool calls carry the context). A compaction or branch
    summary that does not fit may still be added while less than 90% of the budget is used,
    since it condenses much older history. File operations come from every entry, including
    the details of nested summaries.

    Args:
        entries: The abandoned branch, oldest first.
        token_budget: Estimated tokens allowed; 0 means no limit.
    """
    preparation = BranchPreparation(messages=[])
    file_ops = preparation.file_ops
    for entry in entries:
        if type(entry) in (BranchSummaryEntry, CompactionEntry) and not getattr(entry, "from_hook", None):
            file_ops.add_details(entry.details)  # type: ignore[union-attr]
        else:
            message = entry_message(entry)
            if message is not None:
                file_ops.add_message(message)
    picked: list[AgentMessage] = []
    total = 0
    for entry in reversed(entries):
        message = entry_message(entry, summaries=True)
        if message is None or message.role == "toolResult":
            continue
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if type(entry) in (BranchSummaryEntry, CompactionEntry) and total < token_budget * 0.9:
                picked.append(message)
                total += tokens
            break
        picked.append(message)
        total += tokens
    picked.reverse()
    preparation.messages = picked
    preparation.total_tokens = total
    return preparation


@dataclass(slots=True, kw_only=True)
class BranchSummary:
    """A generated branch summary, ready for a ``branch_summary`` entry."""

    summary: str
    details: JsonObject | None
    """``{"readFiles", "modifiedFiles"}``; None when nothing was summarised."""

    def to_json_dict(self) -> JsonObject:
        out: JsonObject = {"summary": self.summary}
        if self.details is not None:
            out["details"] = self.details
        return out


async def generate_branch_summary(
    entries: Sequence[SessionEntry],
    *,
    model: Model,
    stream_fn: SummaryStreamFn,
    reserve_tokens: int,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    signal: AbortSignal | None = None,
    reasoning: str | None = None,
    api_key: str | None = None,
) -> BranchSummary:
    """Summarise an abandoned branch.

    Args:
        entries: The branch (see :func:`collect_branch_entries`).
        model: The summarising model; its window sets the budget.
        stream_fn: The stream function for the request.
        reserve_tokens: ``branch_summary.reserve_tokens``.
        custom_instructions: Extra focus ("Summarize with custom prompt").
        replace_instructions: Use ``custom_instructions`` instead of the default prompt.
        signal: Aborts the request.
        reasoning: Thinking level for reasoning models.
        api_key: Passed to the stream function.

    Returns:
        The summary; ``summary == NO_CONTENT_SUMMARY`` and ``details is None`` when the branch
        holds no messages (no request is made).

    Raises:
        CompactionCancelled: Aborted.
        CompactionError: The request failed.
    """
    preparation = prepare_branch_entries(entries, branch_token_budget(model.context_window, reserve_tokens))
    if not preparation.messages:
        return BranchSummary(summary=NO_CONTENT_SUMMARY, details=None)
    text = await summarize_conversation(
        stream_fn,
        model,
        preparation.messages,
        with_focus(BRANCH_SUMMARY_PROMPT, custom_instructions, replace=replace_instructions),
        max_tokens=BRANCH_SUMMARY_MAX_TOKENS,
        signal=signal,
        reasoning=reasoning,
        api_key=api_key,
    )
    read_files, modified_files = preparation.file_ops.file_lists()
    summary = BRANCH_SUMMARY_PREAMBLE + text + format_file_operations(read_files, modified_files)
    return BranchSummary(summary=summary, details=preparation.file_ops.details())
