"""Assistant output: streamed Markdown text and thinking blocks.

Text deltas are collected and written to Textual's ``MarkdownStream`` at most 30 times a second;
``Markdown.append`` re-parses only from the start of the last top-level block, so only the last
block is re-rendered while the answer grows.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from pi_coder.tui.widgets._throttle import Throttle

__all__ = ["AssistantText", "MessageNote", "ThinkingBlock"]


class AssistantText(Widget):
    """One text block of an assistant message, streamable."""

    DEFAULT_CSS = """
    AssistantText { height: auto; margin: 1 1 0 1; }
    AssistantText > Markdown { padding: 0 1; margin: 0; }
    AssistantText MarkdownFence { margin: 0 0 1 0; padding: 0 1; }
    AssistantText > Markdown > *:last-child { margin-bottom: 0; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._initial = text.strip()
        self._source = self._initial
        self._pending: list[str] = []
        self._stream: MarkdownStream | None = None
        self._throttle = Throttle(self, self._write_pending)

    @property
    def source(self) -> str:
        """All text received so far (including what is not rendered yet)."""
        return self._source

    def compose(self) -> ComposeResult:
        yield Markdown(self._initial)

    def append(self, delta: str) -> None:
        """Queue a text delta; it is rendered with the next frame."""
        if not delta:
            return
        if not self._source and not self._pending:
            delta = delta.lstrip()
            if not delta:
                return
        self._source += delta
        self._pending.append(delta)
        self._throttle.request()

    async def _write_pending(self) -> None:
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(Markdown))
        await self._stream.write(text)

    async def finish(self) -> None:
        """Render what is pending and stop the stream."""
        await self._throttle.flush()
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None


class ThinkingBlock(Static):
    """A thinking block: italic text, or a one-line "Thinking..." label when hidden."""

    DEFAULT_CSS = """
    ThinkingBlock { height: auto; margin: 1 1 0 1; padding: 0 1; color: $text-muted; text-style: italic; }
    """

    def __init__(self, text: str = "", *, hidden: bool = False) -> None:
        super().__init__("")
        self._text = text
        self._hidden = hidden
        self._throttle = Throttle(self, self._render_now)

    @property
    def text(self) -> str:
        return self._text

    def on_mount(self) -> None:
        self._render_now()

    def append(self, delta: str) -> None:
        self._text += delta
        self._throttle.request()

    def set_text(self, text: str) -> None:
        self._text = text
        self._throttle.request()

    def set_hidden(self, hidden: bool) -> None:
        self._hidden = hidden
        self._render_now()

    def _render_now(self) -> None:
        if self._hidden:
            self.update(Text("Thinking...", style="italic"))
        else:
            self.update(Text(self._text.strip() or "Thinking...", style="italic"))

    async def finish(self) -> None:
        await self._throttle.flush()


class MessageNote(Static):
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
