"""``/tree``: the session tree with the active path, labels, folds, filters and search (pi-product 3.6).

Keys: Up/Down move, Left/Right page, Ctrl+Left/Alt+Left fold (or jump to the branch point
above), Ctrl+Right/Alt+Right unfold (or jump to the next branch point), Enter select, Esc
clears the search then cancels, Shift+L edits the label, typing searches and Backspace edits the
search. Filters: Ctrl+D default, Ctrl+T no-tools, Ctrl+U user-only, Ctrl+L labeled-only,
Ctrl+A all, Ctrl+O / Ctrl+Shift+O cycle.

The result is the selected entry id (``None`` when cancelled); labels are written at once
through ``on_label(entry_id, label)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static

from pi_coder.tui.screens._rows import RowList
from pi_coder.tui.screens.dialogs import InputDialog
from pi_coder.tui.screens.modal import DialogScreen
from pi_coder.tui.screens.tree_model import FILTER_LABELS, TreeModel, TreeRow
from pi_coder.tui.theming import theme_style

__all__ = ["TreeScreen"]

_DIM_BODIES = frozenset(
    {"toolResult", "bashExecution", "model_change", "thinking_level_change", "custom", "label", "session_info"}
)


def palette(app: Any) -> dict[str, str]:
    """Rich styles of the tree's parts from the app's theme."""
    return {
        "path": theme_style(app, "accent", "cyan"),
        "active": theme_style(app, "accent", "cyan", extra="bold"),
        "label": theme_style(app, "warning", "yellow"),
        "user": theme_style(app, "accent", "cyan", extra="bold"),
        "assistant": theme_style(app, "success", "green", extra="bold"),
        "custom_message": theme_style(app, "customMessageLabel", "magenta"),
        "branch_summary": theme_style(app, "warning", "yellow"),
        "compaction": theme_style(app, "borderAccent", "blue"),
        "error": theme_style(app, "error", "red"),
    }


def row_text(row: TreeRow, styles: dict[str, str] | None = None) -> Text:
    """One tree line: gutters, fold marker, active-path dot, label, role and text."""
    styles = styles or palette(None)
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(row.prefix, style="dim")
    if row.foldable:
        line.append("⊞ " if row.folded else "⊟ ", style="dim")
    if row.on_path:
        line.append("• ", style=styles["path"])
    item = row.item
    if item.label:
        line.append(f"[{item.label}] ", style=styles["label"])
    if item.head:
        line.append(item.head, style=styles.get(item.kind, ""))
    if item.error:
        body_style = styles["error"]
    elif item.kind in _DIM_BODIES:
        body_style = "dim"
    else:
        body_style = styles.get(item.kind, "") if not item.head else ""
    line.append(item.body, style=body_style)
    if row.active:
        line.append("  ← active", style=styles["active"])
    return line


class TreeScreen(DialogScreen[str | None]):
    """Navigate the session tree.

    Args:
        roots: ``SessionStore.get_tree()``.
        leaf_id: The current leaf.
        filter_mode: Initial filter (the ``tree_filter_mode`` setting).
        on_label: Called as ``on_label(entry_id, label_or_None)`` after Shift+L.
    """

    CSS_PATH = "tree_view.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,ctrl+c", "cancel", show=False, priority=True),
        Binding("left", "page(-1)", show=False),
        Binding("right", "page(1)", show=False),
        Binding("ctrl+left,alt+left", "fold_or_up", show=False, priority=True),
        Binding("ctrl+right,alt+right", "unfold_or_down", show=False, priority=True),
        Binding("L", "label", show=False, priority=True),
        Binding("backspace", "erase", show=False, priority=True),
        Binding("ctrl+d", "filter('default')", show=False, priority=True),
        Binding("ctrl+t", "filter('no-tools')", show=False, priority=True),
        Binding("ctrl+u", "filter('user-only')", show=False, priority=True),
        Binding("ctrl+l", "filter('labeled-only')", show=False, priority=True),
        Binding("ctrl+a", "filter('all')", show=False, priority=True),
        Binding("ctrl+o", "cycle_filter(1)", show=False, priority=True),
        Binding("ctrl+shift+o", "cycle_filter(-1)", show=False, priority=True),
    ]

    def __init__(
        self,
        roots: Sequence[Any],
        leaf_id: str | None,
        *,
        filter_mode: str = "default",
        on_label: Callable[[str, str | None], Any] | None = None,
    ) -> None:
        super().__init__()
        self.model = TreeModel(roots, leaf_id, filter_mode)
        self.on_label = on_label

    def compose(self) -> ComposeResult:
        with Vertical(id="tree"):
            yield Static(
                Text(
                    "↑↓ move · ←→ page · ^←/^→ fold · Shift+L label · ^O filter · type to search · Enter select",
                    style="dim",
                ),
                id="tree-hint",
            )
            yield Static("", id="tree-search")
            yield RowList(id="tree-list")
            yield Static("", id="tree-status")

    def on_mount(self) -> None:
        self.query_one("#tree").border_title = "Session Tree"
        self.tree_list.focus()
        self._redraw(self.model.initial_index())

    @property
    def tree_list(self) -> RowList:
        return self.query_one("#tree-list", RowList)

    # ------------------------------------------------------------------ drawing

    def selected_row(self) -> TreeRow | None:
        rows = self.model.rows()
        index = self.tree_list.highlighted
        return rows[index] if index is not None and 0 <= index < len(rows) else None

    def _redraw(self, index: int | None = None, keep: str | None = None) -> None:
        rows = self.model.rows()
        options = self.tree_list
        styles = palette(self.app)
        options.set_rows(lambda i: row_text(rows[i], styles), len(rows))
        if keep is not None:
            found = self.model.index_of(keep)
            index = found if found is not None else self.model.initial_index()
        if rows:
            options.highlighted = max(0, min(len(rows) - 1, index or 0))
        self._update_status()

    def _update_status(self) -> None:
        query = self.model.query
        search = Text("Search: ", style="dim")
        search.append(query, style="bold")
        self.query_one("#tree-search", Static).update(search)
        rows = self.model.rows()
        label = FILTER_LABELS[self.model.filter_mode]
        if not rows:
            status = Text("No entries found", style="dim")
            status.append(f"  (0/0) {label}".rstrip(), style="dim")
        else:
            position = (self.tree_list.highlighted or 0) + 1
            status = Text(f"({position}/{len(rows)}) {label}".rstrip(), style="dim")
        self.query_one("#tree-status", Static).update(status)

    def on_row_list_highlighted(self, event: RowList.Highlighted) -> None:
        event.stop()
        self._update_status()

    def on_row_list_selected(self, event: RowList.Selected) -> None:
        event.stop()
        rows = self.model.rows()
        if 0 <= event.index < len(rows):
            self.dismiss(rows[event.index].entry_id)

    # ------------------------------------------------------------------ search

    def on_key(self, event: events.Key) -> None:
        character = event.character
        if event.is_printable and character and character.isprintable():
            event.stop()
            event.prevent_default()
            self._search(self.model.query + character)

    def _search(self, query: str) -> None:
        current = self.selected_row()
        self.model.set_query(query)
        self._redraw(keep=current.entry_id if current else None)

    def action_erase(self) -> None:
        if self.model.query:
            self._search(self.model.query[:-1])

    # ------------------------------------------------------------------ actions

    def action_cancel(self) -> None:
        if self.model.query:
            self._search("")
            return
        self.dismiss(None)

    def action_page(self, step: int) -> None:
        self.tree_list.action_page(step)

    def action_filter(self, mode: str) -> None:
        current = self.selected_row()
        self.model.set_filter(mode)
        self._redraw(keep=current.entry_id if current else None)

    def action_cycle_filter(self, step: int) -> None:
        current = self.selected_row()
        self.model.cycle_filter(step)
        self._redraw(keep=current.entry_id if current else None)

    def action_fold_or_up(self) -> None:
        row = self.selected_row()
        index = self.tree_list.highlighted or 0
        if row is not None and row.foldable and not row.folded:
            self.model.set_folded(row.entry_id, True)
            self._redraw(keep=row.entry_id)
            return
        target = self.model.branch_point_before(index)
        self.tree_list.highlighted = target if target is not None else 0

    def action_unfold_or_down(self) -> None:
        row = self.selected_row()
        index = self.tree_list.highlighted or 0
        if row is not None and row.folded:
            self.model.set_folded(row.entry_id, False)
            self._redraw(keep=row.entry_id)
            return
        target = self.model.branch_point_after(index)
        rows = self.model.rows()
        self.tree_list.highlighted = target if target is not None else max(0, len(rows) - 1)

    def action_label(self) -> None:
        row = self.selected_row()
        if row is None:
            return
        entry_id = row.entry_id

        def done(value: str | None) -> None:
            if value is None:
                return
            label = value or None
            if self.on_label is not None:
                try:
                    self.on_label(entry_id, label)
                except Exception as exc:  # e.g. the entry vanished
                    self.app.notify(f"Could not set the label: {exc}", severity="error")
                    return
            self.model.set_label(entry_id, label)
            self._redraw(keep=entry_id)

        self.app.push_screen(
            InputDialog("Label", value=row.item.label or "", message="Label (empty to remove):"), done
        )
