"""``/settings``: the settings that make sense to change while running (pi-product 2.3).

Each line is a :class:`SettingItem` with its current value. Enter or Space toggles an on/off
setting and opens a list for the others (the theme list previews each theme as it is
highlighted); Left/Right step through the values. Typing filters the list by name or
description (Backspace edits the search, Ctrl+U clears it); Esc clears the search, then closes. Every change is applied at once
through the item's ``apply`` (which also writes the global settings.toml).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static

from pi_coder.tui.screens._rows import Row, RowList
from pi_coder.tui.screens.dialogs import ChoiceDialog
from pi_coder.tui.screens.modal import DialogScreen

__all__ = ["SettingItem", "SettingsScreen", "matches", "search"]


@dataclass(slots=True)
class SettingItem:
    """One changeable setting."""

    key: str
    label: str
    description: str
    values: Sequence[str]
    """Allowed values in display order (``["on", "off"]`` for booleans)."""
    get: Callable[[], str]
    apply: Callable[[str], object]
    """Apply and persist a value (may raise; the error is shown)."""
    preview: Callable[[str], object] | None = None
    """Show a value without applying it (theme)."""
    end_preview: Callable[[], object] | None = None
    choose: Callable[[Callable[[], object]], object] | None = None
    """Enter opens this instead of the list of ``values`` (a dialog of its own); it calls the
    callback it is given once the value changed."""

    @property
    def is_toggle(self) -> bool:
        return sorted(self.values) == ["off", "on"]


def _name(item: SettingItem) -> str:
    return f"{item.label} {item.key.replace('_', ' ').replace('.', ' ')}".lower()


def matches(item: SettingItem, query: str, *, names_only: bool = False) -> bool:
    """Every word of ``query`` is in the item's name or key (or, unless ``names_only``, its
    description), or the query matches its name fuzzily."""
    words = query.lower().split()
    if not words:
        return True
    haystack = _name(item) if names_only else f"{_name(item)} {item.description.lower()}"
    if all(word in haystack for word in words):
        return True
    if names_only:
        return False
    from pi_coder.tui.completion import fuzzy_score

    return fuzzy_score(query, item.label) is not None


def search(items: Sequence[SettingItem], query: str) -> list[SettingItem]:
    """The settings for ``query``: those named by it, else those it describes or fuzzily names."""
    named = [item for item in items if matches(item, query, names_only=True)]
    return named or [item for item in items if matches(item, query)]


class SettingsScreen(DialogScreen[None]):
    """The settings list."""

    CSS_PATH = "settings_screen.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,ctrl+c", "close", show=False, priority=True),
        Binding("ctrl+u", "clear_search", show=False),
        Binding("space", "activate", show=False),
        # priority: a list taller than the dialog would take Left/Right to scroll sideways
        Binding("left", "step(-1)", show=False, priority=True),
        Binding("right", "step(1)", show=False, priority=True),
    ]

    def __init__(self, items: Sequence[SettingItem]) -> None:
        super().__init__()
        self.all_items = list(items)
        self.items = list(items)
        """The items shown (those matching the search)."""
        self.search = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="settings"):
            yield Static(self._search_text(), id="settings-search")
            yield RowList(id="settings-list")
            yield Static("", id="settings-description")
            yield Static(
                Text("Type to search · Enter change · ←→ cycle · Esc clear/close", style="dim"), id="settings-hint"
            )

    def on_mount(self) -> None:
        self.query_one("#settings").border_title = "Settings"
        options = self.settings_list
        options.focus()
        self._fit_list()
        self._redraw(0)

    def on_resize(self, event: events.Resize) -> None:
        self._fit_list()

    def _fit_list(self) -> None:
        """One fixed list height (all the settings, or what the screen holds): the search, the
        description and the key hint stay visible, and the dialog does not jump while filtering."""
        # 90% of the screen less the borders, the search line (+ gap), the gap, the count (+ blank
        # line) and two description lines, the hint
        room = int(self.app.size.height * 0.9) - 2 - 2 - 1 - 4 - 1
        self.settings_list.styles.height = max(3, min(len(self.all_items), room))

    @property
    def settings_list(self) -> RowList:
        return self.query_one("#settings-list", RowList)

    def _line(self, item: SettingItem) -> Row:
        # A virtual list of plain rows: each visible row is drawn when painted (a table per
        # option in an OptionList cost a tenth of a second to open).
        value = item.get()
        style = "green" if value == "on" else "dim" if value == "off" else "bold"
        return Text(item.label), Text(value + " ", style=style)

    def _redraw(self, index: int | None = None) -> None:
        options = self.settings_list
        keep = options.highlighted if index is None else index
        items = self.items
        options.set_rows(lambda i: self._line(items[i]), len(items))
        if items:
            options.highlighted = max(0, min(len(items) - 1, keep or 0))
        self._describe()

    # ------------------------------------------------------------------ search

    def _search_text(self) -> Text:
        if not self.search:
            return Text("Search: type to filter", style="dim")
        return Text.assemble(("Search: ", "dim"), (self.search, "bold"), ("▏", "dim"))

    def set_query(self, query: str) -> None:
        """Show only the settings matching ``query``."""
        self.search = query
        self.items = search(self.all_items, query)
        self.query_one("#settings-search", Static).update(self._search_text())
        self._redraw(0)

    def action_clear_search(self) -> None:
        """Ctrl+U: clear the search (all the settings again)."""
        if self.search:
            self.set_query("")

    def on_key(self, event: events.Key) -> None:
        if event.key == "backspace" and self.search:
            event.stop()
            event.prevent_default()
            self.set_query(self.search[:-1])
        elif event.is_printable and event.character and (event.character != " " or self.search):
            # A space joins words of a search; on an empty search it changes the setting.
            event.stop()
            event.prevent_default()
            self.set_query(self.search + event.character)

    def _describe(self) -> None:
        """The position among the settings shown (those matching the search), as Pi, then the
        highlighted setting's description."""
        item = self.current()
        index = self.settings_list.highlighted
        count = f"({(index or 0) + 1}/{len(self.items)})" if self.items else "No matching settings"
        self.query_one("#settings-description", Static).update(
            Text.assemble((count, "dim"), "\n\n", (item.description if item else "", "dim"))
        )

    def current(self) -> SettingItem | None:
        index = self.settings_list.highlighted
        return self.items[index] if index is not None and 0 <= index < len(self.items) else None

    def on_row_list_highlighted(self, event: RowList.Highlighted) -> None:
        event.stop()
        self._describe()

    def on_row_list_selected(self, event: RowList.Selected) -> None:
        event.stop()
        self.action_activate()

    # ------------------------------------------------------------------ changing values

    def _set(self, item: SettingItem, value: str) -> None:
        try:
            item.apply(value)
        except Exception as exc:  # show, keep the dialog usable
            self.app.notify(f"{item.label}: {exc}", severity="error")
        self._redraw()

    def action_step(self, step: int) -> None:
        item = self.current()
        if item is None or not item.values:
            return
        values = list(item.values)
        current = item.get()
        index = values.index(current) if current in values else -1
        self._set(item, values[(index + step) % len(values)])

    def action_activate(self) -> None:
        item = self.current()
        if item is None:
            return
        if item.is_toggle:
            self._set(item, "off" if item.get() == "on" else "on")
            return
        if item.choose is not None:
            item.choose(self._redraw)
            return

        def done(value: str | None) -> None:
            if item.end_preview is not None:
                item.end_preview()
            if value is not None:
                self._set(item, value)

        self.app.push_screen(
            ChoiceDialog(
                item.label,
                [(value, value) for value in item.values],
                message=item.description,
                initial=item.get(),
                on_highlight=item.preview,
            ),
            done,
        )

    def action_close(self) -> None:
        if self.search:
            self.set_query("")
            return
        self.dismiss(None)
