"""Blocks for user ``!``/``!!`` commands and for compaction / branch summaries.

A command's output of thousands of lines (shown whole after Ctrl+O) is drawn lazily: its height
is counted line by line (a line narrower than the block is one row; only longer lines or lines
with tabs or control characters are wrapped to count them) and only the rows on screen are
rendered, so expanding it costs the rows in view, not the whole output (:class:`_LazyBody`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.text import Text
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget

from pi_coder.tui.format import format_tokens
from pi_coder.tui.widgets._measured import MeasuredStatic
from pi_coder.tui.widgets._throttle import Throttle

if TYPE_CHECKING:
    from textual.geometry import Size

    from pi_coder.session.messages import BashExecutionMessage

__all__ = ["BashBlock", "SummaryBlock"]

_PREVIEW_LINES = 20
LAZY_LINES = 200
"""Outputs of more lines than this are drawn lazily (only the rows on screen are rendered)."""


class _LazyBody:
    """A block body of a few short parts around many output lines, rendered row by row.

    The rows are what Rich renders for ``Group(*before, Text("\n".join(lines)), *after)``: each
    part and each line (wrapped on its own, as Rich does) in turn.
    """

    def __init__(self, before: Sequence[Text], lines: Sequence[str], after: Sequence[Text]) -> None:
        self.before, self.lines, self.after = list(before), list(lines), list(after)
        self._key: tuple[int, object] | None = None
        self._head: list[Strip] = []
        self._tail: list[Strip] = []
        self._starts: list[int] = []
        """The first row of each output line (after the head's rows)."""
        self._rows: dict[int, list[Strip]] = {}

    @staticmethod
    def _render(widget: Widget, renderable: RenderableType, width: int) -> list[Strip]:
        return Visual.to_strips(widget, visualize(widget, renderable), width, None, widget.visual_style)

    def _layout(self, widget: Widget, width: int) -> None:
        key = (width, widget.visual_style)
        if key == self._key:
            return
        self._key = key
        self._rows = {}
        self._head = self._render(widget, Group(*self.before), width) if self.before else []
        self._tail = self._render(widget, Group(*self.after), width) if self.after else []
        starts, row = [], len(self._head)
        for index, line in enumerate(self.lines):
            starts.append(row)
            if line.isprintable() and cell_len(line) <= width:
                row += 1
            else:
                row += len(self._line_rows(widget, index, width))
        starts.append(row)
        self._starts = starts

    def _line_rows(self, widget: Widget, index: int, width: int) -> list[Strip]:
        rows = self._rows.get(index)
        if rows is None:
            rows = self._rows[index] = self._render(widget, Text(self.lines[index]), width) or [Strip.blank(width)]
        return rows

    def height(self, widget: Widget, width: int) -> int:
        self._layout(widget, width)
        return self._starts[-1] + len(self._tail)

    def line(self, widget: Widget, y: int, width: int) -> Strip:
        self._layout(widget, width)
        if y < len(self._head):
            return self._head[y]
        end = self._starts[-1]
        if y >= end:
            tail = y - end
            return self._tail[tail] if tail < len(self._tail) else Strip.blank(width, widget.visual_style.rich_style)
        index = bisect.bisect_right(self._starts, y) - 1
        rows = self._line_rows(widget, index, width)
        offset = y - self._starts[index]
        return rows[offset] if offset < len(rows) else Strip.blank(width, widget.visual_style.rich_style)


class BashBlock(MeasuredStatic):
    """A user shell command: ``$ cmd``, live output tail, then exit code or cancellation."""

    DEFAULT_CSS = """
    BashBlock { height: auto; margin: 1 1 0 1; padding: 0 1; border: round $warning; }
    BashBlock.-excluded { border: round $warning 40%; }
    """

    def __init__(self, command: str, *, exclude_from_context: bool = False, expanded: bool = False) -> None:
        super().__init__("", classes="-excluded" if exclude_from_context else "")
        self.command = command
        self.exclude_from_context = exclude_from_context
        self.output = ""
        self.running = True
        self.message: BashExecutionMessage | None = None
        """The recorded command (exit code, truncation) once it finished."""
        self._expanded = expanded
        self._throttle = Throttle(self, self.refresh_view)
        self._lazy: _LazyBody | None = None
        """The body drawn row by row when the output shown is long (else the ``Static`` draws it)."""

    def on_mount(self) -> None:
        self.refresh_view()

    def set_expanded(self, expanded: bool) -> None:
        if expanded == self._expanded:
            return
        self._expanded = expanded
        if self.running or self.output.count("\n") >= _PREVIEW_LINES:  # else nothing is folded
            self.refresh_view()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self._lazy is not None:
            return self._lazy.height(self, width)
        return super().get_content_height(container, viewport, width)

    def render_line(self, y: int) -> Strip:
        # A selection is drawn by the whole render (Textual maps it onto the content's text).
        if self._lazy is None or self.text_selection is not None:
            return super().render_line(y)
        return self._lazy.line(self, y, self.size.width)

    def update_output(self, output: str) -> None:
        self.output = output
        self._throttle.request()

    def finish(self, message: BashExecutionMessage) -> None:
        self._throttle.cancel()
        self.running = False
        self.message = message
        self.output = message.output
        self.refresh_view()

    def refresh_view(self) -> None:
        self.update(self._render_body())

    def _render_body(self) -> RenderableType:
        prefix = "$$ " if self.exclude_from_context else "$ "
        parts: list[Text] = [Text(prefix + self.command, style="bold")]
        lines = self.output.rstrip("\n").split("\n") if self.output.strip() else []
        if not self._expanded and len(lines) > _PREVIEW_LINES:
            parts.append(Text(f"... ({len(lines) - _PREVIEW_LINES} earlier lines, Ctrl+O to expand)", style="dim"))
            lines = lines[-_PREVIEW_LINES:]
        before = len(parts)
        if lines:
            parts.append(Text("\n".join(lines)))
        if self.running:
            parts.append(Text("Running... (Esc to cancel)", style="dim"))
        else:
            message = self.message
            footer = Text(style="dim")
            if message is not None and message.cancelled:
                footer.append("(cancelled)")
            else:
                code = message.exit_code if message is not None else None
                footer.append(f"(exit {code})" if code is not None else "(done)")
            if message is not None and message.truncated and message.full_output_path:
                footer.append(f" Output truncated. Full output: {message.full_output_path}")
            parts.append(footer)
        lazy = len(lines) > LAZY_LINES
        self._lazy = _LazyBody(parts[:before], lines, parts[before + 1 :]) if lazy else None
        return Group(*parts)


class SummaryBlock(MeasuredStatic):
    """``[compaction]`` / ``[branch]`` summary; the summary text shows when expanded."""

    DEFAULT_CSS = """
    SummaryBlock { height: auto; margin: 1 1 0 1; padding: 0 1; background: $pi-custom-message-bg; }
    """

    def __init__(self, kind: str, summary: str, *, tokens_before: int | None = None, expanded: bool = False) -> None:
        super().__init__("")
        self.kind = kind
        self.summary = summary
        self.tokens_before = tokens_before
        self._expanded = expanded

    def on_mount(self) -> None:
        self.refresh_view()

    def set_expanded(self, expanded: bool) -> None:
        self._expanded = expanded
        self.refresh_view()

    def refresh_view(self) -> None:
        head = Text()
        head.append(f"[{self.kind}] ", style="bold")
        if self.kind == "compaction":
            tokens = f" from {format_tokens(self.tokens_before)} tokens" if self.tokens_before else ""
            head.append(f"Compacted{tokens}", style="")
        else:
            head.append("Branch summary")
        if not self._expanded:
            head.append("  (Ctrl+O to expand)", style="dim")
            self.update(head)
        else:
            from pi_coder.tui.widgets.markdown_view import pi_markdown

            self.update(Group(head, pi_markdown(self.summary)))
