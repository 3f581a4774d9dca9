"""JSON lines <-> session entries, ids, timestamps, and migration of format versions 1 and 2.

Decoding uses orjson (about 3 times faster than the stdlib on session lines) and falls back to
``json`` for the rare input orjson refuses (lone surrogates, integers beyond 64 bits). Entries
are built without validation; message payloads stay dicts until asked for (see ``entries``).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Container
from datetime import UTC, datetime
from typing import TypedDict

import orjson
from pydantic import BaseModel

from pi_coder.json_types import JsonDumpable, JsonObject, JsonValue, to_json_value
from pi_coder.session.entries import (
    CURRENT_SESSION_VERSION,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
)

__all__ = [
    "dumps",
    "to_json_value",
    "entry_from_dict",
    "header_from_dict",
    "iso_now",
    "iso_to_ms",
    "loads",
    "migrate_entries",
    "new_entry_id",
    "new_session_id",
]


def loads(data: bytes | memoryview | str) -> JsonValue:
    """Decode one JSON document.

    Raises:
        ValueError: ``data`` is not valid JSON, or is nested too deeply to decode.
    """
    try:
        value: JsonValue = orjson.loads(data)
        return value
    except orjson.JSONDecodeError:
        try:
            decoded: JsonValue = json.loads(bytes(data) if isinstance(data, memoryview) else data)
            return decoded
        except RecursionError:
            # orjson stops at 1024 levels; the stdlib would recurse until the stack runs out.
            raise ValueError("JSON nested too deeply") from None


def _default(value: object) -> JsonValue:
    if isinstance(value, JsonDumpable):
        return value.to_json_dict()
    if isinstance(value, BaseModel):
        dumped: JsonObject = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped
    raise TypeError(f"cannot serialise {type(value).__name__} to JSON")


def dumps(value: object) -> bytes:
    """Encode ``value`` as one compact JSON line body (no newline), UTF-8."""
    try:
        return orjson.dumps(value, default=_default)
    except TypeError:
        # Lone surrogates, big ints or non-string keys: the stdlib copes (escaping as needed).
        return json.dumps(value, default=_default, separators=(",", ":")).encode()


def iso_now() -> str:
    """Now as JavaScript's ``toISOString()`` writes it: ``2024-12-03T14:00:00.000Z``."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def iso_to_ms(value: object) -> int:
    """Epoch milliseconds of an ISO timestamp (0 when it cannot be parsed)."""
    if not isinstance(value, str):
        return 0
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return 0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)


def new_session_id() -> str:
    return str(uuid.uuid4())


def new_entry_id(taken: Container[str]) -> str:
    """A random 8-hex id not in ``taken`` (a full UUID after 100 collisions)."""
    for _ in range(100):
        candidate = os.urandom(4).hex()
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


def header_from_dict(data: JsonValue) -> SessionHeader | None:
    """The header for a decoded first line, or ``None`` if it is not a session header."""
    if not isinstance(data, dict) or data.get("type") != "session":
        return None
    session_id = data.get("id")
    if not isinstance(session_id, str):
        return None
    version = data.get("version")
    cwd = data.get("cwd")
    parent = data.get("parentSession")
    timestamp = data.get("timestamp")
    return SessionHeader(
        id=session_id,
        timestamp=timestamp if isinstance(timestamp, str) else "",
        cwd=cwd if isinstance(cwd, str) else "",
        version=version if isinstance(version, int) else 1,
        parent_session=parent if isinstance(parent, str) else None,
        raw=data,
    )


def _str(value: JsonValue) -> str:
    if not isinstance(value, str):
        raise TypeError
    return value


def _opt_str(value: JsonValue) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError
    return value


def _opt_bool(value: JsonValue) -> bool | None:
    return value if isinstance(value, bool) else None


class _Common(TypedDict):
    """The fields every entry has."""

    id: str
    parent_id: str | None
    timestamp: str
    raw: JsonObject


def _message(d: JsonObject, common: _Common) -> SessionEntry:
    message = d["message"]
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise TypeError
    return MessageEntry(**common)


def _model_change(d: JsonObject, common: _Common) -> SessionEntry:
    return ModelChangeEntry(**common, provider=_str(d["provider"]), model_id=_str(d["modelId"]))


def _thinking(d: JsonObject, common: _Common) -> SessionEntry:
    return ThinkingLevelChangeEntry(**common, thinking_level=_str(d["thinkingLevel"]))


def _compaction(d: JsonObject, common: _Common) -> SessionEntry:
    tokens = d.get("tokensBefore", 0)
    return CompactionEntry(
        **common,
        summary=_str(d["summary"]),
        first_kept_entry_id=_opt_str(d.get("firstKeptEntryId")),
        tokens_before=tokens if isinstance(tokens, int) else 0,
        details=d.get("details"),
        from_hook=_opt_bool(d.get("fromHook")),
    )


def _branch_summary(d: JsonObject, common: _Common) -> SessionEntry:
    from_id = d.get("fromId")
    return BranchSummaryEntry(
        **common,
        from_id=from_id if isinstance(from_id, str) else "root",
        summary=_str(d.get("summary", "")),
        details=d.get("details"),
        from_hook=_opt_bool(d.get("fromHook")),
    )


def _custom(d: JsonObject, common: _Common) -> SessionEntry:
    return CustomEntry(**common, custom_type=_str(d["customType"]), data=d.get("data"))


def _custom_message(d: JsonObject, common: _Common) -> SessionEntry:
    content = d.get("content", "")
    if not isinstance(content, str | list):
        raise TypeError
    return CustomMessageEntry(
        **common,
        custom_type=_str(d["customType"]),
        content=content,
        display=bool(d.get("display", False)),
        details=d.get("details"),
    )


def _label(d: JsonObject, common: _Common) -> SessionEntry:
    label = d.get("label")
    return LabelEntry(**common, target_id=_str(d["targetId"]), label=label if isinstance(label, str) else None)


def _session_info(d: JsonObject, common: _Common) -> SessionEntry:
    name = d.get("name")
    return SessionInfoEntry(**common, name=name.strip() if isinstance(name, str) else None)


_BUILDERS: dict[str, Callable[[JsonObject, _Common], SessionEntry]] = {
    "message": _message,
    "model_change": _model_change,
    "thinking_level_change": _thinking,
    "compaction": _compaction,
    "branch_summary": _branch_summary,
    "custom": _custom,
    "custom_message": _custom_message,
    "label": _label,
    "session_info": _session_info,
}


def entry_from_dict(data: JsonValue) -> SessionEntry | None:
    """The entry for a decoded line (version 3 shape), or ``None`` if it cannot be one.

    A line needs a string ``type`` and ``id``. A known type whose fields have the wrong shape is
    kept as an :class:`UnknownEntry` (written back unchanged, never used for context).
    """
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    entry_id = data.get("id")
    if not isinstance(kind, str) or not isinstance(entry_id, str) or kind == "session":
        return None
    parent_id = data.get("parentId")
    timestamp = data.get("timestamp")
    if kind == "message":
        # The hot path of loading: build the entry without the generic dispatch.
        message = data.get("message")
        if type(message) is dict and type(message.get("role")) is str:
            return MessageEntry(
                id=entry_id,
                parent_id=parent_id if type(parent_id) is str else None,
                timestamp=timestamp if type(timestamp) is str else "",
                raw=data,
            )
    common: _Common = {
        "id": entry_id,
        "parent_id": parent_id if isinstance(parent_id, str) else None,
        "timestamp": timestamp if isinstance(timestamp, str) else "",
        "raw": data,
    }
    builder = _BUILDERS.get(kind)
    if builder is not None:
        try:
            return builder(data, common)
        except (KeyError, TypeError):
            pass
    return UnknownEntry(**common, type=kind)


def migrate_entries(header: JsonObject, entries: list[JsonObject]) -> int:
    """Bring decoded entries of a version 1 or 2 file to version 3, in place.

    v1 -> v2 gives every entry an 8-hex ``id`` and chains ``parentId`` to the previous entry;
    a compaction's ``firstKeptEntryIndex`` (an index into the file's lines, header = 0) becomes
    ``firstKeptEntryId``. v2 -> v3 renames the message role ``hookMessage`` to ``custom``.

    Args:
        header: The decoded header dict; its ``version`` is set to 3.
        entries: The decoded entry dicts in file order.

    Returns:
        The version the data had before (3 or more means nothing was changed).
    """
    version = header.get("version")
    version = version if isinstance(version, int) else 1
    if version >= CURRENT_SESSION_VERSION:
        return version
    if version < 2:
        taken: set[str] = set()
        previous: str | None = None
        for entry in entries:
            entry_id = new_entry_id(taken)
            taken.add(entry_id)
            entry["id"] = entry_id
            entry["parentId"] = previous
            previous = entry_id
        for entry in entries:
            if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
                index = entry.pop("firstKeptEntryIndex")
                if isinstance(index, int) and 1 <= index <= len(entries):
                    entry["firstKeptEntryId"] = entries[index - 1]["id"]
    for entry in entries:
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
    header["version"] = CURRENT_SESSION_VERSION
    return version
