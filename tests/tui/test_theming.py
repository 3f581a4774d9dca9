"""Pi themes on Textual: the mapping, the theme setting, user/project themes and hot reload."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_coder.resources.themes import TOKENS, builtin_themes_dir, load_theme
from pi_coder.tui.theming import textual_theme, theme_variables, token_variable
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


def _theme_json(name: str, accent: str) -> dict:
    data = json.loads((builtin_themes_dir() / "dark.json").read_text())
    data["name"] = name
    data["colors"]["accent"] = accent
    return data


def _write(path: Path, data: dict, *, bump: float = 0.0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    if bump:
        stat = path.stat()
        os.utime(path, (stat.st_atime, stat.st_mtime + bump))


def test_token_variable_names() -> None:
    assert token_variable("userMessageBg") == "pi-user-message-bg"
    assert token_variable("thinkingXhigh") == "pi-thinking-xhigh"
    assert token_variable("accent") == "pi-accent"


def test_builtin_themes_map_onto_textual_colours() -> None:
    dark, light = load_theme("dark"), load_theme("light")
    tdark, tlight = textual_theme(dark), textual_theme(light)
    assert tdark.name == "pi-dark" and tdark.dark is True
    assert tlight.name == "pi-light" and tlight.dark is False
    assert tdark.primary == dark.hex("accent")
    assert tdark.error == dark.hex("error") and tdark.success == dark.hex("success")
    assert tdark.background is None and tdark.ansi  # the terminal's own background shows, as in Pi
    painted = textual_theme(dark, painted=True)
    assert painted.background == dark.export["pageBg"] and not painted.ansi
    assert textual_theme(dark, painted=True, colorless=True).background is None  # NO_COLOR wins
    variables = theme_variables(dark)
    assert len([k for k in variables if k.startswith("pi-")]) == len(TOKENS)
    assert variables["pi-user-message-bg"] == dark.hex("userMessageBg")
    assert variables["pi-text"] == "ansi_default"  # "" = the terminal's colour
    assert tdark.variables["block-cursor-background"] == dark.hex("selectedBg")


async def test_user_theme_from_the_config_folder_and_hot_reload(project: Path, make_session) -> None:
    """theme = "ocean" loads home/themes/ocean.json; editing the file while running recolours the app."""
    home = project.parent / "home"
    theme_file = home / "themes" / "ocean.json"
    _write(theme_file, _theme_json("ocean", "#123456"))
    (home / "settings.toml").write_text('theme = "ocean"\n')
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.theme == "pi-ocean"
        assert app.current_theme.primary.lower() == "#123456"
        _write(theme_file, _theme_json("ocean", "#654321"), bump=5)
        # The 1 s poll picks the change up by itself.
        await wait_until(pilot, lambda: app.current_theme.primary.lower() == "#654321", what="reload")
        assert app.themes.theme.color("accent") == "#654321"
        # A broken save keeps the colours and warns once.
        theme_file.write_text("{ not json")
        os.utime(theme_file, (theme_file.stat().st_atime, theme_file.stat().st_mtime + 10))
        assert app.themes.check_reload() is False
        assert app.themes.check_reload() is False
        await wait_until(pilot, lambda: "Theme not reloaded" in screen_text(app), what="warning")
        assert screen_text(app).count("Theme not reloaded") == 1
        assert app.current_theme.primary.lower() == "#654321"


async def test_project_theme_wins_and_unknown_theme_falls_back_to_dark(project: Path, make_session) -> None:
    home = project.parent / "home"
    _write(home / "themes" / "mine.json", _theme_json("mine", "#111111"))
    _write(project / ".pi" / "themes" / "mine.json", _theme_json("mine", "#222222"))
    (home / "settings.toml").write_text('theme = "mine"\n')
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)):
        assert app.current_theme.primary.lower() == "#222222"
        assert {info.name for info in app.themes.available()} == {"dark", "light", "mine", "system"}

    (home / "settings.toml").write_text('theme = "nope"\n')
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "pi-dark"
        assert "theme 'nope' not found" in screen_text(app)


async def test_settings_dialog_lists_user_themes_and_switching_recolours_the_editor(project: Path, make_session) -> None:
    home = project.parent / "home"
    _write(home / "themes" / "ocean.json", _theme_json("ocean", "#123456"))
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        before = app.editor.styles.border_top[1]
        app.themes.use("ocean")
        await pilot.pause()
        after = app.editor.styles.border_top[1]
        assert before != after
        assert app.current_theme.primary == "#123456"


def _screen_background(app):
    return app.screen.styles.background


async def test_the_terminal_background_shows_unless_paint_background_is_set(project: Path, make_session) -> None:
    """As in Pi the page is the terminal's own background (ANSI default, no truecolor conversion);
    ``paint_background = true`` paints the theme's pageBg, and /settings switches it live."""
    from pi_coder.tui.screens.settings_screen import SettingsScreen

    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        assert _screen_background(app).ansi == -1 and app.native_ansi_color
        await pilot.press(*"/settings")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), what="settings")
        await pilot.press(*"paint back")
        await pilot.pause()
        await pilot.press("enter")  # off -> on
        await wait_until(pilot, lambda: app.themes.painted, what="painted")
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), what="closed")
        await pilot.pause()
        dark = load_theme("dark")
        assert _screen_background(app).hex.lower() == dark.export["pageBg"] and not app.native_ansi_color
    assert "paint_background = true" in (project.parent / "home" / "settings.toml").read_text()

    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert _screen_background(app).hex.lower() == load_theme("dark").export["pageBg"]


async def test_no_color_paints_no_background_even_when_asked(project: Path, make_session, monkeypatch) -> None:
    (project.parent / "home" / "settings.toml").write_text("paint_background = true\n")
    monkeypatch.setenv("NO_COLOR", "1")
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert _screen_background(app).ansi == -1 and app.has_class("-no-color")
        assert not app.themes.painted or app.themes.native_colors
