"""Fast streaming Markdown for assistant answers.

Textual's ``Markdown`` widget keeps one widget per block and lays them all out again on every
change: a 400 KB answer becomes thousands of widgets and seconds per frame. Here an answer is a
single line-API widget over a list of *chunks* of Markdown source, each a few KB:

- only the last ("live") chunk changes while text streams in; it is re-rendered (Rich's Markdown
  renderer) at most once per frame, and when its height is unchanged only its lines repaint;
- when the live chunk passes :data:`SEAL_CHARS` at a block boundary (a blank line outside a code
  fence), the finished part is sealed and never re-rendered;
- a sealed chunk is rendered lazily: until it is painted (or rendered in idle time after the
  stream), layout uses a cheap height estimate.

So the cost of a frame does not grow with the length of the answer.
"""

from __future__ import annotations

import bisect
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from pi_coder.tui.widgets._md_elements import markdown_class

__all__ = [
    "StreamingMarkdown",
    "estimate_height",
    "pi_markdown",
    "set_code_block_indent",
    "set_table_row_separators",
    "split_sealable",
    "warm_up",
]

SEAL_CHARS = 2000
"""The live chunk is sealed at the first block boundary past this many characters."""
CODE_THEME = "ansi_dark"


_code_block_indent = "  "
_table_row_lines = False


def set_code_block_indent(indent: str) -> None:
    """The indentation of code blocks from now on (setting ``markdown.code_block_indent``)."""
    global _code_block_indent
    _code_block_indent = indent


def set_table_row_separators(on: bool) -> None:
    """Lines between table rows from now on (setting ``markdown.table_row_separators``)."""
    global _table_row_lines
    _table_row_lines = on


def pi_markdown(text: str, **kwargs: Any) -> Any:
    """A Rich renderable for ``text`` (left-aligned headings, the TUI's code theme)."""
    kwargs.setdefault("code_theme", CODE_THEME)
    kwargs.setdefault("code_indent", _code_block_indent)
    kwargs.setdefault("table_row_lines", _table_row_lines)
    kwargs.setdefault("hyperlinks", True)
    return markdown_class()(text, **kwargs)


def warm_up(console: Any) -> None:
    """Render a small answer once, so the first real one does not pay for imports and caches."""
    sample = "# Title\n\nSome *text* and `code`.\n\n- item\n\n```python\nprint('hi')\n```\n"
    console.render_lines(pi_markdown(sample), console.options.update(width=60, height=None))


def _fence_marker(line: str) -> str | None:
    stripped = line.lstrip()
    if stripped.startswith("```"):
        return "```"
    if stripped.startswith("~~~"):
        return "~~~"
    return None


_LIST_ITEM = re.compile(r"[-*+](\s|$)|\d{1,9}[.)](\s|$)")
_RULE = re.compile(r" {0,3}([-*_])( *\1){2,} *$")


def _starts_block(line: str) -> bool:
    """Can ``line``, after a blank line, start a chunk that renders as it would in the whole text?

    Not an indented line (a list item's continuation or indented code), nor a list item (it may
    belong to the list above: a loose list has no blank rows between its items).
    """
    return bool(line.strip()) and not line[0].isspace() and _LIST_ITEM.match(line) is None


def split_sealable(text: str, min_chars: int = SEAL_CHARS) -> int:
    """Length of the shortest prefix of ``text`` past ``min_chars`` that ends at a block boundary.

    A boundary is a blank line outside a code fence, after a block that is not a rule (no blank
    row follows a rule) and before a complete line that starts a new block (:func:`_starts_block`).
    Returns 0 when there is none yet.
    """
    if len(text) <= min_chars:
        return 0
    fence: str | None = None
    position = 0
    candidate = 0  # end of the blank line(s) after a finished block, waiting for the next line
    previous = ""
    for line in text.splitlines(keepends=True):
        if candidate and line.strip():
            if line.endswith("\n") and _starts_block(line):
                return candidate
            candidate = 0
        position += len(line)
        marker = _fence_marker(line)
        if fence is None and marker is not None:
            fence = marker
        elif fence is not None and marker == fence:
            fence = None
        elif fence is None and not line.strip() and line.endswith("\n"):
            if position >= min_chars and previous and _RULE.match(previous) is None:
                candidate = candidate or position
            continue
        previous = line.rstrip("\n")
    return 0


def estimate_height(source: str, width: int) -> int:
    """A cheap guess of the rendered height (used until a chunk is really rendered)."""
    width = max(8, width)
    rows = 0
    fence: str | None = None
    for line in source.split("\n"):
        marker = _fence_marker(line)
        if marker is not None and (fence is None or marker == fence):
            fence = marker if fence is None else None
            rows += 1
        elif fence is not None:
            rows += max(1, math.ceil((len(line) + 2) / width))
        else:
            rows += max(1, math.ceil(len(line) / width)) if line.strip() else 1
    return rows


@dataclass(slots=True)
class _Chunk:
    source: str
    sealed: bool = False
    """Finished: rendered lazily, estimated until then."""
    gap: bool = False
    """Ends with the blank line that separated it from the next block (a chunk split off the live one)."""
    lines: list[Strip] | None = None
    width: int = -1
    estimate: tuple[int, int] = (-1, 0)
    render_seconds: float = 0.0

    def height(self, width: int) -> int | None:
        """Exact height when rendered for ``width``, else None."""
        return len(self.lines) if self.lines is not None and self.width == width else None

    def estimated(self, width: int) -> int:
        if self.estimate[0] != width:
            self.estimate = (width, estimate_height(self.source.strip("\n"), width) + int(self.gap))
        return self.estimate[1]


@dataclass(frozen=True, slots=True)
class MarkdownContext:
    """What a Markdown transformer is told (an extension's ``register_markdown_transformer``)."""

    message_type: str
    is_streaming: bool
    available_width: int


MarkdownTransform = Callable[[str, MarkdownContext], str]
_transform: MarkdownTransform | None = None


def set_markdown_transform(transform: MarkdownTransform | None) -> None:
    """The app's Markdown transformer chain (None: none); display only."""
    global _transform
    _transform = transform


class StreamingMarkdown(Widget):
    """An answer as Markdown chunks: :meth:`add_text` + :meth:`render_pending` stream it."""

    DEFAULT_CSS = """
    StreamingMarkdown { height: auto; }
    """

    def __init__(self, text: str = "", *, message_type: str = "assistant", lazy: bool = True) -> None:
        """``lazy``: a finished text (``text``) is measured by estimate and rendered when painted
        (a resumed session's answers); False renders it when first laid out, so its first layout
        has its true height (a short block shown at once, as the /hotkeys table: an estimate
        would cost another layout of the whole transcript when the block is painted)."""
        super().__init__()
        self.message_type = message_type
        self._lazy = lazy
        self._chunks: list[_Chunk] = [_Chunk("")]
        self._parts: list[str] = []
        self._live_parts: list[str] = []
        self._initial = text
        self._offsets: list[int] = [0]
        self._offsets_width = -1
        self._idle_timer: Timer | None = None
        self.live_render_seconds = 0.0

    # ------------------------------------------------------------------ text

    @property
    def source(self) -> str:
        """All text received so far."""
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def add_text(self, delta: str) -> None:
        """Record text; it is shown by the next :meth:`render_pending`."""
        self._parts.append(delta)
        self._live_parts.append(delta)

    def render_pending(self) -> int:
        """Seal finished blocks and re-render the live chunk (call at most once per frame).

        Returns:
            How many characters were added since the last call.
        """
        if not self._live_parts:
            return 0
        live = self._chunks[-1]
        added = "".join(self._live_parts)
        self._live_parts = []
        live = self._seal(live.source + added)
        text = live.source
        old_height = live.height(self._width())
        live.source = text
        live.lines = None
        width = self._width()
        if width > 0 and len(self._chunks) > 1:
            self._render_tail(width)
        if width > 0 and old_height is not None:
            self._render_chunk(live, width)
            if live.height(width) == old_height:
                top = self._offsets[-2] if self._offsets_width == width and len(self._offsets) >= 2 else 0
                self.refresh(Region(0, top, self.size.width, old_height))
                return len(added)
        self._offsets_width = -1
        self.refresh(layout=True)
        return len(added)

    def _seal(self, text: str) -> _Chunk:
        """Split ``text`` (the live chunk's new source) at block boundaries; returns the live chunk."""
        live = self._chunks[-1]
        while (cut := split_sealable(text)) > 0:
            live.source, live.sealed, live.gap, live.lines = text[:cut], True, True, None
            live.estimate = (-1, 0)
            text = text[cut:]
            live = _Chunk("")
            self._chunks.append(live)
        live.source = text
        return live

    async def on_mount(self) -> None:
        if self._initial:
            # A finished answer (a resumed session): every chunk, the last one too, waits to be
            # painted before it is rendered, so opening a long session stays fast. (No idle
            # rendering here: a hundred widgets doing it at once would swamp the start-up.)
            self.add_text(self._initial.strip())
            self._initial = ""
            live = self._seal(self._chunks[-1].source + "".join(self._live_parts))
            self._live_parts = []
            # Layout may have measured (and rendered) the empty widget before it was mounted:
            # drop those lines, or the answer keeps a height of 0 until the width changes.
            live.sealed, live.lines, live.width, live.estimate = True, None, -1, (-1, 0)
            self._offsets_width = -1
            self.refresh(layout=True)

    def restyle(self) -> None:
        """Draw every chunk again (the Markdown styles changed: a new theme)."""
        for chunk in self._chunks:
            chunk.lines, chunk.width = None, -1
        self._offsets_width = -1
        self.refresh(layout=True)

    # ------------------------------------------------------------------ rendering

    def _width(self) -> int:
        return self.content_region.width or self.size.width

    def _render_chunk(self, chunk: _Chunk, width: int) -> None:
        start = time.perf_counter()
        text = chunk.source.strip("\n")
        if _transform is not None and text:
            text = _transform(text, MarkdownContext(self.message_type, not chunk.sealed, width))
        style = self.rich_style
        if not text:
            lines: list[Strip] = []
        else:
            console = self.app.console
            options = console.options.update(width=width, height=None, highlight=False)
            renderable = pi_markdown(text)
            lines = [Strip(line, width) for line in console.render_lines(renderable, options, style=style)]
            # Rich opens a list or quote that starts the text with a blank row; the gap of the chunk
            # before already separates it (and an answer never starts with a blank row).
            while lines and not lines[0].text.strip():
                del lines[0]
        if chunk.gap:
            lines.append(_blank(width, style))
        chunk.lines, chunk.width = lines, width
        chunk.render_seconds = time.perf_counter() - start
        if chunk is self._chunks[-1]:
            self.live_render_seconds = chunk.render_seconds

    def _render_tail(self, width: int) -> None:
        """Render the sealed chunks that fill the screen above the live one (what a view
        following the stream shows), so their first paint does not trigger a second layout."""
        rows = self.app.size.height
        for chunk in reversed(self._chunks[:-1]):
            if rows <= 0:
                break
            if chunk.height(width) is None:
                self._render_chunk(chunk, width)
            rows -= chunk.height(width) or 0

    def _chunk_height(self, chunk: _Chunk, width: int) -> int:
        height = chunk.height(width)
        if height is not None:
            return height
        if chunk.sealed and self._lazy:
            return chunk.estimated(width)
        self._render_chunk(chunk, width)
        return len(chunk.lines or ())

    def _layout(self, width: int) -> list[int]:
        if self._offsets_width != width:
            offsets = [0]
            for chunk in self._chunks:
                offsets.append(offsets[-1] + self._chunk_height(chunk, width))
            self._offsets, self._offsets_width = offsets, width
        return self._offsets

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._layout(width)[-1]

    def render_line(self, y: int) -> Strip:
        width = self._width()
        offsets = self._layout(width)
        index = bisect.bisect_right(offsets, y) - 1
        if not 0 <= index < len(self._chunks):
            return _blank(width, self.rich_style)
        chunk = self._chunks[index]
        if chunk.height(width) is None:
            estimate = offsets[index + 1] - offsets[index]
            self._render_chunk(chunk, width)
            if chunk.height(width) != estimate:
                self._offsets_width = -1
                self.call_after_refresh(self.refresh, layout=True)
        lines = chunk.lines or []
        row = y - offsets[index]
        line = lines[row] if row < len(lines) else _blank(width, self.rich_style)
        return self._selectable(line, y)

    def _selectable(self, line: Strip, y: int) -> Strip:
        """Mark the cells with their (column, row) so a drag selects part of the answer, and
        highlight the selected span (the rows are those ``get_selection`` joins)."""
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            start, end = span
            length = line.cell_length
            end = length if end == -1 else min(end, length)
            if 0 <= start < end:
                style = self.screen.get_component_rich_style("screen--selection")
                middle = line.crop(start, end)
                marked = Strip([Segment(t, st + style if st else style, c) for t, st, c in middle], middle.cell_length)
                line = Strip.join([line.crop(0, start), marked, line.crop(end)])
        return line.apply_offsets(0, y)

    def get_selection(self, selection: Any) -> tuple[str, str] | None:
        """The selected text of the rendered answer (mouse selection copies it)."""
        width = self._width()
        if width <= 0:
            return None
        rows: list[str] = []
        for chunk in self._chunks:
            if chunk.height(width) is None:
                self._render_chunk(chunk, width)
            rows.extend(line.text.rstrip() for line in chunk.lines or [])
        return selection.extract("\n".join(rows)), "\n"

    def finish_rendering(self) -> None:
        """Render sealed chunks exactly in idle time (a few per tick), for scrollback."""
        if self._idle_timer is None and any(chunk.sealed for chunk in self._chunks):
            self._idle_timer = self.set_interval(0.05, self._render_some, name="markdown-idle")

    def _render_some(self) -> None:
        width = self._width()
        if width <= 0:
            return
        budget = time.perf_counter() + 0.01
        changed = False
        for chunk in self._chunks:
            if chunk.height(width) is not None:
                continue
            if time.perf_counter() > budget:
                break
            before = chunk.estimated(width)
            self._render_chunk(chunk, width)
            changed = changed or chunk.height(width) != before
        else:
            if self._idle_timer is not None:
                self._idle_timer.stop()
                self._idle_timer = None
        if changed:
            self._offsets_width = -1
            self.refresh(layout=True)

    @property
    def chunk_count(self) -> int:
        return len(self._chunks)

    @property
    def fully_rendered(self) -> bool:
        width = self._width()
        return all(chunk.height(width) is not None for chunk in self._chunks)


def _blank(width: int, style: Style) -> Strip:
    return Strip([Segment(" " * max(0, width), style)], max(0, width))
