"""Output shared by the listing tools (find, ls, grep): the searched folder, relative paths, and
the result text with its limit and truncation notes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pi_coder.agent.types import AgentToolResult
from pi_coder.ai.types import TextContent
from pi_coder.errors import ToolError
from pi_coder.tools._truncate import DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, format_size, truncate_head

__all__ = ["existing_dir", "listing_result", "relative", "text_result"]


def existing_dir(path: Path) -> Path:
    """``path`` if it is a directory; otherwise the tool error the model sees."""
    if not path.exists():
        raise ToolError(f"Path not found: {path}")
    if not path.is_dir():
        raise ToolError(f"Not a directory: {path}")
    return path


def relative(path: str) -> str:
    """A path as ripgrep prints it under ``./``, relative to the searched folder."""
    return path[2:] if path.startswith("./") else path


def text_result(text: str) -> AgentToolResult:
    """A result with only text (``No files found``, ``(empty directory)``)."""
    return AgentToolResult(content=[TextContent(text=text)], details=None)


def listing_result(
    lines: Sequence[str],
    *,
    limit: int,
    limit_reached: bool,
    unit: str,
    limit_key: str,
    refine: bool = True,
    lines_cut: bool = False,
) -> AgentToolResult:
    """``lines`` cut to the byte limit, with a bracketed note of every limit that was hit.

    Args:
        lines: The rows, already cut to ``limit``.
        limit: The row limit in force.
        limit_reached: More rows than ``limit`` were found.
        unit: What a row is, in the note (``results``, ``entries``, ``matches``).
        limit_key: The ``details`` key recording the limit (``resultLimitReached`` ...).
        refine: Suggest refining the pattern as well as raising the limit.
        lines_cut: Some rows were cut to :data:`GREP_MAX_LINE_LENGTH` characters.
    """
    truncation = truncate_head("\n".join(lines), max_lines=1 << 62)
    notices: list[str] = []
    details: dict[str, object] = {}
    if limit_reached:
        hint = ", or refine pattern" if refine else ""
        notices.append(f"{limit} {unit} limit reached. Use limit={limit * 2} for more{hint}")
        details[limit_key] = limit
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation.to_details()
    if lines_cut:
        notices.append(f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines")
        details["linesTruncated"] = True
    text = truncation.content + (f"\n\n[{'. '.join(notices)}]" if notices else "")
    return AgentToolResult(content=[TextContent(text=text)], details=details or None)
