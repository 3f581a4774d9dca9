"""Per-tool rendering of tool-call blocks (pi-product 2.7), as Rich renderables.

Pure functions of a :class:`ToolView` so they are easy to test and to reuse for resumed sessions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal

from rich.console import Group, RenderableType
from rich.text import Text

from pi_coder.tui.format import format_duration, shorten_home

__all__ = ["ToolView", "render_tool", "result_text"]

ToolStatus = Literal["streaming", "pending", "running", "success", "error"]

_EXPAND_HINT = "Ctrl+O to expand"
_EXIT_RE = re.compile(r"\n*Command exited with code (-?\d+)\s*$")
_SYNTAX_THEME = "ansi_dark"


@dataclass(slots=True)
class ToolView:
    """Everything a tool block shows; mutated as events arrive."""

    tool_call_id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    status: ToolStatus = "streaming"
    output: str = ""
    """Partial output while running, then the final result text."""
    details: Any = None
    preview: str | None = None
    """Edit diff computed before the edit runs."""
    preview_error: str | None = None
    elapsed: float | None = None
    """Seconds since the tool started (running) or its total run time (finished)."""


def result_text(result: Any) -> str:
    """Text of an AgentToolResult / ToolResultMessage (images become a placeholder)."""
    if result is None:
        return ""
    content = getattr(result, "content", None)
    if content is None and isinstance(result, dict):
        content = result.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        kind = getattr(block, "type", None) or (block.get("type") if isinstance(block, dict) else None)
        if kind == "text":
            parts.append(getattr(block, "text", None) or (block.get("text", "") if isinstance(block, dict) else ""))
        elif kind == "image":
            mime = getattr(block, "mime_type", None) or (block.get("mimeType") if isinstance(block, dict) else "")
            parts.append(f"[image {mime}]")
    return "\n".join(parts)


def _details(view: ToolView, key: str) -> Any:
    details = view.details
    if isinstance(details, dict):
        return details.get(key)
    return getattr(details, key, None)


def _path(view: ToolView) -> str:
    raw = view.args.get("path") or view.args.get("file_path") or ""
    return shorten_home(str(raw)) if raw else "..."


def _lines(text: str) -> list[str]:
    text = text.replace("\t", "   ").rstrip("\n")
    return text.split("\n") if text else []


def _head(lines: list[str], limit: int, expanded: bool) -> tuple[list[str], int]:
    if expanded or len(lines) <= limit:
        return lines, 0
    return lines[:limit], len(lines) - limit


def _tail(lines: list[str], limit: int, expanded: bool) -> tuple[list[str], int]:
    if expanded or len(lines) <= limit:
        return lines, 0
    return lines[-limit:], len(lines) - limit


def _more(hidden: int, where: str = "more") -> Text:
    return Text(f"... ({hidden} {where} lines, {_EXPAND_HINT})", style="dim")


def _syntax(lines: list[str], path: str) -> RenderableType:
    from rich.syntax import Syntax  # pygments: loaded on the first highlighted block, not at start-up

    code = "\n".join(lines)
    lexer = Syntax.guess_lexer(PurePath(path).name or "x.txt", code=code) if path else "text"
    return Syntax(code, lexer, theme=_SYNTAX_THEME, word_wrap=True)


def _title(name: str, rest: str = "", extra: str = "") -> Text:
    text = Text()
    text.append(name, style="bold")
    if rest:
        text.append(" ")
        text.append(rest, style="cyan")
    if extra:
        text.append(extra, style="dim")
    return text


def _error_body(view: ToolView) -> list[RenderableType]:
    return [Text(view.output.strip() or "Error", style="red")] if view.output else []


def _render_read(view: ToolView, expanded: bool) -> list[RenderableType]:
    path = _path(view)
    rng = ""
    offset, limit = view.args.get("offset"), view.args.get("limit")
    if offset or limit:
        start = int(offset or 1)
        rng = f":{start}" + (f"-{start + int(limit) - 1}" if limit else "")
    parts: list[RenderableType] = [_title("read", path + rng)]
    if view.status == "error":
        return parts + _error_body(view)
    if view.status != "success":
        return parts
    body, notice = _split_notice(view.output)
    shown, hidden = _head(_lines(body), 10, expanded)
    if shown:
        parts.append(_syntax(shown, str(view.args.get("path", ""))))
    if hidden:
        parts.append(_more(hidden))
    if notice:
        parts.append(Text(notice, style="yellow"))
    return parts


def _split_notice(text: str) -> tuple[str, str]:
    """Split a trailing ``[...]`` notice paragraph off a tool's output."""
    head, sep, tail = text.rstrip().rpartition("\n\n")
    if sep and tail.startswith("[") and tail.endswith("]"):
        return head, tail
    return text, ""


def _render_write(view: ToolView, expanded: bool) -> list[RenderableType]:
    path = _path(view)
    parts: list[RenderableType] = [_title("write", path)]
    content = view.args.get("content")
    if isinstance(content, str) and content:
        lines = _lines(content)
        shown, hidden = _head(lines, 10, expanded)
        parts.append(_syntax(shown, str(view.args.get("path", ""))))
        if hidden:
            parts.append(Text(f"... ({hidden} more lines, {len(lines)} total, {_EXPAND_HINT})", style="dim"))
    if view.status == "error":
        parts += _error_body(view)
    return parts


def render_diff(diff: str) -> Text:
    """Colour a display diff (``+12 added`` / ``-12 removed`` / `` 12 context``)."""
    text = Text()
    lines = diff.rstrip("\n").split("\n")
    for index, line in enumerate(lines):
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
        text.append(line.replace("\t", "   "), style=style)
        if index < len(lines) - 1:
            text.append("\n")
    return text


def _render_edit(view: ToolView, expanded: bool) -> list[RenderableType]:
    path = _path(view)
    first = _details(view, "firstChangedLine") or _details(view, "first_changed_line")
    parts: list[RenderableType] = [_title("edit", path + (f":{first}" if first else ""))]
    if view.status == "error":
        return parts + _error_body(view)
    diff = _details(view, "diff") if view.status == "success" else None
    diff = diff or view.preview
    if diff:
        lines = diff.rstrip("\n").split("\n")
        shown, hidden = _head(lines, 40, expanded)
        parts.append(render_diff("\n".join(shown)))
        if hidden:
            parts.append(_more(hidden))
    elif view.preview_error and view.status != "success":
        parts.append(Text(view.preview_error, style="yellow"))
    return parts


def _render_bash(view: ToolView, expanded: bool) -> list[RenderableType]:
    command = str(view.args.get("command", ""))
    timeout = view.args.get("timeout")
    title = Text()
    title.append("$ ", style="bold")
    title.append(command or "...", style="bold")
    if timeout:
        title.append(f" (timeout {timeout}s)", style="dim")
    parts: list[RenderableType] = [title]
    output = view.output
    exit_code: int | None = None
    if view.status in ("success", "error"):
        match = _EXIT_RE.search(output)
        if match:
            exit_code = int(match.group(1))
            output = output[: match.start()]
        elif view.status == "success":
            exit_code = 0
    body, notice = _split_notice(output)
    lines = _lines(body)
    shown, hidden = _tail(lines, 5, expanded)
    if hidden:
        parts.append(_more(hidden, "earlier"))
    if shown:
        parts.append(Text("\n".join(shown), style="red" if view.status == "error" else ""))
    if notice:
        parts.append(Text(notice, style="yellow"))
    footer = Text(style="dim")
    if view.elapsed is not None:
        footer.append(format_duration(view.elapsed))
    if exit_code is not None:
        footer.append((" · " if footer else "") + f"exit {exit_code}")
    if footer:
        parts.append(footer)
    return parts


def _render_listing(limit: int) -> Callable[[ToolView, bool], list[RenderableType]]:
    def render(view: ToolView, expanded: bool) -> list[RenderableType]:
        args = view.args
        if view.name == "grep":
            rest = f"/{args.get('pattern', '')}/ in {shorten_home(str(args.get('path') or '.'))}"
            if args.get("glob"):
                rest += f" ({args['glob']})"
        elif view.name == "find":
            rest = f"{args.get('pattern', '')} in {shorten_home(str(args.get('path') or '.'))}"
        else:
            rest = shorten_home(str(args.get("path") or "."))
        parts: list[RenderableType] = [_title(view.name, rest)]
        if view.status == "error":
            return parts + _error_body(view)
        if view.status == "success":
            shown, hidden = _head(_lines(view.output), limit, expanded)
            if shown:
                parts.append(Text("\n".join(shown)))
            if hidden:
                parts.append(_more(hidden))
        return parts

    return render


def _render_generic(view: ToolView, expanded: bool) -> list[RenderableType]:
    args = json.dumps(view.args, ensure_ascii=False) if view.args else ""
    parts: list[RenderableType] = [_title(view.name, "", " " + args if args else "")]
    if view.output:
        shown, hidden = _head(_lines(view.output), 10, expanded)
        parts.append(Text("\n".join(shown), style="red" if view.status == "error" else ""))
        if hidden:
            parts.append(_more(hidden))
    return parts


_RENDERERS: dict[str, Callable[[ToolView, bool], list[RenderableType]]] = {
    "read": _render_read,
    "write": _render_write,
    "edit": _render_edit,
    "bash": _render_bash,
    "grep": _render_listing(15),
    "find": _render_listing(20),
    "ls": _render_listing(20),
}


def render_tool(view: ToolView, expanded: bool) -> RenderableType:
    """The block's content for the current state."""
    return Group(*_RENDERERS.get(view.name, _render_generic)(view, expanded))
