"""``MeasuredStatic``: a ``Static`` that keeps its measured height until its content or width changes.

Textual forgets a widget's measured height whenever its container is resized (the transcript's
height changes when the completion menu opens, a dialog closes, the editor grows), and measures
it again by rendering it whole: with a few hundred tool calls in a resumed session (syntax
highlighted ``read`` output) every such layout took a tenth of a second or more. The height of a
transcript block depends only on what it shows and on its width, so it is kept per
(content, width).
"""

from __future__ import annotations

from textual.geometry import Size
from textual.visual import Visual
from textual.widgets import Static

__all__ = ["MeasuredStatic"]


class MeasuredStatic(Static):
    """A ``Static`` whose height is measured once per content and width."""

    _measured: tuple[Visual, dict[int, int]] | None = None
    """The content measured and its height by width (layout tries the width with and without a
    scrollbar, so two widths alternate)."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        visual = self.visual
        measured = self._measured
        if measured is None or measured[0] is not visual:
            measured = self._measured = (visual, {})
        heights = measured[1]
        height = heights.get(width)
        if height is None:
            height = super().get_content_height(container, viewport, width)
            if len(heights) > 3:
                heights.clear()
            heights[width] = height
        return height
