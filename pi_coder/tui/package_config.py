"""``pi config``: every resource of the installed packages in one list, each with a toggle.

Space (or Enter) turns the highlighted resource on or off at once, written to the scope's
settings as a hand edit would (``packages = [{ source = "...", skills = ["-name"] }]``, see
docs/packages.md); Tab switches between your packages and this project's (``-l`` starts there);
Esc or q quits.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, SelectionList, Static
from textual.widgets.selection_list import Selection

from pi_coder.errors import UserError
from pi_coder.packages.manage import Packages
from pi_coder.packages.resolve import ResolvedPackage, resource_names
from pi_coder.packages.sources import RESOURCE_KINDS, Scope

__all__ = ["PackageConfigApp", "run_config"]

_SEP = "\x1f"


def _rows(packages: list[ResolvedPackage]) -> list[tuple[str, str, bool]]:
    """``(label, key, enabled)`` for each resource of each installed package, disabled ones too."""
    rows = []
    for package in packages:
        if not package.installed:
            continue
        for kind in RESOURCE_KINDS:
            on = resource_names(package, kind)
            off = package.disabled.get(kind, [])
            for name in sorted({*on, *off}):
                label = f"{package.name}  {kind[:-1]}  {name}"
                rows.append((label, _SEP.join((package.entry.source.identity, kind, name)), name in on))
    return rows


class PackageConfigApp(App[None]):
    """The toggle list for one scope at a time."""

    ENABLE_COMMAND_PALETTE = False
    TITLE = "pi config"
    CSS = """
    #title { padding: 0 1; text-style: bold; }
    #hint { padding: 0 1; color: $text-muted; }
    SelectionList { height: 1fr; }
    """
    BINDINGS = [
        Binding("tab", "switch_scope", "Switch scope", priority=True),
        Binding("escape,q", "quit", "Quit"),
    ]

    def __init__(self, cwd: str, *, scope: Scope = "user") -> None:
        super().__init__()
        self.cwd = cwd
        self.scope: Scope = scope
        self.problem: str | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="title")
        yield SelectionList[str](id="resources")
        yield Static("Space: turn on/off (saved at once) · Tab: your packages / this project's · Esc: quit", id="hint")
        yield Footer()

    def on_mount(self) -> None:
        self._fill()

    def _packages(self) -> Packages:
        return Packages(self.scope, self.cwd)

    def _fill(self) -> None:
        where = "Your packages (settings.toml)" if self.scope == "user" else "This project's packages (.pi/settings.toml)"
        packages = self._packages().resolved()
        rows = _rows(packages)
        self.query_one("#title", Static).update(where if rows else f"{where}: no installed package has resources")
        widget = self.query_one("#resources", SelectionList)
        with widget.prevent(SelectionList.SelectionToggled):
            widget.clear_options()
            widget.add_options([Selection(label, key, enabled) for label, key, enabled in rows])
        if rows:
            widget.highlighted = 0
        widget.focus()

    def on_selection_list_selection_toggled(self, message: SelectionList.SelectionToggled[str]) -> None:
        identity, kind, name = str(message.selection.value).split(_SEP)
        enabled = message.selection.value in message.selection_list.selected
        try:
            self._packages().set_enabled(identity, kind, name, enabled)
        except UserError as exc:
            self.notify(str(exc), severity="error")

    def action_switch_scope(self) -> None:
        self.scope = "project" if self.scope == "user" else "user"
        self._fill()


def run_config(cwd: str | None = None, *, local: bool = False, err: TextIO | None = None) -> int:
    """Run ``pi config`` in the terminal; returns the exit code."""
    err = err or sys.stderr
    if not sys.stdout.isatty():
        print("pi: pi config needs a terminal; edit the packages setting instead (docs/packages.md)", file=err)
        return 1
    PackageConfigApp(cwd or os.getcwd(), scope="project" if local else "user").run()
    return 0
