"""Compaction: replace old history by a structured summary.

The pure parts work on the entries of the current branch (root to leaf): :func:`find_cut_point`
picks where the kept history starts, :func:`prepare_compaction` splits the branch into what is
summarised and what is kept and gathers file operations, and :func:`compact` asks the injected
stream function for the summary and returns a :class:`CompactionResult` for the caller to append
as a ``compaction`` entry. Nothing here writes to the session.

Beyond Pi:

- History kept by the previous compaction is summarised again by the next one (Pi drops it).
- When the latest user request falls in the summarised part, its text is copied verbatim into
  the summary, so the model never loses what it was asked to do.
- :func:`compact` fails (changing nothing) unless the summary plus the kept messages are
  smaller than the context they replace.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.types import AssistantMessage, Cost, Model, TextContent, ToolCall, Usage, UserMessage
from pi_coder.json_types import JsonObject
from pi_coder.session._summary import (
    BRANCH_SUMMARY_PROMPT,
    SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
    TOOL_RESULT_MAX_CHARS,
    TURN_PREFIX_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
    CompactionCancelled,
    CompactionError,
    SummaryStreamFn,
    serialize_conversation,
    summarize_conversation,
    with_focus,
)
from pi_coder.session.context import entry_message
from pi_coder.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
)
from pi_coder.session.messages import AgentMessage, CompactionSummaryMessage
from pi_coder.session.tokens import effective_reserve_tokens, estimate_context_tokens, estimate_tokens

__all__ = [
    "ALREADY_COMPACTED",
    "BRANCH_SUMMARY_PROMPT",
    "NOTHING_TO_COMPACT",
    "SUMMARIZATION_PROMPT",
    "SUMMARIZATION_SYSTEM_PROMPT",
    "TOOL_RESULT_MAX_CHARS",
    "TURN_PREFIX_PROMPT",
    "UPDATE_SUMMARIZATION_PROMPT",
    "CompactionCancelled",
    "CompactionError",
    "CompactionPreparation",
    "CompactionResult",
    "CutPoint",
    "FileOperations",
    "SummaryStreamFn",
    "compact",
    "entry_message",
    "find_cut_point",
    "format_file_operations",
    "nothing_to_compact_reason",
    "prepare_compaction",
    "serialize_conversation",
    "strip_generated_sections",
]

NOTHING_TO_COMPACT = "Nothing to compact (session too small)"
ALREADY_COMPACTED = "Already compacted"


# ---------------------------------------------------------------------------- file operations


@dataclass(slots=True)
class FileOperations:
    """Paths the assistant read, wrote or edited."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_message(self, message: object) -> None:
        """Record the ``read``/``write``/``edit`` tool calls of an assistant message."""
        if not isinstance(message, AssistantMessage):
            return
        for block in message.content:
            if not isinstance(block, ToolCall) or not isinstance(block.arguments, dict):
                continue
            path = block.arguments.get("path")
            if not isinstance(path, str) or not path:
                continue
            if block.name == "read":
                self.read.add(path)
            elif block.name == "write":
                self.written.add(path)
            elif block.name == "edit":
                self.edited.add(path)

    def add_details(self, details: object) -> None:
        """Merge the ``{"readFiles", "modifiedFiles"}`` details of an earlier summary."""
        if not isinstance(details, dict):
            return
        for key, target in (("readFiles", self.read), ("modifiedFiles", self.edited)):
            values = details.get(key)
            if isinstance(values, list):
                target.update(v for v in values if isinstance(v, str) and v)

    def file_lists(self) -> tuple[list[str], list[str]]:
        """``(read_files, modified_files)``: modified = edited | written; read excludes modified."""
        modified = self.edited | self.written
        return sorted(self.read - modified), sorted(modified)

    def details(self) -> JsonObject:
        """The ``details`` stored in a compaction or branch summary entry (Pi's shape)."""
        read, modified = self.file_lists()
        return {"readFiles": [*read], "modifiedFiles": [*modified]}


def format_file_operations(read_files: Sequence[str], modified_files: Sequence[str]) -> str:
    """The file lists appended to a summary (empty sections left out)."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


_GENERATED_SECTIONS = re.compile(
    r"\s*<(read-files|modified-files|latest-user-request)>.*?</\1>", re.DOTALL
)


def strip_generated_sections(summary: str) -> str:
    """A summary without the file lists and request copy this module appends (re-added fresh)."""
    return _GENERATED_SECTIONS.sub("", summary).strip()


# ---------------------------------------------------------------------------- entries


def _has_context(entry: SessionEntry) -> bool:
    kind = type(entry)
    return kind is MessageEntry or kind is CustomMessageEntry or kind is BranchSummaryEntry


def _is_cut_point(entry: SessionEntry) -> bool:
    """Kept history may start here: never at a tool result, which must follow its call."""
    kind = type(entry)
    if type(entry) is MessageEntry:
        return entry.role in ("user", "assistant", "bashExecution", "custom")
    return kind is CustomMessageEntry or kind is BranchSummaryEntry


def _is_turn_start(entry: SessionEntry) -> bool:
    kind = type(entry)
    if type(entry) is MessageEntry:
        return entry.role in ("user", "bashExecution")
    return kind is CustomMessageEntry or kind is BranchSummaryEntry


def _entry_tokens(entry: SessionEntry) -> int:
    message = entry_message(entry)
    return estimate_tokens(message) if message is not None else 0


# ---------------------------------------------------------------------------- cut point


@dataclass(slots=True, frozen=True)
class CutPoint:
    """Where the kept history starts in a branch (indices into the branch's entries)."""

    first_kept_index: int
    turn_start_index: int
    """Start of the turn the cut falls into when it splits a turn, else -1."""
    is_split_turn: bool


def find_cut_point(entries: Sequence[SessionEntry], start: int, end: int, keep_recent_tokens: int) -> CutPoint:
    """Choose the first kept entry so that about ``keep_recent_tokens`` of recent history stay.

    Walks back from ``end`` summing message estimates; once the sum reaches the target, the
    nearest valid cut point at or after that message is taken (the nearest one before it when
    none follows, e.g. inside a long tool result). Valid cut points are user, assistant,
    ``bashExecution`` and custom messages, branch summaries and custom-message entries, never a
    tool result. The cut then moves back over directly preceding bookkeeping entries (model or
    thinking changes, labels). If the first kept message does not start a turn, the cut splits
    that turn and ``turn_start_index`` is the turn's user message (or ``!`` command, summary).

    Args:
        entries: The branch, root first.
        start: First index that may be summarised.
        end: One past the last index considered.
        keep_recent_tokens: Target size of the kept history.

    Returns:
        The cut point; ``first_kept_index == start`` when there is nothing to summarise.
    """
    cut_points = [i for i in range(start, end) if _is_cut_point(entries[i])]
    if not cut_points:
        return CutPoint(start, -1, False)
    cut = cut_points[0]
    accumulated = 0
    for index in range(end - 1, start - 1, -1):
        if not _has_context(entries[index]):
            continue
        accumulated += _entry_tokens(entries[index])
        if accumulated >= keep_recent_tokens:
            after = [c for c in cut_points if c >= index]
            before = [c for c in cut_points if c < index]
            cut = after[0] if after else before[-1]
            break
    while cut > start:
        previous = entries[cut - 1]
        if _has_context(previous) or type(previous) is CompactionEntry:
            break
        cut -= 1
    first_message = next((i for i in range(cut, end) if _has_context(entries[i])), None)
    if first_message is None or _is_turn_start(entries[first_message]):
        return CutPoint(cut, -1, False)
    for index in range(cut - 1, start - 1, -1):
        if _is_turn_start(entries[index]):
            return CutPoint(cut, index, True)
    return CutPoint(cut, -1, False)


# ---------------------------------------------------------------------------- preparation


@dataclass(slots=True, kw_only=True)
class CompactionPreparation:
    """What a compaction summarises and keeps (Pi's ``CompactionPreparation``)."""

    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    """History before the cut (before the split turn's start, when a turn is split)."""
    turn_prefix_messages: list[AgentMessage]
    """The split turn's messages before the cut; empty unless ``is_split_turn``."""
    kept_messages: list[AgentMessage]
    """What stays verbatim after the summary."""
    is_split_turn: bool
    tokens_before: int
    """The context size now (reported usage plus estimates), stored in the entry."""
    estimated_before: int
    """Pure chars/4 estimate of the context now, compared with the result's."""
    previous_summary: str | None
    """The previous compaction's summary, updated rather than rewritten."""
    latest_request: str | None
    """Text of the latest user message when it falls in the summarised part."""
    file_ops: FileOperations


def _user_text(message: UserMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(b.text for b in content if isinstance(b, TextContent))


def prepare_compaction(branch: Sequence[SessionEntry], *, keep_recent_tokens: int) -> CompactionPreparation | None:
    """Split the branch (root to leaf) into summarised and kept history.

    The range considered starts at the previous compaction's first kept entry (or the root), so
    history kept by that compaction is summarised now instead of being lost.

    Args:
        branch: The current branch's entries, root first.
        keep_recent_tokens: About how much recent history to keep verbatim.

    Returns:
        The preparation, or None when the branch ends with a compaction or nothing would be
        summarised.
    """
    if not branch or type(branch[-1]) is CompactionEntry:
        return None
    previous_index = next((i for i in range(len(branch) - 1, -1, -1) if type(branch[i]) is CompactionEntry), -1)
    previous: CompactionEntry | None = branch[previous_index] if previous_index >= 0 else None  # type: ignore[assignment]
    start = previous_index + 1
    if previous is not None:
        kept_start = next(
            (i for i in range(previous_index) if branch[i].id == previous.first_kept_entry_id), previous_index
        )
        start = kept_start
    end = len(branch)
    cut = find_cut_point(branch, start, end, keep_recent_tokens)
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index

    def messages(lo: int, hi: int) -> list[AgentMessage]:
        return [m for e in branch[lo:hi] if (m := entry_message(e)) is not None]

    to_summarize = messages(start, history_end)
    prefix = messages(cut.turn_start_index, cut.first_kept_index) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return None
    kept = messages(cut.first_kept_index, end)

    current: list[AgentMessage] = []
    if previous is not None:
        current.append(entry_message(previous, summaries=True))  # type: ignore[arg-type]
    current.extend(messages(start, end))
    estimates = [estimate_tokens(m) for m in current]
    file_ops = FileOperations()
    if previous is not None and not previous.from_hook:
        file_ops.add_details(previous.details)
    for message in (*to_summarize, *prefix):
        file_ops.add_message(message)

    latest_request = None
    for index in range(end - 1, -1, -1):
        entry = branch[index]
        if type(entry) is MessageEntry and entry.role == "user":
            message = entry.message
            if index < cut.first_kept_index and isinstance(message, UserMessage):
                latest_request = _user_text(message).strip() or None
            break
    return CompactionPreparation(
        first_kept_entry_id=branch[cut.first_kept_index].id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        kept_messages=kept,
        is_split_turn=cut.is_split_turn,
        tokens_before=estimate_context_tokens(current, estimates).tokens,
        estimated_before=sum(estimates),
        previous_summary=previous.summary if previous is not None else None,
        latest_request=latest_request,
        file_ops=file_ops,
    )


def nothing_to_compact_reason(branch: Sequence[SessionEntry]) -> str:
    """Why :func:`prepare_compaction` returned None for ``branch`` (Pi's wording)."""
    if branch and type(branch[-1]) is CompactionEntry:
        return ALREADY_COMPACTED
    return NOTHING_TO_COMPACT


# ---------------------------------------------------------------------------- summary


@dataclass(slots=True, kw_only=True)
class CompactionResult:
    """A finished compaction, ready to append as a ``compaction`` entry."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: JsonObject
    """``{"readFiles": [...], "modifiedFiles": [...]}``."""
    estimated_after: int = 0
    """chars/4 estimate of the context after compaction (summary plus kept messages)."""
    usage: Usage | None = None
    """The summary requests' tokens and cost, added up (None when nothing was requested)."""

    def to_json_dict(self) -> JsonObject:
        """Pi's ``CompactionResult`` shape (as in ``auto_compaction_end`` events)."""
        data: JsonObject = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
            "details": self.details,
        }
        if self.estimated_after:
            data["estimatedTokensAfter"] = self.estimated_after
        if self.usage is not None:
            data["usage"] = self.usage.to_json_dict()
        return data


def _sum_usage(usages: Sequence[Usage]) -> Usage | None:
    if not usages:
        return None
    total = Usage()
    cost = Cost()
    for usage in usages:
        total.input += usage.input
        total.output += usage.output
        total.cache_read += usage.cache_read
        total.cache_write += usage.cache_write
        total.total_tokens += usage.total_tokens
        for name in ("input", "output", "cache_read", "cache_write", "total"):
            setattr(cost, name, getattr(cost, name) + getattr(usage.cost, name))
    total.cost = cost
    return total


async def compact(
    preparation: CompactionPreparation,
    *,
    model: Model,
    stream_fn: SummaryStreamFn,
    reserve_tokens: int,
    custom_instructions: str | None = None,
    signal: AbortSignal | None = None,
    reasoning: str | None = None,
    api_key: str | None = None,
    retry: Callable[[Callable[[], Awaitable[str]]], Awaitable[str]] | None = None,
) -> CompactionResult:
    """Generate the summary for ``preparation``.

    The history summary (an update of the previous summary when there is one) and, for a split
    turn, the turn-prefix summary are requested in parallel and joined. The latest user request
    (when summarised) and the file lists are appended.

    Args:
        preparation: From :func:`prepare_compaction`.
        model: The summarising model (the session's current model).
        stream_fn: Stream function used for the request(s).
        reserve_tokens: ``compaction.reserve_tokens``; the summary may use 80% of it (50% for a
            turn prefix).
        custom_instructions: Extra focus from ``/compact <instructions>``.
        signal: Aborts the requests.
        reasoning: Thinking level for reasoning models.
        api_key: Passed to the stream function.
        retry: Runs each summary request (given as a call that makes one attempt), e.g. with the
            session's retry policy; a failed request is then retried on its own, as Pi does.

    Returns:
        The result to append.

    Raises:
        CompactionCancelled: Aborted.
        CompactionError: A request failed, or the summary would not make the context smaller.
    """
    reserve = effective_reserve_tokens(model.context_window, reserve_tokens)
    previous = strip_generated_sections(preparation.previous_summary) if preparation.previous_summary else None

    usages: list[Usage] = []

    async def request(messages: list[AgentMessage], instructions: str, share: float, prior: str | None) -> str:
        def attempt() -> Awaitable[str]:
            return summarize_conversation(
                stream_fn, model, messages, instructions, max_tokens=int(share * reserve), previous_summary=prior,
                signal=signal, reasoning=reasoning, api_key=api_key, usages=usages,
            )  # fmt: skip

        return await (retry(attempt) if retry is not None else attempt())

    async def history() -> str:
        if not preparation.messages_to_summarize:
            return previous or "No prior history."
        base = UPDATE_SUMMARIZATION_PROMPT if previous else SUMMARIZATION_PROMPT
        return await request(preparation.messages_to_summarize, with_focus(base, custom_instructions), 0.8, previous)

    async def turn_prefix() -> str:
        return await request(preparation.turn_prefix_messages, TURN_PREFIX_PROMPT, 0.5, None)

    if preparation.is_split_turn and preparation.turn_prefix_messages:
        results = await asyncio.gather(history(), turn_prefix(), return_exceptions=True)
        for outcome in results:
            if isinstance(outcome, BaseException):
                raise outcome
        summary = f"{results[0]}\n\n---\n\n**Turn Context (split turn):**\n\n{results[1]}"
    else:
        summary = await history()
    if preparation.latest_request:
        summary += f"\n\n<latest-user-request>\n{preparation.latest_request}\n</latest-user-request>"
    read_files, modified_files = preparation.file_ops.file_lists()
    summary += format_file_operations(read_files, modified_files)

    after = estimate_tokens(CompactionSummaryMessage(summary=summary)) + sum(
        estimate_tokens(m) for m in preparation.kept_messages
    )
    if after >= preparation.estimated_before:
        raise CompactionError(
            f"Compaction would not reduce the context (about {preparation.estimated_before} tokens before, "
            f"{after} after); nothing was changed"
        )
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details=preparation.file_ops.details(),
        estimated_after=after,
        usage=_sum_usage(usages),
    )

