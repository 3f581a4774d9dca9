"""One JSON object per LF-terminated line on stdout, flushed per line (JSON and RPC modes).

Session events whose Pi 1.6 wire name differs from the in-process event's ``type`` are renamed
on the way out (``queue_changed`` -> ``queue_update``, ``session_name_changed`` ->
``session_info_changed``, ``auto_compaction_start``/``end`` -> ``compaction_start``/``end``
with the ``reason`` on both, ``thinking_level_changed`` with ``level``), so JSON and RPC
clients written for Pi read the same records.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["JsonLineWriter", "settled_event", "to_jsonable"]

_RENAMED = {
    "queue_changed": "queue_update",
    "session_name_changed": "session_info_changed",
    "auto_compaction_start": "compaction_start",
    "auto_compaction_end": "compaction_end",
}
_WIRE_TYPES = frozenset((*_RENAMED, "thinking_level_changed"))


def _default(value: Any) -> Any:
    to_json = getattr(value, "to_json_dict", None)
    if to_json is not None:
        return to_json()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def to_jsonable(value: Any) -> Any:
    """``value.to_json_dict()`` when it has one, else ``value`` (orjson handles the rest)."""
    to_json = getattr(value, "to_json_dict", None)
    return to_json() if to_json is not None else value


def settled_event(messages: list[Any]) -> dict[str, Any]:
    """Pi's ``agent_settled`` record for a finished prompt, given the session's messages."""
    aborted = False
    for message in reversed(messages):
        role = getattr(message, "role", None)
        if role == "assistant":
            aborted = getattr(message, "stop_reason", None) == "aborted"
            break
        if role in ("user", "toolResult"):
            break
    return {"type": "agent_settled", "aborted": aborted}


class JsonLineWriter:
    """Writes JSON lines to a binary stream; stops quietly once the reader has gone (EPIPE)."""

    def __init__(self, stream: BinaryIO | None = None, *, on_closed: Callable[[], Any] | None = None) -> None:
        """``on_closed`` is called once, when a write finds that the reader has gone."""
        self._out: BinaryIO = stream if stream is not None else sys.stdout.buffer
        self._on_closed = on_closed
        self.closed = False
        """True after the reader went away; later writes are dropped."""
        self._compaction_reason: Any = None

    def _to_wire(self, data: dict[str, Any]) -> dict[str, Any]:
        kind = data.get("type")
        if kind == "thinking_level_changed" and "thinkingLevel" in data:
            return {"type": kind, "level": data["thinkingLevel"]}
        renamed = _RENAMED.get(kind)  # type: ignore[arg-type]
        if renamed is None:
            return data
        data = {**data, "type": renamed}
        if kind == "auto_compaction_start":
            self._compaction_reason = data.get("reason")
        elif kind == "auto_compaction_end" and "reason" not in data and self._compaction_reason is not None:
            data = {"type": renamed, "reason": self._compaction_reason, **data}
        return data

    def write(self, obj: Any) -> None:
        """Serialise ``obj`` (objects with ``to_json_dict`` are converted) and write one line."""
        import orjson

        if self.closed:
            return
        value = to_jsonable(obj)
        if isinstance(value, dict) and value.get("type") in _WIRE_TYPES:
            value = self._to_wire(value)
        try:
            data = orjson.dumps(value, default=_default) + b"\n"
        except orjson.JSONEncodeError:
            # orjson refuses lone surrogates; a failing listener would break the run, so escape them.
            import json

            data = json.dumps(value, default=_default, separators=(",", ":")).encode() + b"\n"
        try:
            self._out.write(data)
            self._out.flush()
        except (BrokenPipeError, ValueError):
            self.closed = True
            if self._on_closed is not None:
                self._on_closed()
