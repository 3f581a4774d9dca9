"""The scrolling conversation: follows the live end until the user scrolls away."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Click
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.widget import Widget
from textual.widgets import Static

from pi_coder.tui.widgets._measured import MeasuredStatic

if TYPE_CHECKING:
    from pi_coder.ai.types import ImageContent, TextContent

__all__ = ["JumpMarker", "Transcript", "UserMessageBlock"]


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

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
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
        await self.blocks.remove_children()
