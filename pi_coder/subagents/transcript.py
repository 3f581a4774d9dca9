"""A child session as plain text, for the expanded ``task`` result (Ctrl+O)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["child_transcript"]

_MAX_LINE = 300


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_LINE else text[: _MAX_LINE - 1] + "…"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def child_transcript(path: str) -> str:
    """One line per message of the child session at ``path`` (what it was asked, its tool calls,
    their results, its answers); a note when the file cannot be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = fh.read()
    except OSError as exc:
        return f"(child session {path}: {exc.strerror or exc})"
    lines = [f"── child session {path}"]
    for row in raw.splitlines():
        try:
            entry = json.loads(row)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            lines.append(f"› {_short(_text(content))}")
        elif role == "assistant":
            for block in content or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and block.get("text", "").strip():
                    lines.append(f"  {_short(block['text'])}")
                elif block.get("type") == "toolCall":
                    args = json.dumps(block.get("arguments") or {}, ensure_ascii=False)
                    lines.append(f"  → {block.get('name')} {_short(args)}")
        elif role == "toolResult":
            mark = "✗" if message.get("isError") else "←"
            lines.append(f"    {mark} {_short(_text(content))}")
    return "\n".join(lines)
