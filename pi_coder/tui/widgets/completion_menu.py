"""The completion list shown above the editor."""

from __future__ import annotations

from rich.text import Text
from textual.widgets.option_list import Option

from pi_coder.tui.completion import Completion, CompletionContext
from pi_coder.tui.widgets.marked_list import MarkedOptionList

__all__ = ["CompletionMenu"]


class CompletionMenu(MarkedOptionList, can_focus=False):
    """Not focusable: the editor keeps focus and drives it with Up/Down/Tab/Enter/Esc."""

    DEFAULT_CSS = """
    CompletionMenu {
        height: auto; max-height: 8; margin: 0 1; border: none; padding: 0;
        background: $surface; display: none;
    }
    CompletionMenu.-open { display: block; }
    CompletionMenu.-counted {
        border-bottom: blank $surface; border-subtitle-align: left; border-subtitle-color: $text-muted;
    }
    """

    def __init__(self, max_visible: int = 5) -> None:
        super().__init__()
        self.items: list[Completion] = []
        self.context: CompletionContext | None = None
        self.max_visible = max(1, max_visible)
        """Rows shown before the list scrolls (setting ``autocomplete_max_visible``)."""
        self.styles.max_height = self.max_visible + 1  # + the "(k/N)" row

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def show(self, context: CompletionContext, items: list[Completion]) -> None:
        self.context = context
        self.items = items
        self.clear_options()
        if not items:
            self.close()
            return
        options = []
        column = min(32, max(len(item.label) for item in items))  # descriptions start in one column
        for item in items:
            label = Text(item.label.ljust(column))
            if item.description:
                label.append("  " + item.description, style="dim")
            options.append(Option(label))
        self.add_options(options)
        self.highlighted = 0
        self.set_class(len(items) > self.max_visible, "-counted")
        self._show_count()
        self.add_class("-open")

    def _show_count(self) -> None:
        """Pi's "(k/N)" under a list longer than its visible rows: the selected item and the total."""
        if len(self.items) > self.max_visible and self.highlighted is not None:
            self.border_subtitle = f"  ({self.highlighted + 1}/{len(self.items)})"
        else:
            self.border_subtitle = ""

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        self._show_count()

    def close(self) -> None:
        self.remove_class("-open", "-counted")
        self.items = []
        self.context = None

    def move(self, delta: int) -> None:
        if self.items:
            self.highlighted = ((self.highlighted or 0) + delta) % len(self.items)

    def selected(self) -> Completion | None:
        if not self.items or self.highlighted is None:
            return None
        return self.items[self.highlighted]
