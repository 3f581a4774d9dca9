"""An ``OptionList`` whose highlighted row also carries Pi's marker glyph (``→``).

A background two shades from the rest is invisible on some terminals (and under NO_COLOR), so
the selection is shown by a glyph as well. Every option is indented by the marker's width.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import OptionList

__all__ = ["MARKER", "MarkedOptionList", "mark_strip"]

MARKER = "→ "


def mark_strip(strip: Strip, selected: bool, style: object = None) -> Strip:
    """``strip`` (whose first cells are padding) with the marker, or blanks, over its first cells."""
    width = strip.cell_length
    head = MARKER if selected else " " * len(MARKER)
    segments = list(strip.crop(len(MARKER), width))
    first_style = segments[0].style if segments else None
    return Strip([Segment(head, first_style), *segments], width)


class MarkedOptionList(OptionList):
    """Like ``OptionList``, with ``→`` before the highlighted option."""

    DEFAULT_CSS = """
    MarkedOptionList > .option-list--option { padding: 0 1 0 2; }
    """

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        line = self.scroll_offset.y + y
        try:
            index, offset = self._lines[line]
        except IndexError:
            return strip
        return mark_strip(strip, selected=index == self.highlighted and offset == 0)
