"""The scrolling conversation: follows the live end until the user scrolls away."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Click
from textual.widget import Widget
from textual.widgets import Static

__all__ = ["JumpMarker", "Transcript", "UserMessageBlock"]


class UserMessageBlock(Static):
    """What the user sent."""

    DEFAULT_CSS = """
    UserMessageBlock { height: auto; margin: 1 1 0 1; padding: 0 1; background: $primary 20%; }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Text(text))
        self.text = text


class JumpMarker(Static):
    """Shown while the user is scrolled up and output keeps coming; click or End jumps back."""

    DEFAULT_CSS = """
    JumpMarker {
        dock: bottom; width: auto; height: 1; margin: 0 0 0 2; padding: 0 1;
        background: $accent; color: $text; display: none;
    }
    JumpMarker.-visible { display: block; }
    """

    def __init__(self) -> None:
        super().__init__("↓ New output below (End to jump)")

    def on_click(self, event: Click) -> None:
        event.stop()
        transcript = self.parent
        if isinstance(transcript, Transcript):
            transcript.jump_to_end()


class Transcript(VerticalScroll, can_focus=False):
    """Chat container. New blocks are appended with :meth:`add`."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; scrollbar-size-vertical: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._check_pending = False

    def compose(self) -> ComposeResult:
        yield JumpMarker()

    @property
    def following(self) -> bool:
        """True while the view sticks to the live end."""
        return self.scroll_y >= self.max_scroll_y - 1

    async def add(self, *widgets: Widget) -> None:
        await self.mount_all(widgets)  # at the end: JumpMarker is docked, its position is irrelevant
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
        if not self.following:
            self.query_one(JumpMarker).add_class("-visible")

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y - 1 and self.is_mounted:
            for marker in self.query(JumpMarker):
                marker.remove_class("-visible")

    def jump_to_end(self) -> None:
        self.query_one(JumpMarker).remove_class("-visible")
        self.anchor()

    async def clear_blocks(self) -> None:
        marker = self.query_one(JumpMarker)
        await self.remove_children([child for child in self.children if child is not marker])
