"""The transcript view model: what a conversation shows, as a list of typed blocks.

One reading of stored messages for every renderer: the TUI (live answers that did not stream,
resumed sessions, session switches), the HTML export and the ``/tree`` labels. Messages may be
the pydantic models or their JSON form (Pi's camelCase keys), so files written by Pi or by any
version of pi_coder read the same way. A tool call carries its result (paired by call id), so a
renderer never looks results up itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pi_coder.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    MessageEntry,
)

__all__ = [
    "AssistantTextBlock",
    "BashBlock",
    "Block",
    "CustomBlock",
    "NoticeBlock",
    "SummaryBlock",
    "ThinkingBlock",
    "ToolBlock",
    "ToolResultView",
    "UserBlock",
    "blocks_text",
    "build_transcript",
    "content_text",
    "custom_entry_places",
    "end_notice",
    "entry_blocks",
    "entry_message",
    "get",
    "message_blocks",
    "message_text",
    "tool_results",
]


def get(obj: Any, name: str, default: Any = None) -> Any:
    """Field ``name`` (snake_case) of a message model, or of its JSON form (camelCase or snake_case)."""
    if isinstance(obj, Mapping):
        head, *rest = name.split("_")
        camel = head + "".join(part.title() for part in rest)
        return obj.get(camel, obj.get(name, default))
    return getattr(obj, name, default)


def content_text(content: Any, *, images: str | None = "[image]") -> str:
    """Text of a content list (or string); image blocks become ``images`` (None: left out)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list | tuple) else ():
        kind = get(block, "type")
        if kind == "text":
            parts.append(str(get(block, "text", "") or ""))
        elif kind == "image" and images is not None:
            parts.append(images)
    return "\n".join(parts)


def message_text(message: Any) -> str:
    """Plain text of a user/custom message's content (images as placeholders)."""
    return content_text(get(message, "content", ""))


@dataclass(frozen=True, slots=True)
class UserBlock:
    text: str
    content: Any
    """The message's content as stored (text and image blocks), for renderers that show images."""


@dataclass(frozen=True, slots=True)
class AssistantTextBlock:
    text: str
    index: int
    """Position in the assistant message's content."""


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    text: str
    index: int
    redacted: bool = False
    """Encrypted reasoning: no text to show (the TUI leaves it out, the export says so)."""


@dataclass(frozen=True, slots=True)
class ToolResultView:
    text: str
    is_error: bool
    details: Any
    content: Any


@dataclass(frozen=True, slots=True)
class ToolBlock:
    call_id: str
    name: str
    args: Mapping[str, Any]
    index: int
    result: ToolResultView | None = None
    """None while the call has no result (yet)."""


@dataclass(frozen=True, slots=True)
class BashBlock:
    """A user shell command (``!cmd`` / ``!!cmd``)."""

    command: str
    output: str
    exit_code: int | None
    cancelled: bool
    exclude_from_context: bool
    message: Any


@dataclass(frozen=True, slots=True)
class SummaryBlock:
    kind: Literal["compaction", "branch"]
    summary: str
    tokens_before: int | None = None


@dataclass(frozen=True, slots=True)
class CustomBlock:
    custom_type: str
    text: str
    content: Any = None
    message: Any = field(default=None, compare=False)
    """The custom message itself (what an extension's message renderer gets)."""


@dataclass(frozen=True, slots=True)
class NoticeBlock:
    text: str
    level: Literal["info", "warning", "error"]
    stop_reason: str = ""
    error_message: str = ""


Block = (
    UserBlock
    | AssistantTextBlock
    | ThinkingBlock
    | ToolBlock
    | BashBlock
    | SummaryBlock
    | CustomBlock
    | NoticeBlock
)


def end_notice(message: Any) -> NoticeBlock | None:
    """How an assistant message ended, when that is worth a line (error, abort, truncation)."""
    stop = get(message, "stop_reason")
    if stop == "aborted":
        return NoticeBlock("Operation aborted", "error", "aborted", str(get(message, "error_message") or ""))
    if stop == "error":
        error = str(get(message, "error_message") or "")
        return NoticeBlock(f"Error: {error or 'unknown error'}", "error", "error", error)
    if stop == "length":  # cut off by max_tokens (Pi 1.6's wording)
        return NoticeBlock("Response was truncated before completion.", "warning", "length")
    return None


def _result_view(message: Any) -> ToolResultView:
    content = get(message, "content")
    return ToolResultView(
        text=_result_text(content),
        is_error=bool(get(message, "is_error")),
        details=get(message, "details"),
        content=content,
    )


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list | tuple) else ():
        kind = get(block, "type")
        if kind == "text":
            parts.append(str(get(block, "text", "") or ""))
        elif kind == "image":
            parts.append(f"[image {get(block, 'mime_type', '') or ''}]")
    return "\n".join(parts)


def tool_results(messages: Iterable[Any]) -> dict[str, Any]:
    """Tool result messages by call id."""
    return {str(get(m, "tool_call_id")): m for m in messages if get(m, "role") == "toolResult"}


def message_blocks(message: Any, results: Mapping[str, Any] | None = None, *, hidden: bool = False) -> list[Block]:
    """The blocks of one message. Tool results appear under their call (``results`` by call id),
    not on their own; a message with nothing to show gives ``[]``. ``hidden``: include custom
    messages marked ``display: false`` (the ``/tree`` lists every entry)."""
    role = get(message, "role")
    if role == "user":
        content = get(message, "content", "")
        return [UserBlock(content_text(content), content)]
    if role == "assistant":
        out: list[Block] = []
        for index, block in enumerate(get(message, "content", []) or []):
            kind = get(block, "type")
            if kind == "text":
                text = str(get(block, "text", "") or "")
                if text.strip():
                    out.append(AssistantTextBlock(text, index))
            elif kind == "thinking":
                redacted = bool(get(block, "redacted"))
                text = str(get(block, "thinking", "") or "")
                if text.strip() or redacted:
                    out.append(ThinkingBlock(text, index, redacted))
            elif kind == "toolCall":
                call_id = str(get(block, "id"))
                args = get(block, "arguments")
                result = (results or {}).get(call_id)
                out.append(
                    ToolBlock(
                        call_id,
                        str(get(block, "name", "tool")),
                        dict(args) if isinstance(args, Mapping) else {},
                        index,
                        _result_view(result) if result is not None else None,
                    )
                )
        notice = end_notice(message)
        if notice is not None:
            out.append(notice)
        return out
    if role == "bashExecution":
        code = get(message, "exit_code")
        return [
            BashBlock(
                str(get(message, "command", "") or ""),
                str(get(message, "output", "") or ""),
                code if isinstance(code, int) else None,
                bool(get(message, "cancelled")),
                bool(get(message, "exclude_from_context")),
                message,
            )
        ]
    if role == "compactionSummary":
        tokens = get(message, "tokens_before")
        return [SummaryBlock("compaction", str(get(message, "summary", "") or ""), tokens)]
    if role == "branchSummary":
        return [SummaryBlock("branch", str(get(message, "summary", "") or ""))]
    if role in ("custom", "hookMessage") and (hidden or get(message, "display", True)):
        content = get(message, "content")
        return [
            CustomBlock(
                str(get(message, "custom_type", "custom") or "custom"), content_text(content), content, message
            )
        ]
    return []


def entry_message(entry: MessageEntry) -> Any:
    """The entry's message without parsing it: its JSON form until something parsed it, then the model."""
    raw = entry.raw.get("message")
    return raw if isinstance(raw, dict) else entry.message


def entry_blocks(entry: Any, *, hidden: bool = False) -> list[Block]:
    """The blocks of one session entry: its message, a custom message or a summary (tool calls
    without their results); bookkeeping entries (model, label, ...) give ``[]``."""
    if isinstance(entry, MessageEntry):
        return message_blocks(entry_message(entry), hidden=hidden)
    if isinstance(entry, CustomMessageEntry):
        if not (hidden or entry.display):
            return []
        return [CustomBlock(entry.custom_type, content_text(entry.content), entry.content)]
    if isinstance(entry, CompactionEntry):
        return [SummaryBlock("compaction", entry.summary, entry.tokens_before)]
    if isinstance(entry, BranchSummaryEntry):
        return [SummaryBlock("branch", entry.summary)]
    return []


_TEXT_BLOCKS = (UserBlock, AssistantTextBlock, CustomBlock)


def blocks_text(blocks: Iterable[Block]) -> str:
    """The prose of some blocks (what the user and the model wrote, custom messages, summaries),
    one block per line; thinking, tool calls and notices are left out."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, _TEXT_BLOCKS):
            parts.append(block.text)
        elif isinstance(block, SummaryBlock):
            parts.append(block.summary)
    return "\n".join(parts)


def build_transcript(messages: Sequence[Any]) -> list[Block]:
    """The blocks of a stored conversation, in order (each tool call with its result)."""
    results = tool_results(messages)
    out: list[Block] = []
    for message in messages:
        out.extend(message_blocks(message, results))
    return out



def custom_entry_places(messages: Sequence[Any], path: Sequence[Any]) -> dict[int, list[CustomEntry]]:
    """Where the ``custom`` entries (extension state, never in the context) of a branch ``path``
    go among the ``messages`` rebuilt from it: by the index of the message each follows (``-1``:
    before them all). A stored message is found by identity (the context holds the entries' own
    message objects), a custom message or branch summary as the next message of its kind; entries
    that a compaction left behind (before its first kept entry) are left out."""
    where = {id(message): index for index, message in enumerate(messages)}
    start = 0
    for index, entry in enumerate(path):
        if isinstance(entry, CompactionEntry):
            start = next((i for i in range(index) if path[i].id == entry.first_kept_entry_id), index)
    places: dict[int, list[CustomEntry]] = {}
    anchor, cursor = -1, 0
    for entry in path[start:]:
        found: int | None = None
        if isinstance(entry, MessageEntry):
            found = where.get(id(entry.message))
        elif isinstance(entry, CustomMessageEntry | BranchSummaryEntry):
            found = _next_of_kind(messages, cursor, entry)
        elif isinstance(entry, CustomEntry) and entry.custom_type:
            places.setdefault(anchor, []).append(entry)
        if found is not None:
            anchor, cursor = found, found + 1
    return places


def _next_of_kind(messages: Sequence[Any], start: int, entry: CustomMessageEntry | BranchSummaryEntry) -> int | None:
    """The index of ``entry``'s message: the next message from ``start`` (past tool results and
    system messages) if it is a custom message of its type or a branch summary."""
    for index in range(start, len(messages)):
        role = get(messages[index], "role")
        if role in ("toolResult", "system", "compactionSummary"):
            continue
        if isinstance(entry, CustomMessageEntry):
            same = role == "custom" and get(messages[index], "custom_type") == entry.custom_type
        else:
            same = role == "branchSummary"
        return index if same else None
    return None
