"""Session file entries (Pi's JSONL format version 3).

Each entry keeps the exact JSON dict it was read from (or written as) in ``raw``; that dict is
what goes back to disk, so fields added by newer Pi versions and unknown entry types survive a
load/save round trip. The typed attributes are read from ``raw`` and must be treated as
read-only: the session file is append-only.

``MessageEntry.message`` is built lazily: loading a session only decodes JSON, and pydantic
models are created for the messages someone asks for (usually those on the rebuilt context path).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal, TypeAlias

from pi_coder.ai.types import AssistantMessage, Cost, Usage
from pi_coder.json_types import JsonObject, JsonValue
from pi_coder.session.messages import AgentMessage, message_to_dict, parse_agent_message

__all__ = [
    "CURRENT_SESSION_VERSION",
    "BranchSummaryEntry",
    "CompactionEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "SessionEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "ThinkingLevelChangeEntry",
    "UnknownEntry",
]

CURRENT_SESSION_VERSION = 3


@dataclass(slots=True, kw_only=True, eq=False)
class SessionHeader:
    """Line 1 of a session file; not part of the entry tree."""

    type: ClassVar[Literal["session"]] = "session"
    id: str
    """The session id (a UUID)."""
    timestamp: str
    """Creation time, ISO 8601 with milliseconds and ``Z``."""
    cwd: str
    version: int = CURRENT_SESSION_VERSION
    parent_session: str | None = None
    """Path of the session file this one was forked from."""
    raw: JsonObject = field(default_factory=dict, repr=False)

    def to_json_dict(self) -> JsonObject:
        return self.raw


@dataclass(slots=True, kw_only=True, eq=False)
class _Entry:
    id: str
    """8 hex characters, unique within the session."""
    parent_id: str | None
    """The parent entry's id; ``None`` for a root."""
    timestamp: str
    """ISO 8601 time the entry was appended."""
    raw: JsonObject = field(default_factory=dict, repr=False)
    """The JSON dict as read or written (for a message entry whose message has been parsed,
    only its non-standard fields); use :meth:`to_json_dict` for the full form."""

    def to_json_dict(self) -> JsonObject:
        """The entry's JSON dict, exactly as stored (do not modify it)."""
        return self.raw


@dataclass(slots=True, kw_only=True, eq=False)
class MessageEntry(_Entry):
    """An agent message (``user``, ``assistant``, ``toolResult``, ``bashExecution``, ``custom``...)."""

    type: ClassVar[Literal["message"]] = "message"
    _message: AgentMessage | None = field(default=None, repr=False)

    def _message_json(self) -> JsonObject:
        """The message's JSON object while it is unparsed (the codec only builds an entry for an object)."""
        message = self.raw["message"]
        assert isinstance(message, dict)
        return message

    @property
    def message(self) -> AgentMessage:
        """The typed message, parsed from ``raw`` on first access and cached.

        Once parsed, the message dict and the standard fields are dropped from ``raw`` (the model
        shares the strings and holds the same data; :meth:`to_json_dict` serialises it again),
        which keeps a loaded session's memory within a few times its file size. A message that fails validation becomes an
        ``UnknownMessage`` (left out of the LLM context) instead of making the session unusable.
        """
        message = self._message
        if message is None:
            raw = self.raw
            data = raw["message"]
            assert type(data) is dict  # the codec builds a message entry only for an object (inline: hot path)
            message = parse_agent_message(data, strict=False)
            self._message = message
            # Keep only fields beyond the standard ones (to_json_dict rebuilds the rest).
            self.raw = {} if len(raw) == 5 else {k: v for k, v in raw.items() if k not in _STANDARD_KEYS}
        return message

    @property
    def role(self) -> str | None:
        """The message role, read without building the message model."""
        message = self._message
        if message is not None:
            return message.role
        data = self.raw["message"]
        assert type(data) is dict  # as in ``message`` (inline: read for every entry of a rebuild)
        role = data.get("role")
        if type(role) is not str:
            return None
        return "custom" if role == "hookMessage" else role

    def message_field(self, key: str) -> JsonValue:
        """One top-level JSON field of the message (camelCase key) without building the model."""
        message = self._message
        if message is None:
            return self._message_json().get(key)
        if isinstance(message, AssistantMessage) and key in ("provider", "model"):
            return message.provider if key == "provider" else message.model  # model detection: no re-serialising
        return message_to_dict(message).get(key)

    def usage(self) -> Usage | None:
        """An assistant message's token usage, read without building the whole message model."""
        message = self._message
        if message is not None:
            return message.usage if isinstance(message, AssistantMessage) else None
        raw = self._message_json()
        return _usage_from_json(raw.get("usage")) if raw.get("role") == "assistant" else None

    def to_json_dict(self) -> JsonObject:
        """The entry's JSON dict (do not modify it)."""
        if self._message is None:
            return self.raw
        return {
            "type": "message",
            "id": self.id,
            "parentId": self.parent_id,
            "timestamp": self.timestamp,
            **self.raw,
            "message": message_to_dict(self._message),
        }


def _usage_from_json(value: object) -> Usage | None:
    """The counters of a usage JSON object (leniently: a missing or odd number counts as 0)."""
    if not isinstance(value, dict):
        return None

    def number(key: str) -> int:
        item = value.get(key)
        return int(item) if isinstance(item, int | float) else 0

    cost = value.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    return Usage.model_construct(
        input=number("input"),
        output=number("output"),
        cache_read=number("cacheRead"),
        cache_write=number("cacheWrite"),
        total_tokens=number("totalTokens"),
        cost=Cost.model_construct(total=float(total) if isinstance(total, int | float) else 0.0),
    )


_STANDARD_KEYS = frozenset(("type", "id", "parentId", "timestamp", "message"))


@dataclass(slots=True, kw_only=True, eq=False)
class ModelChangeEntry(_Entry):
    type: ClassVar[Literal["model_change"]] = "model_change"
    provider: str
    model_id: str


@dataclass(slots=True, kw_only=True, eq=False)
class ThinkingLevelChangeEntry(_Entry):
    type: ClassVar[Literal["thinking_level_change"]] = "thinking_level_change"
    thinking_level: str


@dataclass(slots=True, kw_only=True, eq=False)
class CompactionEntry(_Entry):
    """Earlier history replaced by ``summary``; entries from ``first_kept_entry_id`` on are kept."""

    type: ClassVar[Literal["compaction"]] = "compaction"
    summary: str
    first_kept_entry_id: str | None
    tokens_before: int
    details: JsonValue = None
    """Pi's default: ``{"readFiles": [...], "modifiedFiles": [...]}``."""
    from_hook: bool | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class BranchSummaryEntry(_Entry):
    type: ClassVar[Literal["branch_summary"]] = "branch_summary"
    from_id: str
    """The entry the summarised branch was left from, or ``"root"``."""
    summary: str
    details: JsonValue = None
    from_hook: bool | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class CustomEntry(_Entry):
    """Extension state; never part of the LLM context."""

    type: ClassVar[Literal["custom"]] = "custom"
    custom_type: str
    data: JsonValue = None


@dataclass(slots=True, kw_only=True, eq=False)
class CustomMessageEntry(_Entry):
    """An extension message that is part of the LLM context (as a user message)."""

    type: ClassVar[Literal["custom_message"]] = "custom_message"
    custom_type: str
    content: str | list[JsonValue]
    """A string or a list of text/image block dicts (Pi's JSON shape)."""
    display: bool = True
    details: JsonValue = None


@dataclass(slots=True, kw_only=True, eq=False)
class LabelEntry(_Entry):
    type: ClassVar[Literal["label"]] = "label"
    target_id: str
    label: str | None = None
    """``None`` clears the target's label."""


@dataclass(slots=True, kw_only=True, eq=False)
class SessionInfoEntry(_Entry):
    type: ClassVar[Literal["session_info"]] = "session_info"
    name: str | None = None
    """Display name of the session (the latest non-empty one wins)."""


@dataclass(slots=True, kw_only=True, eq=False)
class UnknownEntry(_Entry):
    """An entry type not known here (e.g. written by a newer Pi); kept and written back as is."""

    type: str


SessionEntry: TypeAlias = (
    MessageEntry
    | ModelChangeEntry
    | ThinkingLevelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | UnknownEntry
)
