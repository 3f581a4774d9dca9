"""Per-tool rendering of tool-call blocks (pi-product 2.7), as Rich renderables.

Pure functions of a :class:`ToolView` so they are easy to test and to reuse for resumed sessions.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Literal, cast

from rich.console import Group, RenderableType
from rich.protocol import is_renderable
from rich.text import Text

from pi_coder.tui.format import format_duration, shorten_home

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentToolResult
    from pi_coder.ai.types import ImageContent, TextContent

__all__ = ["CustomToolRender", "ToolView", "render_tool", "result_text", "stored_result"]

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
    result: AgentToolResult | None = None
    """The (partial, then final) result, for an extension's ``render_result``."""


@dataclass(slots=True)
class CustomToolRender:
    """An extension tool's ``render_call(args, *, expanded, theme)`` and ``render_result(result, *,
    expanded, partial, theme)`` (docs/extensions-runtime.md#renderers): a Rich renderable or ``str`` for the block's
    header line / body; ``None`` or an exception (given to ``report``) keep the default slot."""

    render_call: Callable[..., Any] | None
    render_result: Callable[..., Any] | None
    report: Callable[[BaseException], None]
    theme: Any = None

    def call(self, fn: Callable[..., Any], *args: Any, **options: Any) -> RenderableType | None:
        try:
            out = fn(*args, theme=self.theme, **options)
            if inspect.isawaitable(out):
                if inspect.iscoroutine(out):
                    out.close()  # never awaited: no "was never awaited" warning
                raise TypeError("a tool renderer must return a Rich renderable or str, not a coroutine")
            if out is None:
                return None
            if isinstance(out, str):
                return Text.from_ansi(out)
            if not is_renderable(out):
                raise TypeError(f"a tool renderer returned {type(out).__name__}, not a Rich renderable or str")
            return cast("RenderableType", out)
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except Exception as exc:
            self.report(exc)
            return None


def result_text(result: AgentToolResult | None) -> str:
    """Text of a tool's result (images become a placeholder)."""
    from pi_coder.ai.types import TextContent

    if result is None:
        return ""
    return "\n".join(
        block.text if isinstance(block, TextContent) else f"[image {block.mime_type}]" for block in result.content
    )


def stored_result(content: str | Sequence[TextContent | ImageContent], details: Any) -> AgentToolResult:
    """An ``AgentToolResult`` of a stored tool result's ``content`` and ``details``: what an
    extension's ``render_result`` gets for a resumed session."""
    from pi_coder.agent.types import AgentToolResult
    from pi_coder.ai.types import TextContent

    blocks: list[TextContent | ImageContent] = [TextContent(text=content)] if isinstance(content, str) else list(content)
    return AgentToolResult(content=blocks, details=details)


def _details(view: ToolView, key: str) -> Any:
    """A field of the built-in tools' ``details``, a JSON object (Pi's shape) live and resumed alike."""
    details = view.details
    return details.get(key) if isinstance(details, dict) else None


def _path(view: ToolView) -> str:
    raw = view.args.get("path") or view.args.get("file_path") or ""
    return shorten_home(str(raw)) if raw else "..."


def _lines(text: str) -> list[str]:
    text = text.replace("\t", "   ").rstrip("\n")
    return text.split("\n") if text else []


_folds = [False]
"""Set while rendering when some part is longer than its collapsed limit (see :func:`render_tool_folds`)."""


def _head(lines: list[str], limit: int, expanded: bool) -> tuple[list[str], int]:
    if len(lines) > limit:
        _folds[0] = True
    if expanded or len(lines) <= limit:
        return lines, 0
    return lines[:limit], len(lines) - limit


def _tail(lines: list[str], limit: int, expanded: bool) -> tuple[list[str], int]:
    if len(lines) > limit:
        _folds[0] = True
    if expanded or len(lines) <= limit:
        return lines, 0
    return lines[-limit:], len(lines) - limit


def _more(hidden: int, where: str = "more") -> Text:
    return Text(f"... ({hidden} {where} lines, {_EXPAND_HINT})", style="dim")


def _syntax(lines: list[str], path: str) -> RenderableType:
    from rich.syntax import Syntax  # pygments: loaded on the first highlighted block, not at start-up

    code = "\n".join(lines)
    lexer = _lexer(_lexer_name(PurePath(path).name or "x.txt", code) if path else "text")
    return Syntax(code, lexer, theme=_SYNTAX_THEME, word_wrap=True)


_lexers: dict[str, Any] = {}


def _lexer(name: str) -> Any:
    """One Pygments lexer per name, made as Rich's ``Syntax`` makes it, or the plain-text one for an
    unknown name (Rich's fallback). Given a name, ``Syntax`` looks the lexer up again each time
    it is drawn or measured (a scan of Pygments' table; for an unknown name, of the installed
    packages' entry points too); a resumed session measures each ``read`` block at two widths."""
    lexer = _lexers.get(name)
    if lexer is None:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound

        options: dict[str, Any] = {"stripnl": False, "ensurenl": True, "tabsize": 4}  # Syntax's own
        try:
            lexer = get_lexer_by_name(name, **options)
        except ClassNotFound:
            lexer = get_lexer_by_name("text", **options)
        _lexers[name] = lexer
    return lexer


def _lexer_name(name: str, code: str) -> str:
    """The Pygments lexer for a file called ``name`` holding ``code``, as Rich's ``Syntax.guess_lexer``.

    Rich's guess reads every lexer class's patterns, which imports all ~600 lexer modules on its
    first call (0.7 s when a session with a ``read`` block is resumed, before its first frame).
    When one entry of Pygments' lexer table (its patterns, without imports) matches the name,
    that lexer is taken directly (so template lexers' secondary patterns, such as Django's for
    ``*.html``, are not tried for it); a name that matches none or several is left to Rich's guess.
    """
    by_extension, others = _lexer_table()
    parts = name.split(".")
    matches = {lexer for index in range(1, len(parts)) for lexer in by_extension.get(".".join(parts[index:]), ())}
    matches.update(lexer for pattern, lexer in others if pattern.match(name))
    if len(matches) == 1:
        return matches.pop()[1]
    from rich.syntax import Syntax

    return Syntax.guess_lexer(name, code=code)


_LexerKey = tuple[str, str]
"""A lexer's name and its first alias (its name if it has none)."""
_lexer_patterns: tuple[dict[str, list[_LexerKey]], list[tuple[re.Pattern[str], _LexerKey]]] | None = None


def _lexer_table() -> tuple[dict[str, list[_LexerKey]], list[tuple[re.Pattern[str], _LexerKey]]]:
    """Pygments' file patterns, read once from its table: ``*.ext`` ones by extension, the rest compiled."""
    global _lexer_patterns
    if _lexer_patterns is None:
        import fnmatch

        from pygments.lexers import get_all_lexers

        by_extension: dict[str, list[_LexerKey]] = {}
        others: list[tuple[re.Pattern[str], _LexerKey]] = []
        for name, aliases, patterns, _ in get_all_lexers(plugins=False):
            key = (name, aliases[0] if aliases else name)
            for pattern in patterns:
                extension = pattern[2:]
                if pattern.startswith("*.") and not any(char in extension for char in "*?["):
                    by_extension.setdefault(extension, []).append(key)
                else:
                    others.append((re.compile(fnmatch.translate(pattern)), key))
        _lexer_patterns = (by_extension, others)
    return _lexer_patterns


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


_DIFF_PREFIX = re.compile(r"^[+-] *\d* ")
_WORD = re.compile(r"\w+|\s+|[^\w\s]")


def _line_style(line: str) -> str:
    return "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"


def _changed_spans(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character spans of ``old`` and ``new`` that differ, compared word by word."""
    a, b = _WORD.findall(old), _WORD.findall(new)
    starts_a = [0]
    for token in a:
        starts_a.append(starts_a[-1] + len(token))
    starts_b = [0]
    for token in b:
        starts_b.append(starts_b[-1] + len(token))
    spans_a, spans_b = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1 and old[starts_a[i1] : starts_a[i2]].strip():
            spans_a.append((starts_a[i1], starts_a[i2]))
        if j2 > j1 and new[starts_b[j1] : starts_b[j2]].strip():
            spans_b.append((starts_b[j1], starts_b[j2]))
    return spans_a, spans_b


def _diff_line(line: str, spans: list[tuple[int, int]] | None = None) -> Text:
    text = Text(line, style=_line_style(line))
    match = _DIFF_PREFIX.match(line)
    if spans and match:
        for start, end in spans:
            text.stylize("reverse", match.end() + start, match.end() + end)
    return text


def render_diff(diff: str) -> Text:
    """Colour a display diff (``+12 added`` / ``-12 removed`` / `` 12 context``).

    When exactly one line is replaced by one line, the words that changed within it are shown in
    reverse video as well, as Pi does.
    """
    lines = [line.replace("\t", "   ") for line in diff.rstrip("\n").split("\n")]
    rendered: list[Text] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        pair = (
            line.startswith("-")
            and index + 1 < len(lines)
            and lines[index + 1].startswith("+")
            and (index == 0 or not lines[index - 1].startswith("-"))
            and (index + 2 >= len(lines) or not lines[index + 2].startswith("+"))
        )
        old_match, new_match = _DIFF_PREFIX.match(line), _DIFF_PREFIX.match(lines[index + 1]) if pair else None
        if pair and old_match and new_match:
            added = lines[index + 1]
            spans_old, spans_new = _changed_spans(line[old_match.end() :], added[new_match.end() :])
            rendered += [_diff_line(line, spans_old), _diff_line(added, spans_new)]
            index += 2
            continue
        rendered.append(_diff_line(line))
        index += 1
    return Text("\n").join(rendered)


def _render_edit(view: ToolView, expanded: bool) -> list[RenderableType]:
    path = _path(view)
    first = _details(view, "firstChangedLine")
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


def render_tool_folds(
    view: ToolView, expanded: bool, custom: CustomToolRender | None = None
) -> tuple[RenderableType, bool]:
    """:func:`render_tool`, and whether the other state (expanded or collapsed) would look
    different: False when nothing is cut short, so Ctrl+O need not draw the block again."""
    _folds[0] = False
    renderable = render_tool(view, expanded, custom)
    return renderable, _folds[0] or custom is not None


def render_tool(view: ToolView, expanded: bool, custom: CustomToolRender | None = None) -> RenderableType:
    """The block's content for the current state: the tool's header line then its body, each from
    ``custom`` (an extension tool's renderers) when it gives one, else the default (a built-in's
    renderer for a tool replacing it, the generic one for others)."""
    parts = _RENDERERS.get(view.name, _render_generic)(view, expanded)
    if custom is None:
        return Group(*parts)
    if custom.render_call is not None:
        head = custom.call(custom.render_call, dict(view.args), expanded=expanded)
        if head is not None:
            parts = [head, *parts[1:]]
    if custom.render_result is not None and view.result is not None and view.status in ("running", "success", "error"):
        body = custom.call(custom.render_result, view.result, expanded=expanded, partial=view.status == "running")
        if body is not None:
            parts = [*parts[:1], body]
    return Group(*parts)
