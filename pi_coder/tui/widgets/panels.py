"""Small panels around the transcript: header, queued messages, status line."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from pi_coder.tui.format import format_duration, shorten_home, truncate_line

__all__ = ["ExtensionWidgets", "HeaderPanel", "PendingMessages", "StatusLine"]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class HintItems:
    """Key hints laid out so that a line breaks only between items, never inside "Ctrl+O tools"."""

    def __init__(self, items: list[Text], separator: str = " · ") -> None:
        self.items = items
        self.separator = separator

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        line = Text(style="dim")
        for item in self.items:
            needed = item.cell_len + (len(self.separator) if line.cell_len else 0)
            if line.cell_len and line.cell_len + needed > width:
                yield line
                line = Text(style="dim")
            if line.cell_len:
                line.append(self.separator)
            line.append_text(item)
        if line.cell_len:
            yield line


class HeaderPanel(Static):
    """``pi vX.Y.Z``, key hints and the loaded context files."""

    DEFAULT_CSS = """
    HeaderPanel { height: auto; padding: 0 2; margin: 1 0 0 0; }
    """

    def __init__(self, version: str, hints: list[tuple[str, str]], context_files: list[str]) -> None:
        title = Text()
        title.append(f"pi v{version}", style="bold cyan")
        items = []
        for keys, what in hints:
            item = Text(style="dim")
            item.append(keys, style="bold")
            item.append(f" {what}")
            items.append(item)
        parts: list[Any] = [title, HintItems(items)]
        if context_files:
            files = Text("Context: ", style="dim")
            files.append(", ".join(shorten_home(f) for f in context_files), style="dim")
            parts.append(files)
        super().__init__(Group(*parts))


class PendingMessages(Static):
    """Queued steering / follow-up messages, one truncated line each."""

    DEFAULT_CSS = """
    PendingMessages { height: auto; padding: 0 1; color: $text-muted; display: none; }
    PendingMessages.-visible { display: block; }
    """

    def __init__(self) -> None:
        super().__init__("")
        self.steering: list[str] = []
        self.follow_up: list[str] = []

    def show_queue(self, steering: list[str], follow_up: list[str]) -> None:
        self.steering = list(steering)
        self.follow_up = list(follow_up)
        if not steering and not follow_up:
            self.remove_class("-visible")
            self.update("")
            return
        width = max(20, (self.app.size.width if self.is_attached else 80) - 16)
        lines = [Text(f"Steering: {truncate_line(t, width)}", style="dim") for t in steering]
        lines += [Text(f"Follow-up: {truncate_line(t, width)}", style="dim") for t in follow_up]
        lines.append(Text("↳ Alt+Up to edit all queued messages", style="dim italic"))
        self.update(Group(*lines))
        self.add_class("-visible")


class ExtensionWidgets(Static):
    """Lines extensions set with ``ctx.ui.set_widget(key, lines)``, by key in first-set order
    (docs/extensions-runtime.md#ui-per-mode); hidden while there is none."""

    DEFAULT_CSS = """
    ExtensionWidgets { height: auto; padding: 0 1; display: none; }
    ExtensionWidgets.-visible { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.widgets: dict[str, list[str]] = {}

    def set_lines(self, key: str, lines: Sequence[str] | None) -> None:
        if lines is None:
            self.widgets.pop(key, None)
        else:
            self.widgets[key] = [str(line) for line in lines]
        rows = [line for block in self.widgets.values() for line in block]
        self.update(Text("\n").join(Text.from_ansi(row) for row in rows))
        self.set_class(bool(rows), "-visible")


class StatusLine(Static):
    """Spinner + label + elapsed time while something runs; a transient note otherwise."""

    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; color: $text-muted; }
    StatusLine.-warning { color: $warning; }
    StatusLine.-error { color: $error; }
    StatusLine.-busy { color: $accent; }
    """

    def __init__(self, *, animate: bool = True) -> None:
        super().__init__("")
        self.animations = animate
        self.label = ""
        self.busy = False
        self._started = 0.0
        self._deadline: float | None = None
        self._frame = 0
        self._timer: Timer | None = None
        self._level = ""
        self.frames: Sequence[str] = _SPINNER
        """The spinner's frames (an extension's ``set_working_indicator``); empty: no spinner."""
        self.interval = 0.1

    def start(self, label: str, *, deadline: float | None = None, level: str = "busy") -> None:
        """Show ``label`` with a spinner (and a countdown to ``deadline``, a monotonic time)."""
        if not self.busy:
            self._started = time.monotonic()
        self.busy = True
        self.label = label
        self._deadline = deadline
        self._set_level(level)
        if self.animations and self._timer is None:
            self._timer = self.set_interval(self.interval, self._tick, name="spinner")
        self._render_now()

    def set_indicator(self, frames: Sequence[str] | None, interval_ms: int | None = None) -> None:
        """Use ``frames`` (None: the default spinner; empty: none) every ``interval_ms``."""
        self.frames = _SPINNER if frames is None else [str(f) for f in frames]
        self.interval = max(0.02, interval_ms / 1000) if interval_ms else 0.1
        self._frame = 0
        if self._timer is not None:
            self._timer.stop()
            self._timer = self.set_interval(self.interval, self._tick, name="spinner")
        self._render_now()

    def stop(self, note: str = "", level: str = "") -> None:
        self.busy = False
        self._deadline = None
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.label = note
        self._set_level(level)
        self._render_now()

    def note(self, text: str, level: str = "") -> None:
        """A one-line status when idle (replaces the previous one)."""
        if self.busy:
            return
        self.label = text
        self._set_level(level)
        self._render_now()

    def clear_note(self, text: str) -> None:
        """Remove the note if it is still ``text``."""
        if not self.busy and self.label == text:
            self.note("")

    def _set_level(self, level: str) -> None:
        if self._level:
            self.remove_class(f"-{self._level}")
        self._level = level
        if level:
            self.add_class(f"-{level}")

    def _tick(self) -> None:
        self._frame += 1
        self._render_now()

    def _render_now(self) -> None:
        if not self.busy:
            self.update(Text(self.label))
            return
        text = Text()
        if self.animations and self.frames:
            text.append(Text.from_ansi(self.frames[self._frame % len(self.frames)]))
            text.append(" ")
        label = self.label
        if self._deadline is not None and "{s}" in label:
            label = label.replace("{s}", str(max(0, round(self._deadline - time.monotonic()))))
        text.append(label)
        if self.animations:
            text.append(f" {format_duration(time.monotonic() - self._started)}", style="dim")
        self.update(text)
