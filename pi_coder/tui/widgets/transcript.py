"""The scrolling conversation: follows the live end until the user scrolls away.

A resumed session's history is *windowed* (docs/architecture.md#the-transcript-window): only the
newest blocks are mounted as widgets; the earlier ones wait as factories (closures over their
``core.transcript.Block`` records) behind one row at the top, "↑ N earlier messages", and are
built and mounted a batch at a time when the view comes near the top. Every layout of the main
screen visits every mounted widget, so a long session no longer makes each one slower.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Click
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.scrollbar import ScrollBar
from textual.widget import Widget
from textual.widgets import Static

from pi_coder.tui.widgets._measured import MeasuredStatic

if TYPE_CHECKING:
    from pi_coder.ai.types import ImageContent, TextContent

__all__ = ["BlockFactory", "EarlierMessages", "JumpMarker", "Transcript", "UserMessageBlock"]

BlockFactory = Callable[[], "Widget | None"]
"""Builds an earlier block's widget when it is loaded (None: the block draws nothing)."""

WINDOW = 40
"""A resumed history mounts its newest this-many blocks (or more, to fill :data:`FILL_SCREENS`)."""
BATCH = 40
"""Blocks mounted per load of earlier messages."""
FILL_SCREENS = 3
"""Earlier batches are loaded until the mounted blocks are this many screens high."""
TRIM_AT = 3 * WINDOW
"""A live transcript followed at its end with more mounted blocks than this gives its oldest
finished ones back to the earlier pool (down to ``2 * WINDOW``)."""


class UserMessageBlock(MeasuredStatic):
    """What the user sent."""

    DEFAULT_CSS = """
    UserMessageBlock { height: auto; margin: 1 1 0 1; padding: 0 1; background: $pi-user-message-bg; color: $pi-user-message-text; }
    """

    def __init__(self, text: str, images: Sequence[str] = ()) -> None:
        shown = Text(text)
        if images:  # one dim note line: "[image: image/png] [image: image/jpeg]"
            note = " ".join(f"[image: {mime}]" for mime in images)
            shown = Text.assemble(shown, "\n" if text else "", (note, "dim italic"))
        super().__init__(shown)
        self.text = text
        self.images = list(images)

    @classmethod
    def of(cls, content: str | Sequence[TextContent | ImageContent]) -> UserMessageBlock:
        """The block of a user message's content (a string, or text and image blocks)."""
        from pi_coder.ai.types import TextContent

        if isinstance(content, str):
            return cls(content)
        text = "\n".join(block.text for block in content if isinstance(block, TextContent))
        return cls(text, [block.mime_type or "image" for block in content if not isinstance(block, TextContent)])


class JumpMarker(Static):
    """A one-row notice below the transcript (never over it) while the user reads earlier output.

    It shows only after the user scrolled away from the live end and more output arrived; reaching
    the end again (End, a click here, or scrolling down) hides it.
    """

    DEFAULT_CSS = """
    JumpMarker {
        width: auto; height: 1; margin: 0 0 0 2; padding: 0 1;
        background: $accent; color: auto 90%; display: none;
    }
    JumpMarker.-visible { display: block; }
    """

    def __init__(self) -> None:
        super().__init__("↓ New output below (End to jump)")
        self.transcript: Transcript | None = None

    def on_click(self, event: Click) -> None:
        event.stop()
        if self.transcript is not None:
            self.transcript.jump_to_end()


class EarlierMessages(MeasuredStatic):
    """The row above the mounted blocks while earlier ones wait unmounted; a click loads them."""

    DEFAULT_CSS = """
    EarlierMessages { height: auto; margin: 1 1 0 1; padding: 0 1; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__("")
        self.transcript: Transcript | None = None
        self.count = 0

    def show_count(self, count: int) -> None:
        self.count = count
        noun = "message" if count == 1 else "messages"
        self.update(Text(f"↑ {count} earlier {noun} — scroll up to load"))

    def on_click(self, event: Click) -> None:
        event.stop()
        if self.transcript is not None:
            self.transcript.schedule_load_earlier()


class _Blocks(Widget):
    """The transcript's blocks, in one auto-height column.

    The scroll view's height changes often (the completion menu opens and closes, the editor
    grows, a dialog closes); Textual arranges a container's children again whenever its size
    changes. With the blocks one level down, inside a column whose size is only its width and
    the blocks' total height, those layouts reuse the blocks' arrangement instead of measuring a
    resumed session's hundreds of blocks again.
    """

    DEFAULT_CSS = """
    _Blocks { height: auto; layout: vertical; }
    """

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        # The blocks' heights are their own (``height: auto``), never a share of this column's:
        # arranged against a height of 0 always, the placements are the same and each block's
        # measured box is reused when the column grows by a block.
        return super().arrange(Size(size.width, 0), optimal)


class Transcript(VerticalScroll, can_focus=False):
    """Chat container. New blocks are appended with :meth:`add`."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; scrollbar-size-vertical: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._check_pending = False
        self._released = False  # the user moved the view (Textual released the anchor)
        self._away = False  # ... and it is above the live end
        self.marker = JumpMarker()
        """Compose it right after the transcript: it takes its own row instead of covering text."""
        self.marker.transcript = self
        self.blocks = _Blocks()
        """What :meth:`add` mounts into (query the transcript itself to find blocks)."""
        self._earlier: list[BlockFactory] = []
        """The unmounted earlier blocks, oldest first."""
        self._earlier_row: EarlierMessages | None = None
        self._first: Widget | None = None
        """The oldest mounted history block: earlier batches are mounted right above it."""
        self._hold: tuple[Widget, int] | None = None
        """While a batch is mounted above the view: the block the view must keep in place and
        its last known row in the column (see :meth:`arrange`)."""
        self._loading = False
        self._again: dict[Widget, BlockFactory] = {}
        """Finished live blocks and how to build each again (:meth:`keep`)."""

    def compose(self) -> ComposeResult:
        yield self.blocks

    @property
    def following(self) -> bool:
        """True while the view sticks to the live end."""
        return not self._away and self.scroll_y >= self.max_scroll_y - 1

    def release_anchor(self) -> None:
        # Textual calls this before every scroll the user makes (keys, wheel, scrollbar drag).
        super().release_anchor()
        self._released = True

    async def add(self, *widgets: Widget) -> None:
        await self.blocks.mount_all(widgets)
        self.note_activity()

    def note_activity(self) -> None:
        """New output arrived: keep following it, or offer the jump marker if the user looks elsewhere."""
        if not self._check_pending:
            self._check_pending = True
            self.call_after_refresh(self._check_follow)

    def _check_follow(self) -> None:
        self._check_pending = False
        if not self.is_anchored:
            # Anchor only once the content overflows, so a short transcript starts at the top.
            if self.max_scroll_y > 0:
                self.anchor()
            return
        if self._away and self.scroll_y < self.max_scroll_y:
            self.marker.add_class("-visible")
        else:
            self._back_at_end()
            if self.scroll_y < self.max_scroll_y:  # moved by something other than the user: follow again
                self.anchor()
            if len(self.blocks.children) > TRIM_AT and not self._loading:
                self._loading = True
                self.call_later(self._trim)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._earlier and new_value < old_value and self._near_top():
            self.schedule_load_earlier()
        if new_value >= self.max_scroll_y:
            self._back_at_end()
        elif self._released and new_value < old_value:
            self._away = True

    def _back_at_end(self) -> None:
        self._away = self._released = False
        self.marker.remove_class("-visible")

    def jump_to_end(self) -> None:
        self._back_at_end()
        self.anchor()

    async def clear_blocks(self) -> None:
        self._back_at_end()
        self._again = {}
        self._earlier = []
        self._earlier_row = self._first = None
        self._hold = None
        await self.blocks.remove_children()

    # ------------------------------------------------------------------ the window

    @property
    def earlier_count(self) -> int:
        """How many earlier blocks wait unmounted above the mounted ones."""
        return len(self._earlier)

    async def add_windowed(self, factories: Sequence[BlockFactory], window: int = WINDOW) -> None:
        """Append a stored history: the newest ``window`` blocks are built and mounted, the
        earlier ones wait behind the "earlier messages" row until the view comes near the top."""
        cut = max(0, len(factories) - window)
        widgets = _built(factories[cut:], self._again)
        if cut and not widgets:  # nothing of the window draws (extension entries): no place to load above
            widgets, cut = _built(factories[:cut], self._again), 0
        if cut:
            self._earlier = list(factories[:cut])
            row = self._earlier_row = EarlierMessages()
            row.transcript = self
            row.show_count(len(self._earlier))
            widgets.insert(0, row)
        if widgets:
            await self.add(*widgets)
        self._first = widgets[1] if cut and len(widgets) > 1 else None
        if self._earlier:
            self.call_after_refresh(self._fill)

    def keep(self, widget: Widget, factory: BlockFactory) -> None:
        """``widget`` (mounted) is finished and ``factory`` builds it again: while the user follows
        the live end of a long transcript, it may be unmounted into the earlier pool."""
        self._again[widget] = factory

    async def _trim(self) -> None:
        """Give the oldest finished blocks (from the top of the history down, up to the first
        block that cannot be built again) back to the earlier pool, leaving ``2 * WINDOW``."""
        try:
            children = list(self.blocks.children)
            row = self._earlier_row
            if row is not None and row.is_attached:
                start = children.index(row) + 1
            else:
                start = next((i for i, child in enumerate(children) if child in self._again), len(children))
            victims: list[Widget] = []
            for child in children[start : len(children) - 2 * WINDOW]:
                if child not in self._again:
                    break
                victims.append(child)
            if len(victims) < BATCH or not self.following:
                return
            self._earlier.extend(self._again.pop(child) for child in victims)
            self._first = children[start + len(victims)]
            if row is None or not row.is_attached:
                row = self._earlier_row = EarlierMessages()
                row.transcript = self
                await self.blocks.mount(row, before=victims[0])
            row.show_count(len(self._earlier))
            await self.blocks.remove_children(victims)
        finally:
            self._loading = False

    def _fill(self) -> None:
        """Load earlier batches until the mounted blocks fill a few screens (or the view is near the top)."""
        if self._earlier and (self.virtual_size.height < FILL_SCREENS * self.size.height or self._near_top()):
            self.schedule_load_earlier()

    def _near_top(self) -> bool:
        return self.scroll_y < max(self.size.height, 1)

    def schedule_load_earlier(self) -> None:
        if self._earlier and not self._loading:
            self._loading = True
            self.run_worker(self._load_earlier(BATCH), group="transcript-window", exit_on_error=False)

    async def load_earlier(self, count: int = BATCH) -> None:
        """Mount the next ``count`` earlier blocks above the mounted ones; what the view shows stays in place."""
        if self._loading or not self._earlier:
            return
        self._loading = True
        await self._load_earlier(count)

    async def load_all(self) -> None:
        """Mount every earlier block and wait until they are laid out (quitting draws them all).

        The blocks are mounted in one batch update: one layout of the screen, not one per
        screen refresh while they mount; the view is not kept in place (nothing is drawn before
        the app quits)."""
        while self._loading:
            await asyncio.sleep(0.01)
        row, first = self._earlier_row, self._first
        if self._earlier and first is not None and first.is_attached:
            widgets = _built(self._earlier, self._again)
            self._earlier = []
            self._earlier_row = None
            with self.app.batch_update():
                if row is not None:
                    await row.remove()
                if widgets:
                    await self.blocks.mount_all(widgets, before=first)
                    self._first = widgets[0]
        await self._next_refresh()

    async def _next_refresh(self, timeout: float = 5.0) -> None:
        """Wait until the screen was laid out and drawn (at most ``timeout`` seconds)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def drawn() -> None:
            if not done.done():
                done.set_result(None)

        self.call_after_refresh(drawn)
        try:
            await asyncio.wait_for(done, timeout)
        except TimeoutError:
            pass

    async def _load_earlier(self, count: int) -> None:
        try:
            take = self._earlier[-count:]
            del self._earlier[-count:]
            widgets = _built(take, self._again)
            row, first = self._earlier_row, self._first
            if first is None or not first.is_attached or row is None or not row.is_attached:
                self._earlier = []
                return
            self._hold = (first, self._row_of(first) or 0)
            if widgets:
                await self.blocks.mount_all(widgets, before=first)
                self._first = widgets[0]
            if self._earlier:
                row.show_count(len(self._earlier))
            else:
                self._earlier_row = None
                await row.remove()
            await self._next_refresh()
        finally:
            self._hold = None
            self._loading = False
        if self._earlier and self._near_top():
            self.schedule_load_earlier()

    def _row_of(self, widget: Widget, width: int | None = None) -> int | None:
        """``widget``'s first row in the blocks' column (as arranged at ``width``, by default its current one)."""
        width = self.blocks.size.width if width is None else width
        if not width:
            return None
        for placement in self.blocks.arrange(Size(width, 0)).placements:
            if placement.widget is widget:
                return placement.region.y
        return None

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        result = super().arrange(size, optimal)
        # Blocks mounted above the view push it down: scroll by as much, in the same layout
        # (the frame is drawn with the new offset), so what the user reads does not move.
        hold = self._hold
        if hold is not None and not (self.is_anchored and not self._anchor_released):
            widget, row = hold
            width = next((p.region.width for p in result.placements if p.widget is self.blocks), None)
            now = self._row_of(widget, width)
            if now is not None and now != row:
                self._hold = (widget, now)
                y = max(0.0, self.scroll_y + now - row)
                self.set_reactive(Transcript.scroll_y, y)
                self.set_reactive(Transcript.scroll_target_y, y)
                self.vertical_scrollbar.set_reactive(ScrollBar.position, y)
        return result


def _built(factories: Sequence[BlockFactory], again: dict[Widget, BlockFactory]) -> list[Widget]:
    """The factories' widgets (each remembered in ``again`` with its factory)."""
    widgets: list[Widget] = []
    for factory in factories:
        widget = factory()
        if widget is not None:
            again[widget] = factory
            widgets.append(widget)
    return widgets
