"""The base of pi_coder's dialogs: a ``ModalScreen`` that opens and redraws cheaply.

Textual draws the screen under a translucent modal (our ``$pi-overlay``) by rendering the screen
below as a Rich renderable on every repaint of the modal: its lines become segments, each segment's
colours are blended with the overlay colour, and the segments are cut into lines again. That cost
about as much as the dialog itself. :class:`DialogScreen` makes the same backdrop from the lines
the screen below already has (its compositor's strips) and maps each distinct style once (a
screen holds a few dozen), so the backdrop costs a few milliseconds whatever the transcript holds.

Textual also lays a newly pushed screen out twice: once when it is shown, then again on the
resize event that first layout sends it, which also lays out every screen below (the whole
transcript). :class:`DialogScreen` drops that second pass when the size did not change.
"""

from __future__ import annotations

from typing import TypeVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.color import Color
from textual.geometry import Region
from textual.screen import ModalScreen, Screen
from textual.strip import Strip

__all__ = ["DialogScreen"]

ResultType = TypeVar("ResultType")

_STYLE_CACHE_LIMIT = 4096
"""Mapped styles kept per dialog (a screen shows far fewer; the cache restarts past this)."""


class DialogScreen(ModalScreen[ResultType]):
    """A modal screen whose dimmed backdrop is made from the lines of the screen below."""

    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._backdrop: list[Strip] | None = None
        self._backdrop_styles: dict[Style | None, Style] = {}
        self._backdrop_key: tuple[Color, Style] | None = None

    # ------------------------------------------------------------------ the backdrop

    def _screen_below(self) -> Screen[object] | None:
        stack = self.app.screen_stack
        for index, screen in enumerate(stack):
            if screen is self:
                return stack[index - 1] if index else None
        return None

    def render_lines(self, crop: Region) -> list[Strip]:
        # Made again (once) if this pass draws lines of this screen; kept after it for what reads
        # single lines between frames (Textual's hit test while selecting with the mouse).
        self._backdrop = None
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        background = self.styles.background
        below = self._screen_below()
        if below is None or background.a >= 1:
            return super().render_line(y)
        # Textual's own rendering of this screen (Widget.render_line) is bypassed: forget what it
        # would have redrawn, or the set grows with every refresh.
        self._dirty_regions.clear()
        if self._backdrop is None:
            self._backdrop = self._make_backdrop(below, background)
        lines = self._backdrop
        return lines[y] if 0 <= y < len(lines) else Strip.blank(self.outer_size.width, self.visual_style.rich_style)

    def _make_backdrop(self, below: Screen[object], tint: Color) -> list[Strip]:
        """The lines of ``below`` as Textual's translucent-screen rendering draws them: links and
        actions removed, colours blended with ``tint``, under this screen's own style."""
        base = self.visual_style.rich_style
        key = (tint, base)
        if key != self._backdrop_key or len(self._backdrop_styles) > _STYLE_CACHE_LIMIT:
            self._backdrop_key = key
            self._backdrop_styles = {}
        styles = self._backdrop_styles
        width = self.outer_size.width
        lines: list[Strip] = []
        for strip in below._compositor.render_strips():
            segments: list[Segment] = []
            for text, style, _control in strip:
                mapped = styles.get(style)
                if mapped is None:
                    mapped = styles[style] = base + _tinted(style, tint)
                segments.append(Segment(text, mapped))
            lines.append(Strip(segments, strip.cell_length).crop(0, width))
        return lines

    # ------------------------------------------------------------------ layout

    async def _on_resize(self, event: events.Resize) -> None:
        # The resize event of this screen's own first layout: nothing changed size, so neither this
        # screen nor those below need another layout (Screen._on_resize would do both).
        if event.size == self.outer_size and all(
            screen.outer_size == event.size for screen in self.app.screen_stack if screen is not self
        ):
            event.prevent_default()


def _tinted(style: Style | None, tint: Color) -> Style:
    """``style`` without links and actions, its colours blended with ``tint`` (as Textual's
    ``BackgroundScreen`` does it)."""
    plain = Style() if style is None else style.clear_meta_and_links()
    if tint.a == 0:
        return plain
    foreground = (Color.from_rich_color(plain.color) + tint).rich_color if plain.color is not None else None
    background = (Color.from_rich_color(plain.bgcolor) + tint).rich_color if plain.bgcolor is not None else None
    return plain + Style.from_color(foreground, background)
