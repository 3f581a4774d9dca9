"""A modal list with a search box: the base of the model, session and fork pickers.

Typing filters the list (fuzzy tokens, ``"exact phrase"``, ``re:<regex>``); Up/Down/PageUp/
PageDown move; Enter chooses; Esc or Ctrl+C cancels (the screen's result is then ``None``).
Subclasses supply the entries (:meth:`PickerScreen.load_entries`) and may override
:meth:`PickerScreen.order` (sorting), :meth:`PickerScreen.detail` (a line under the list) and
:meth:`PickerScreen.choose`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Static

from pi_coder.tui.screens._fuzzy import rank
from pi_coder.tui.screens._rows import Row, RowList
from pi_coder.tui.screens.dialogs import animations_enabled
from pi_coder.tui.screens.modal import DialogScreen

__all__ = ["PickerEntry", "PickerScreen"]

_LIST_ROWS = 20
"""Rows of the list on a tall screen (``#picker-list`` in picker.tcss)."""
_OTHER_ROWS = 12
"""Rows of everything but the list: border, header, search box, count, hints, margins."""

T = TypeVar("T")


@dataclass(slots=True)
class PickerEntry(Generic[T]):
    """One choosable line."""

    key: str
    """Unique within the list (the option id)."""
    value: T
    """What the screen returns when this entry is chosen."""
    prompt: Row
    """What the line shows: a ``Text``, or ``(left, right)`` with the right part right-aligned."""
    search: str
    """The text the query is matched against."""


class PickerScreen(DialogScreen[T | None]):
    """Search box + option list in a bordered panel.

    Args:
        title: The panel's title.
        query: Initial search text.
        placeholder: Placeholder of the search box.
        hint: Key hints shown under the list.
        initial_key: Entry highlighted first (default: the first one).
    """

    CSS_PATH = "picker.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,ctrl+c", "cancel", "Cancel", show=False, priority=True),
        Binding("enter", "choose", "Choose", show=False, priority=True),
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
    ]

    def __init__(
        self,
        title: str,
        *,
        query: str = "",
        placeholder: str = "Search...",
        hint: str = "↑↓ move · Enter select · Esc cancel",
        initial_key: str | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.initial_query = query
        self.placeholder = placeholder
        self.hint = hint
        self.initial_key = initial_key
        self.entries: list[PickerEntry[T]] = []
        self.shown: list[PickerEntry[T]] = []

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("", id="picker-header")
            yield Input(value=self.initial_query, placeholder=self.placeholder, id="picker-search")
            yield RowList(id="picker-list")
            yield Static("", id="picker-detail")
            yield Static(Text(self.hint, style="dim"), id="picker-hint")

    def on_mount(self) -> None:
        panel = self.query_one("#picker")
        panel.border_title = self.title_text
        search = self.query_one("#picker-search", Input)
        search.cursor_blink = animations_enabled(self.app)
        search.focus()
        self.option_list.can_focus = False
        self._fit(self.app.size.height)
        self.reload()

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.height)

    def _fit(self, height: int) -> None:
        """Shorten the list on a short screen so the count and the key hints stay visible."""
        self.option_list.styles.max_height = max(3, min(_LIST_ROWS, height - _OTHER_ROWS))

    @property
    def search_input(self) -> Input:
        return self.query_one("#picker-search", Input)

    @property
    def option_list(self) -> RowList:
        return self.query_one("#picker-list", RowList)

    # ------------------------------------------------------------------ for subclasses

    def load_entries(self) -> Sequence[PickerEntry[T]]:
        """All entries (before filtering)."""
        return []

    def order(self, query: str, entries: Sequence[PickerEntry[T]]) -> list[PickerEntry[T]]:
        """The entries to show for ``query``, in display order (default: best match first)."""
        return rank(query, entries, lambda entry: entry.search)

    def detail(self, entry: PickerEntry[T] | None) -> RenderableType:
        """The line under the list for the highlighted entry (default: position and count)."""
        if not self.shown:
            return Text("  No matches", style="dim")
        index = self.option_list.highlighted
        return Text(f"  ({(index or 0) + 1}/{len(self.shown)})", style="dim")

    def header(self) -> RenderableType:
        """The line above the search box (tabs, modes); empty by default."""
        return ""

    async def choose(self, entry: PickerEntry[T]) -> None:
        """Called with the chosen entry; by default the screen returns its value."""
        self.dismiss(entry.value)

    # ------------------------------------------------------------------ filtering

    def reload(self, keep_key: str | None = None) -> None:
        """Ask for the entries again and redraw (keeping the highlight on ``keep_key`` if shown)."""
        self.entries = list(self.load_entries())
        self.refilter(keep_key)

    def refilter(self, keep_key: str | None = None) -> None:
        options = self.option_list
        if keep_key is None:
            current = self.highlighted_entry()
            keep_key = current.key if current is not None else self.initial_key
        self.shown = shown = self.order(self.search_input.value, self.entries)
        options.set_rows(lambda i: shown[i].prompt, len(shown))
        index = next((i for i, entry in enumerate(self.shown) if entry.key == keep_key), 0)
        options.highlighted = index if self.shown else None
        self._refresh_lines()

    def _refresh_lines(self) -> None:
        header = self.header()
        widget = self.query_one("#picker-header", Static)
        widget.update(header)
        widget.display = bool(header)
        self.query_one("#picker-detail", Static).update(self.detail(self.highlighted_entry()))

    def highlighted_entry(self) -> PickerEntry[T] | None:
        index = self.option_list.highlighted
        if index is None or not 0 <= index < len(self.shown):
            return None
        return self.shown[index]

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.refilter()

    def on_row_list_highlighted(self, event: RowList.Highlighted) -> None:
        event.stop()
        self._refresh_lines()

    def on_row_list_selected(self, event: RowList.Selected) -> None:
        event.stop()
        self.run_worker(self.action_choose(), exclusive=True, group="picker-choose")

    # ------------------------------------------------------------------ actions

    def action_move(self, step: int) -> None:
        self.option_list.action_move(step)

    def action_page(self, step: int) -> None:
        self.option_list.action_page(step)

    def action_cancel(self) -> None:
        self.dismiss(None)

    async def action_choose(self) -> None:
        entry = self.highlighted_entry()
        if entry is not None:
            await self.choose(entry)

    def set_result(self, value: Any) -> None:
        """Close the picker returning ``value``."""
        self.dismiss(value)
