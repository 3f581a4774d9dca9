"""Blocks for user ``!``/``!!`` commands and for compaction / branch summaries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from pi_coder.tui.format import format_tokens
from pi_coder.tui.widgets._measured import MeasuredStatic
from pi_coder.tui.widgets._throttle import Throttle

if TYPE_CHECKING:
    from pi_coder.session.messages import BashExecutionMessage

__all__ = ["BashBlock", "SummaryBlock"]

_PREVIEW_LINES = 20


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

    def on_mount(self) -> None:
        self.refresh_view()

    def set_expanded(self, expanded: bool) -> None:
        if expanded == self._expanded:
            return
        self._expanded = expanded
        if self.running or self.output.count("\n") >= _PREVIEW_LINES:  # else nothing is folded
            self.refresh_view()

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
        parts: list[RenderableType] = [Text(prefix + self.command, style="bold")]
        lines = self.output.rstrip("\n").split("\n") if self.output.strip() else []
        if not self._expanded and len(lines) > _PREVIEW_LINES:
            parts.append(Text(f"... ({len(lines) - _PREVIEW_LINES} earlier lines, Ctrl+O to expand)", style="dim"))
            lines = lines[-_PREVIEW_LINES:]
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
