"""Output truncation shared by every tool: head and tail modes, by lines and by bytes.

Pi's rule (``tools/truncate.ts``): keep at most ``DEFAULT_MAX_LINES`` lines and
``DEFAULT_MAX_BYTES`` UTF-8 bytes, whichever limit is hit first, and never return a partial
line, except the tail of a single huge last line (bash).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "GREP_MAX_LINE_LENGTH",
    "TruncationResult",
    "format_size",
    "truncate_head",
    "truncate_line",
    "truncate_tail",
]

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500


def format_size(num_bytes: int) -> str:
    """Pi's size format: ``123B``, ``50.0KB``, ``1.2MB``."""
    if num_bytes < 1024:
        return f"{num_bytes}B"
    if num_bytes < 1024 * 1024:
        return f"{num_bytes / 1024:.1f}KB"
    return f"{num_bytes / (1024 * 1024):.1f}MB"


@dataclass(slots=True, kw_only=True)
class TruncationResult:
    """What a truncation kept; ``to_details()`` is Pi's ``details.truncation`` shape."""

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool = False
    first_line_exceeds_limit: bool = False
    max_lines: int = DEFAULT_MAX_LINES
    max_bytes: int = DEFAULT_MAX_BYTES

    def to_details(self) -> dict[str, object]:
        """Pi's truncation record (camelCase) without the content, which the result already holds."""
        return {
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def truncate_head(
    text: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the first lines of ``text`` (for file reads and search results).

    Lines are ``text.split("\\n")``. If the first line alone exceeds ``max_bytes`` nothing is
    kept and ``first_line_exceeds_limit`` is set.
    """
    total_bytes = _nbytes(text)
    total_lines = text.count("\n") + 1
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return TruncationResult(
            content=text, truncated=False, truncated_by=None, total_lines=total_lines,
            total_bytes=total_bytes, output_lines=total_lines, output_bytes=total_bytes,
            max_lines=max_lines, max_bytes=max_bytes,
        )  # fmt: skip
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    start = 0
    while len(kept) < max_lines:
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        cost = _nbytes(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += cost
        if end < 0:
            break
        start = end + 1
    first_exceeds = not kept and total_lines > 0
    return TruncationResult(
        content="\n".join(kept), truncated=True, truncated_by=truncated_by, total_lines=total_lines,
        total_bytes=total_bytes, output_lines=len(kept), output_bytes=used,
        first_line_exceeds_limit=first_exceeds, max_lines=max_lines, max_bytes=max_bytes,
    )  # fmt: skip


def _utf8_tail(line: str, max_bytes: int) -> str:
    data = line.encode("utf-8", "surrogatepass")[-max_bytes:]
    # Drop continuation bytes cut off from their lead byte so the tail decodes cleanly.
    i = 0
    while i < len(data) and i < 4 and (data[i] & 0xC0) == 0x80:
        i += 1
    return data[i:].decode("utf-8", "replace")


def truncate_tail(
    text: str,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    total_lines: int | None = None,
    total_bytes: int | None = None,
) -> TruncationResult:
    """Keep the last lines of ``text`` (for command output).

    ``total_lines``/``total_bytes`` describe the whole output when ``text`` is only its tail
    (bash keeps a rolling buffer); a tail shorter than the whole counts as truncated.
    When the last line alone exceeds ``max_bytes``, its last ``max_bytes`` are kept
    (``last_line_partial``).
    """
    tail_bytes = _nbytes(text)
    tail_lines = text.count("\n") + 1
    whole_lines = tail_lines if total_lines is None else total_lines
    whole_bytes = tail_bytes if total_bytes is None else total_bytes
    is_whole = whole_bytes == tail_bytes
    if is_whole and tail_lines <= max_lines and tail_bytes <= max_bytes:
        return TruncationResult(
            content=text, truncated=False, truncated_by=None, total_lines=whole_lines,
            total_bytes=whole_bytes, output_lines=whole_lines, output_bytes=whole_bytes,
            max_lines=max_lines, max_bytes=max_bytes,
        )  # fmt: skip
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    partial = False
    end = len(text)
    while len(kept) < max_lines:
        start = text.rfind("\n", 0, end)
        line = text[start + 1 : end]
        cost = _nbytes(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            if not kept:
                line = _utf8_tail(line, max_bytes)
                kept.append(line)
                used = _nbytes(line)
                partial = True
            break
        if start < 0 and not is_whole:
            # The first line of a rolling tail may be cut; never show it.
            truncated_by = "bytes" if whole_bytes > max_bytes else "lines"
            break
        kept.append(line)
        used += cost
        if start < 0:
            break
        end = start
    kept.reverse()
    return TruncationResult(
        content="\n".join(kept), truncated=True, truncated_by=truncated_by, total_lines=whole_lines,
        total_bytes=whole_bytes, output_lines=len(kept), output_bytes=used, last_line_partial=partial,
        max_lines=max_lines, max_bytes=max_bytes,
    )  # fmt: skip


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut one line to ``max_chars`` characters plus ``... [truncated]``; returns (text, was_cut)."""
    if len(line) <= max_chars:
        return line, False
    return line[:max_chars] + "... [truncated]", True
