"""A virtual list of one-line rows: only the visible lines are rendered (the /tree of a long session).

``OptionList`` measures every option; for thousands of rows that costs seconds on open and
per keystroke. ``RowList`` renders rows lazily from a sequence (or a function of the index), one
terminal line each. A row is a Rich ``Text``, or a ``(left, right)`` pair whose right part is
aligned to the right edge (the left part is cut with an ellipsis to make room).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from pi_coder.tui.widgets.marked_list import MARKER

__all__ = ["Row", "RowList"]

Row: TypeAlias = Text | tuple[Text, Text]


class RowList(ScrollView, can_focus=True):
    """Rows with a highlighted one; Up/Down/PageUp/PageDown/Home/End move, Enter selects."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"row-list--cursor"}

    DEFAULT_CSS = """
    RowList { height: auto; max-height: 30; background: $background; scrollbar-size-vertical: 1; }
    RowList > .row-list--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("home", "jump(0)", show=False),
        Binding("end", "jump(-1)", show=False),
        Binding("enter", "select", show=False),
    ]

    highlighted: reactive[int | None] = reactive(None, always_update=True)

    @dataclass
    class Highlighted(Message):
        row_list: RowList
        index: int

        @property
        def control(self) -> RowList:
            return self.row_list

    @dataclass
    class Selected(Message):
        row_list: RowList
        index: int

        @property
        def control(self) -> RowList:
            return self.row_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._count = 0
        self._row: Callable[[int], Row] = lambda index: Text()

    # ------------------------------------------------------------------ content

    def set_rows(self, rows: Sequence[Row] | Callable[[int], Row], count: int | None = None) -> None:
        """Show ``rows`` (a sequence, or a function of the row index with ``count``)."""
        if callable(rows):
            self._row = rows
            self._count = count or 0
        else:
            items = rows
            self._row = lambda index: items[index]
            self._count = len(items)
        self.virtual_size = Size(self.size.width, self._count)
        if self.highlighted is not None and self.highlighted >= self._count:
            self.highlighted = self._count - 1 if self._count else None
        self.refresh(layout=True)

    @property
    def row_count(self) -> int:
        return self._count

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._count

    def validate_highlighted(self, value: int | None) -> int | None:
        if value is None or self._count == 0:
            return None
        return max(0, min(self._count - 1, value))

    def watch_highlighted(self, value: int | None) -> None:
        if value is None:
            return
        self.scroll_to_region(Region(0, value, 1, 1), animate=False, immediate=True, force=True)
        self.refresh()
        self.post_message(self.Highlighted(self, value))

    def render_line(self, y: int) -> Strip:
        _, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= self._count:
            return Strip.blank(width, base)
        style = base
        if index == self.highlighted:
            style = base + self.get_component_rich_style("row-list--cursor")
        line = Text(MARKER if index == self.highlighted else " " * len(MARKER))
        line.append_text(_fit(self._row(index), max(0, width - len(MARKER))))
        segments = list(line.render(self.app.console, ""))
        return Strip(Segment.apply_style(segments, style), width).crop(0, width)

    # ------------------------------------------------------------------ input

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def action_move(self, step: int) -> None:
        if self._count:
            current = self.highlighted if self.highlighted is not None else -1
            self.highlighted = (current + step) % self._count

    def action_page(self, step: int) -> None:
        if self._count:
            self.highlighted = (self.highlighted or 0) + step * self._page()

    def action_jump(self, index: int) -> None:
        if self._count:
            self.highlighted = index if index >= 0 else self._count - 1

    def action_select(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Selected(self, self.highlighted))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < self._count:
            if index == self.highlighted and event.chain >= 2:
                self.action_select()
            self.highlighted = index


def _fit(row: Row, width: int) -> Text:
    """One line of exactly ``width`` cells."""
    if isinstance(row, tuple):
        left, right = row
        room = max(0, width - right.cell_len - 1)
        line = left.copy()
        line.truncate(room, overflow="ellipsis", pad=True)
        line.append(" ")
        line.append_text(right)
    else:
        line = row.copy()
    line.no_wrap = True
    line.truncate(width, overflow="ellipsis", pad=True)
    return line
