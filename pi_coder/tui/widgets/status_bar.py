"""Footer: cwd, git branch, session name; tokens, cost, context usage; model and thinking level.

Extension statuses (``ctx.ui.set_status``, e.g. the permission mode) get a third line, as in Pi.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from pi_coder.tui.format import format_tokens

__all__ = ["FooterInfo", "StatusBar", "render_footer"]


@dataclass(slots=True)
class FooterInfo:
    """What the footer shows (filled from ``session.stats()`` and session properties)."""

    cwd: str = ""
    branch: str | None = None
    session_name: str | None = None
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    context_percent: float | None = None
    context_window: int = 0
    auto_compaction: bool = False
    model: str | None = None
    provider: str | None = None
    reasoning: bool = False
    thinking_level: str | None = None
    statuses: list[str] = field(default_factory=list)
    """Extension status texts, ordered by their keys (a third line when there are any)."""


def _context_style(percent: float | None) -> str:
    if percent is None:
        return "dim"
    if percent > 90:
        return "bold red"
    if percent > 70:
        return "yellow"
    return "dim"


def render_footer(info: FooterInfo, width: int) -> Table:
    line1 = Text(info.cwd, style="dim", no_wrap=True, overflow="ellipsis")
    if info.branch:
        line1.append(f" ({info.branch})")
    if info.session_name:
        line1.append(f" • {info.session_name}")

    left = Text(style="dim", no_wrap=True, overflow="ellipsis")
    parts: list[str] = []
    if info.input:
        parts.append(f"↑{format_tokens(info.input)}")
    if info.output:
        parts.append(f"↓{format_tokens(info.output)}")
    if info.cache_read:
        parts.append(f"R{format_tokens(info.cache_read)}")
    if info.cache_write:
        parts.append(f"W{format_tokens(info.cache_write)}")
    if info.cost > 0:
        parts.append(f"${info.cost:.3f}")
    left.append(" ".join(parts))
    if info.context_window:
        pct = "?" if info.context_percent is None else f"{info.context_percent:.1f}%"
        if left:
            left.append(" ")
        left.append(f"{pct}/{format_tokens(info.context_window)}", style=_context_style(info.context_percent))
        if info.auto_compaction:
            left.append(" (auto)")

    right = Text(style="dim", no_wrap=True, overflow="ellipsis", justify="right")
    if info.model:
        right.append(f"({info.provider}) {info.model}" if info.provider else info.model)
        if info.reasoning:
            level = info.thinking_level or "off"
            right.append(" • thinking off" if level == "off" else f" • {level}")
    else:
        right.append("no model", style="yellow")

    grid = Table.grid(expand=True)
    grid.add_column(ratio=1)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_row(line1, "")
    grid.add_row(left, right)
    if info.statuses:
        grid.add_row(Text(" ".join(info.statuses), style="dim", no_wrap=True, overflow="ellipsis"), "")
    return grid


class StatusBar(Static):
    """Two dim lines at the bottom of the screen (three with extension statuses)."""

    DEFAULT_CSS = """
    StatusBar { height: auto; padding: 0 1; }
    """

    def __init__(self, info: FooterInfo | None = None) -> None:
        super().__init__("")
        self.info = info or FooterInfo()
        self._lines = 2

    def on_mount(self) -> None:
        self.show(self.info)

    def show(self, info: FooterInfo) -> None:
        self.info = info
        lines = 3 if info.statuses else 2
        if self._lines != lines:  # only on a change: setting a style relayouts the screen
            self._lines = lines
            self.styles.height = lines
        self.update(render_footer(info, self.size.width))
