"""Assistant output: streamed Markdown text and thinking blocks.

Text deltas are collected and rendered at most 30 times a second by
:class:`~pi_coder.tui.widgets.markdown_view.StreamingMarkdown`, which re-renders only the live
tail of the answer (see that module for why Textual's ``Markdown`` widget is not used here).
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Static

from pi_coder.tui.widgets._measured import MeasuredStatic
from pi_coder.tui.widgets._throttle import FRAME_SECONDS, MAX_FRAME_SECONDS, Throttle
from pi_coder.tui.widgets.markdown_view import StreamingMarkdown

__all__ = ["AssistantText", "MessageNote", "ThinkingBlock"]

FLOOD_CHARS = 4000
"""More text than this in one frame means the stream is far faster than anyone reads."""
FLOOD_FRAME_SECONDS = 0.25


class AssistantText(Widget):
    """One text block of an assistant message, streamable."""

    DEFAULT_CSS = """
    AssistantText { height: auto; margin: 1 1 0 1; padding: 0 1; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._initial = text.strip()
        self._started = False
        self._view: StreamingMarkdown | None = None
        self._throttle = Throttle(self, self._render_pending)

    @property
    def source(self) -> str:
        """All text received so far (including what is not rendered yet)."""
        return self._view.source if self._view is not None else self._initial

    @property
    def has_pending(self) -> bool:
        return self._throttle.pending

    def compose(self) -> ComposeResult:
        self._view = StreamingMarkdown(self._initial)
        yield self._view

    def append(self, delta: str) -> None:
        """Queue a text delta; it is rendered with the next frame."""
        if not delta or self._view is None:
            return
        if not self._started:
            delta = delta.lstrip()
            if not delta:
                return
            self._started = True
        self._view.add_text(delta)
        self._throttle.request()

    async def _render_pending(self) -> None:
        assert self._view is not None
        burst = self._view.render_pending()
        self.call_after_refresh(self._frame_done, time.perf_counter(), burst)

    def _frame_done(self, started: float, burst: int) -> None:
        # While a stream outpaces reading (a huge answer, a fast local model), frames get rarer:
        # drawing then takes at most about a quarter of the time and does not slow the stream.
        cost = time.perf_counter() - started
        frame = max(FRAME_SECONDS, 4 * cost)
        if burst > FLOOD_CHARS:
            frame = max(frame, FLOOD_FRAME_SECONDS)
        self._throttle.frame = min(MAX_FRAME_SECONDS, frame)

    async def finish(self) -> None:
        """Render what is pending; sealed chunks are then rendered exactly in idle time."""
        await self._throttle.flush()
        if self._view is not None:
            self._view.finish_rendering()


class ThinkingBlock(Widget):
    """A thinking block: muted italic Markdown, or a one-line "Thinking..." label when hidden."""

    DEFAULT_CSS = """
    ThinkingBlock { height: auto; margin: 1 1 0 1; padding: 0 1; color: $text-muted; text-style: italic; }
    ThinkingBlock > Static { display: none; }
    ThinkingBlock.-hidden > Static { display: block; }
    ThinkingBlock.-hidden > StreamingMarkdown { display: none; }
    """

    hidden_label: ClassVar[str] = "Thinking..."
    """The line shown while thinking is hidden (an extension's ``ctx.ui.set_hidden_thinking_label``)."""

    def __init__(self, text: str = "", *, hidden: bool = False) -> None:
        super().__init__(classes="-hidden" if hidden else "")
        self._initial = text.strip()
        self._view: StreamingMarkdown | None = None
        self._throttle = Throttle(self, self._render_pending)

    @property
    def text(self) -> str:
        return self._view.source if self._view is not None else self._initial

    def compose(self) -> ComposeResult:
        yield Static(Text(self.hidden_label, style="italic"))
        self._view = StreamingMarkdown(self._initial, message_type="assistant-thinking")
        yield self._view

    def append(self, delta: str) -> None:
        if self._view is not None and delta:
            self._view.add_text(delta)
            self._throttle.request()

    def _render_pending(self) -> None:
        if self._view is not None:
            self._view.render_pending()

    def set_hidden(self, hidden: bool) -> None:
        self.set_class(hidden, "-hidden")

    def relabel(self) -> None:
        """Show the current ``hidden_label``."""
        for label in self.query(Static).results():
            if label.parent is self:
                label.update(Text(self.hidden_label, style="italic"))

    async def finish(self) -> None:
        await self._throttle.flush()
        if self._view is not None:
            self._view.finish_rendering()


class MessageNote(MeasuredStatic):
    """A one-line note under a message: error, abort, status (classes pick the colour)."""

    DEFAULT_CSS = """
    MessageNote { height: auto; margin: 1 1 0 1; padding: 0 1; }
    MessageNote.-error { color: $error; }
    MessageNote.-warning { color: $warning; }
    MessageNote.-info { color: $text-muted; }
    MessageNote.-success { color: $success; }
    """

    def __init__(self, text: str, level: str = "info") -> None:
        super().__init__(Text(text), classes=f"-{level}")
        self.text = text
        self.level = level

    def set_text(self, text: str) -> None:
        self.text = text
        self.update(Text(text))
