"""Blocks for user ``!``/``!!`` commands and for compaction / branch summaries."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from pi_coder.tui.format import format_tokens
from pi_coder.tui.widgets._measured import MeasuredStatic
from pi_coder.tui.widgets._throttle import Throttle

__all__ = ["BashBlock", "SummaryBlock"]

_PREVIEW_LINES = 20


def _field(obj: Any, snake: str, camel: str | None = None, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(camel or snake, obj.get(snake, default))
    return getattr(obj, snake, default)


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
        self.message: Any = None
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

    def finish(self, message: Any) -> None:
        self._throttle.cancel()
        self.running = False
        self.message = message
        self.output = _field(message, "output", default=self.output) or ""
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
            if _field(message, "cancelled", default=False):
                footer.append("(cancelled)")
            else:
                code = _field(message, "exit_code", "exitCode")
                footer.append(f"(exit {code})" if code is not None else "(done)")
            full = _field(message, "full_output_path", "fullOutputPath")
            if _field(message, "truncated", default=False) and full:
                footer.append(f" Output truncated. Full output: {full}")
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
