"""/settings: live changes applied at once and written to the global settings.toml with its comments."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pi_coder.tui.screens.dialogs import ChoiceDialog
from pi_coder.tui.screens.settings_screen import SettingsScreen
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app

SETTINGS = """# My pi settings
theme = "dark"  # keep this comment

[compaction]
# compaction notes
reserve_tokens = 16384
"""


def _settings_path(project: Path) -> Path:
    return project.parent / "home" / "settings.toml"


async def _open(app, pilot) -> SettingsScreen:
    app.editor.insert("/settings")
    await pilot.pause()
    await pilot.press("enter")
    if app.editor.text:
        await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), what="settings")
    await pilot.pause()
    return app.screen


def _go(screen: SettingsScreen, key: str) -> None:
    screen.settings_list.highlighted = [item.key for item in screen.items].index(key)


async def test_toggles_and_modes_are_applied_and_saved_keeping_comments(project: Path, make_session) -> None:
    path = _settings_path(project)
    path.write_text(SETTINGS)
    session, _ = make_session([], faux_options={"reasoning": True})
    app = make_app(session)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = await _open(app, pilot)
        text = screen_text(app)
        for label in ("Auto-compact", "Steering mode", "Follow-up mode", "Thinking level", "Theme", "Hide thinking",
                      "Double-Esc action"):  # fmt: skip
            assert label in text
        _go(screen, "auto_compaction")
        await pilot.press("enter")
        await pilot.pause()
        await wait_until(pilot, lambda: session.auto_compaction_enabled is False, what="session.auto_compaction_enabled is False")
        _go(screen, "steering_mode")
        await pilot.press("right")
        await pilot.pause()
        await wait_until(pilot, lambda: session.steering_mode == "all", what="session.steering_mode == 'all'")
        _go(screen, "follow_up_mode")
        await pilot.press("space")  # opens the value list
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="choices")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: app.screen is screen, what="back")
        assert session.follow_up_mode == "all"
        _go(screen, "hide_thinking_block")
        await pilot.press("enter")
        await pilot.pause()
        assert app.hide_thinking is True
        _go(screen, "double_escape_action")
        await pilot.press("right")
        await pilot.pause()
        _go(screen, "thinking_level")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="levels")
        choices = [value for value, _ in app.screen.choices]
        assert "high" in choices and "off" in choices
        app.screen.query_one("#dialog-choices").highlighted = choices.index("high")
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.thinking_level == "high", what="thinking")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), what="closed")

    written = path.read_text()
    assert "# My pi settings" in written and "# keep this comment" in written and "# compaction notes" in written
    data = tomllib.loads(written)
    assert data["compaction"] == {"reserve_tokens": 16384, "enabled": False}
    assert data["steering_mode"] == "all"
    assert data["follow_up_mode"] == "all"
    assert data["hide_thinking_block"] is True
    assert data["double_escape_action"] == "fork"
    assert data["default_thinking_level"] == "high"


async def test_theme_previews_while_browsing_and_is_saved_when_chosen(project: Path, make_session) -> None:
    path = _settings_path(project)
    path.write_text(SETTINGS)
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 32)) as pilot:
        assert app.theme == "pi-dark"
        dark_border = app.editor.styles.border_top[1]
        screen = await _open(app, pilot)
        _go(screen, "theme")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="themes")
        values = [value for value, _ in app.screen.choices]
        assert values == ["system", "light/dark", "dark", "light"]
        await pilot.press("down")  # highlight "light": previewed, not saved
        await wait_until(pilot, lambda: app.theme == "pi-light", what="preview")
        assert tomllib.loads(path.read_text())["theme"] == "dark"
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.theme == "pi-dark", what="preview undone")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="themes again")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: app.screen is screen, what="back")
        assert app.theme == "pi-light"
        await pilot.press("escape")
        await pilot.pause()
        assert app.editor.styles.border_top[1] != dark_border
    written = path.read_text()
    assert 'theme = "light"  # keep this comment' in written
