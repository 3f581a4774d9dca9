"""Snapshots of the model picker, the session picker and the session tree (fixed sizes, clock and files).

The screens are shown over a bare host app with the Pi dark theme, so these pictures change only
when the screens do (not when the main screen's header or footer changes).
Update with ``pytest tests/tui/test_screens_snapshots.py --snapshot-update`` after looking at the
report of what changed.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from pi_coder.session.store import SessionStore
from pi_coder.tui.screens.model_picker import ModelPicker
from pi_coder.tui.screens.session_picker import SessionPicker
from pi_coder.tui.screens.tree_view import TreeScreen
from pi_coder.tui.theming import ThemeController, default_theme_variables
from tests.tui.helpers import wait_until
from tests.tui.screens_support import FIXED_NOW, SessionWriter, branchy_session, faux_models

SIZE = (100, 30)


class ScreenHost(App[None]):
    """A plain app in the Pi dark theme that opens one screen."""

    animations = False

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.first_screen = screen
        self.themes = ThemeController(self)
        self.themes.use("dark")

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **default_theme_variables()}

    def compose(self) -> ComposeResult:
        yield Static("(main screen)")

    def on_mount(self) -> None:
        self.push_screen(self.first_screen)


def test_model_picker_snapshot(snap_compare) -> None:
    models, _ = faux_models(
        ("anthropic", "claude-sonnet-4-5", True),
        ("anthropic", "claude-haiku-4-5", False),
        ("openai", "gpt-5", True),
        ("local", "qwen2.5-coder", False),
    )
    picker = ModelPicker(models.available_models(), models.get_model("openai", "gpt-5"))

    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.press(*"cl")
        await pilot.pause()

    assert snap_compare(ScreenHost(picker), terminal_size=SIZE, run_before=run_before)


def test_session_picker_snapshot(project: Path, snap_compare) -> None:
    cwd = str(project)
    for index, (text, name, age) in enumerate(
        [
            ("fix the flaky login test", "login fix", timedelta(minutes=42)),
            ("refactor the parser module into smaller functions", None, timedelta(hours=5)),
            ("write release notes for 0.3", None, timedelta(days=3)),
            ("why is the build slow on CI?", "ci speed", timedelta(days=40)),
        ]
    ):
        writer = SessionWriter(cwd, f"0000000{index}-0000-0000-0000-000000000000", FIXED_NOW - age)
        writer.model_change(f"a000000{index}")
        writer.user(f"b000000{index}", text)
        writer.assistant(f"c000000{index}", "Done.")
        if name:
            writer.name(f"d000000{index}", name)
        writer.write()
    picker = SessionPicker(cwd, now=FIXED_NOW)
    app = ScreenHost(picker)

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: picker.is_mounted and picker.is_loaded, what="list")
        await pilot.press("down")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_tree_snapshot(project: Path, snap_compare) -> None:
    store = SessionStore.open(branchy_session(str(project)))
    store.append_label("e0000004", "plan-a")
    tree = TreeScreen(store.get_tree(), "e0000009")

    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.press("up")
        await pilot.pause()

    assert snap_compare(ScreenHost(tree), terminal_size=(100, 24), run_before=run_before)
