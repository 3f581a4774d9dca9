"""Rebuild the agent's message list from the entry tree (Pi's ``buildSessionContext``, section 3.3).

On top of Pi's rules, the rebuilt context never holds an unanswered tool call: a call whose
result was never written (abort, crash, kill) gets a synthetic error result right after its
assistant message, so a damaged session can always be continued.

Files written by Pi 1.x carry two more things this applies: ``system`` messages (the prompt and
tool declarations Pi used) are left out, because the host declares its own prompt and tools at
the head of the transcript; and ``context_edit`` entries (``targetId``, ``replacement``) edit
what the model sees of an earlier entry on the path: ``null`` omits it, anything else replaces
its content (the latest edit on the path wins). Both stay in the file untouched.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from pi_coder.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage
from pi_coder.json_types import JsonValue
from pi_coder.session.codec import iso_to_ms
from pi_coder.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
)
from pi_coder.session.messages import (
    AgentMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    message_to_dict,
    parse_agent_message,
)

__all__ = [
    "INTERRUPTED_TOOL_CALL_TEXT",
    "SessionContext",
    "build_context_from_path",
    "build_session_context",
    "entry_message",
    "path_to",
    "repair_tool_pairing",
]

INTERRUPTED_TOOL_CALL_TEXT = "Tool call was interrupted before it produced a result."

class Unset(enum.Enum):
    """The type of an argument's "not given" default, where None means something."""

    UNSET = "unset"


class SessionContext(NamedTuple):
    """What a session restores: the agent messages, thinking level and model."""

    messages: list[AgentMessage]
    thinking_level: str
    """The last ``thinking_level_change`` on the path, else ``"off"``."""
    model: tuple[str, str] | None
    """``(provider, model_id)`` from the last model change or assistant message on the path."""


def path_to(leaf: SessionEntry | None, by_id: Mapping[str, SessionEntry]) -> list[SessionEntry]:
    """The entries from the root to ``leaf`` (inclusive), following ``parent_id`` links."""
    path: list[SessionEntry] = []
    seen: set[str] = set()
    current = leaf
    while current is not None and current.id not in seen:
        seen.add(current.id)
        path.append(current)
        parent = current.parent_id
        current = by_id.get(parent) if parent is not None else None
    path.reverse()
    return path


def entry_message(
    entry: SessionEntry, *, summaries: bool = False, edit: JsonValue | Unset = Unset.UNSET
) -> AgentMessage | None:
    """The context message an entry contributes, if any (the one entry-to-message conversion).

    Args:
        entry: A session entry.
        summaries: Also turn ``compaction`` entries into their summary message (branch
            summaries want them; compaction itself handles previous compactions apart).
        edit: A ``context_edit`` replacement for the entry's content: ``None`` leaves the entry
            out; unset (the default) keeps it as written.
    """
    if edit is None:
        return None
    if isinstance(entry, MessageEntry):
        # A Pi 1.x system message (its prompt and tools) is not conversation.
        if entry.role == "system":
            return None
        if not isinstance(edit, Unset):
            return _replace_content(entry.message, edit)
        return entry.message
    if isinstance(entry, CustomMessageEntry):
        return CustomMessage.model_validate(
            {
                "role": "custom",
                "customType": entry.custom_type,
                "content": entry.content if isinstance(edit, Unset) else edit,
                "display": entry.display,
                "details": entry.details,
                "timestamp": iso_to_ms(entry.timestamp),
            }
        )
    if isinstance(entry, BranchSummaryEntry) and entry.summary:
        return BranchSummaryMessage(
            summary=entry.summary, from_id=entry.from_id, timestamp=iso_to_ms(entry.timestamp)
        )
    if isinstance(entry, CompactionEntry) and summaries:
        return CompactionSummaryMessage(
            summary=entry.summary, tokens_before=entry.tokens_before, timestamp=iso_to_ms(entry.timestamp)
        )
    return None


def _replace_content(message: AgentMessage, replacement: JsonValue) -> AgentMessage | None:
    """``message`` with a ``context_edit`` replacement as its content (unchanged if it does not fit)."""
    data = message_to_dict(message)
    if data.get("role") not in ("user", "assistant", "toolResult", "custom"):
        return message
    if isinstance(replacement, str) and data["role"] in ("assistant", "toolResult"):
        replacement = [{"type": "text", "text": replacement}]
    try:
        return parse_agent_message({**data, "content": replacement})
    except ValueError:
        return message


def _context_edits(path: Sequence[SessionEntry]) -> dict[str, JsonValue]:
    """``targetId -> replacement`` of the ``context_edit`` entries on ``path`` (latest wins)."""
    edits: dict[str, JsonValue] = {}
    for entry in path:
        if type(entry) is UnknownEntry and entry.type == "context_edit":
            raw = entry.raw
            target = raw.get("targetId")
            if isinstance(target, str) and "replacement" in raw:
                edits[target] = raw["replacement"]
    return edits


def build_context_from_path(path: Sequence[SessionEntry]) -> SessionContext:
    """Pi's context rules applied to a root-to-leaf path, plus tool-call pairing repair.

    Thinking level and model come from the whole path. With a compaction on the path, the
    messages are: the last compaction's summary, then the path entries from its
    ``firstKeptEntryId`` up to the compaction, then everything after it.
    """
    thinking = "off"
    model: tuple[str, str] | None = None
    compaction_index = -1
    has_edits = False
    for index, entry in enumerate(path):
        kind = type(entry)
        if kind is UnknownEntry:
            has_edits = has_edits or entry.type == "context_edit"
        elif kind is MessageEntry:
            if entry.role == "assistant":  # type: ignore[union-attr]
                provider = entry.message_field("provider")  # type: ignore[union-attr]
                model_id = entry.message_field("model")  # type: ignore[union-attr]
                model = (provider if isinstance(provider, str) else "", model_id if isinstance(model_id, str) else "")
        elif kind is ThinkingLevelChangeEntry:
            thinking = entry.thinking_level  # type: ignore[union-attr]
        elif kind is ModelChangeEntry:
            model = (entry.provider, entry.model_id)  # type: ignore[union-attr]
        elif kind is CompactionEntry:
            compaction_index = index

    edits = _context_edits(path) if has_edits else None

    def _edit_for(entry: SessionEntry) -> JsonValue | Unset:
        return edits.get(entry.id, Unset.UNSET) if edits else Unset.UNSET

    messages: list[AgentMessage] = []
    if compaction_index >= 0:
        compaction = path[compaction_index]
        assert isinstance(compaction, CompactionEntry)
        summary = entry_message(compaction, summaries=True)
        assert summary is not None
        messages.append(summary)
        kept = False
        for entry in path[:compaction_index]:
            if entry.id == compaction.first_kept_entry_id:
                kept = True
            if kept and (message := entry_message(entry, edit=_edit_for(entry))) is not None:
                messages.append(message)
        rest = path[compaction_index + 1 :]
    else:
        rest = path
    for entry in rest:
        if (message := entry_message(entry, edit=_edit_for(entry))) is not None:
            messages.append(message)
    return SessionContext(repair_tool_pairing(messages), thinking, model)


def build_session_context(
    entries: Sequence[SessionEntry], leaf_id: str | None | Unset = Unset.UNSET
) -> SessionContext:
    """Rebuild the context of ``entries`` at ``leaf_id`` (Pi's standalone ``buildSessionContext``).

    Args:
        entries: All entries of a session, in file order.
        leaf_id: The leaf; ``None`` gives an empty context; omitted (or unknown) means the last
            entry.
    """
    if leaf_id is None:
        return SessionContext([], "off", None)
    by_id = {entry.id: entry for entry in entries}
    leaf = by_id.get(leaf_id) if not isinstance(leaf_id, Unset) else None
    if leaf is None:
        leaf = entries[-1] if entries else None
    return build_context_from_path(path_to(leaf, by_id))


def repair_tool_pairing(messages: list[AgentMessage]) -> list[AgentMessage]:
    """Give every unanswered tool call a synthetic error result.

    A call counts as answered if a ``toolResult`` with its id appears before the next user or
    assistant message. Missing results are inserted after the tool results that directly follow
    the assistant message. Assistant messages that ended in ``error`` or ``aborted`` are left
    alone: providers drop them from the replay, and a result for them would be an orphan.

    Returns:
        ``messages`` itself when nothing is missing, else a new list.
    """
    out: list[AgentMessage] | None = None
    count = len(messages)
    index = 0
    while index < count:
        message = messages[index]
        index += 1
        if out is not None:
            out.append(message)
        if (
            message.role != "assistant"
            or not isinstance(message, AssistantMessage)
            or message.stop_reason in ("error", "aborted")
        ):
            continue
        calls = [block for block in message.content if block.type == "toolCall"]
        if not calls:
            continue
        answered: set[str] = set()
        insert_at = index
        scan = index
        while scan < count:
            following = messages[scan]
            role = following.role
            if role == "toolResult" and isinstance(following, ToolResultMessage):
                answered.add(following.tool_call_id)
                if insert_at == scan:
                    insert_at = scan + 1
            elif role in ("user", "assistant"):
                break
            scan += 1
        missing = [call for call in calls if call.id not in answered]
        if not missing:
            continue
        if out is None:
            out = list(messages[:index])
        out.extend(messages[index:insert_at])
        out.extend(_interrupted_result(call, message.timestamp) for call in missing)
        index = insert_at
    return messages if out is None else out


def _interrupted_result(call: ToolCall, timestamp: int) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=INTERRUPTED_TOOL_CALL_TEXT)],
        is_error=True,
        timestamp=timestamp,
    )
