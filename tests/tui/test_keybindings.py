"""The [keybindings] settings table: action names, key syntax, and remapped keys in the running app."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.ai.providers.faux import faux_message
from pi_coder.tui.keybindings import load_keybindings, normalize_key, parse_keybindings, resolve_action
from pi_coder.tui.keys import KEY_ACTIONS, display_keys, unbound_key
from pi_coder.tui.screens.model_picker import ModelPicker
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


@pytest.mark.parametrize(
    ("name", "action_id"),
    [
        ("app.message.followUp", "app.message.followUp"),
        ("followUp", "app.message.followUp"),
        ("follow_up", "app.message.followUp"),
        ("FOLLOW-UP", "app.message.followUp"),
        ("selectModel", "app.model.select"),
        ("select_model", "app.model.select"),
        ("cycle_model_forward", "app.model.cycleForward"),
        ("cycleModelBackward", "app.model.cycleBackward"),
        ("toggle_tools", "app.tools.expand"),
        ("expandTools", "app.tools.expand"),
        ("interrupt", "app.interrupt"),
        ("tree", "app.session.tree"),
        ("new_session", "app.session.new"),
        ("editor.newline", "editor.newline"),
    ],
)
def test_action_names_resolve_to_ids(name: str, action_id: str) -> None:
    """Ids, Pi's short names, snake_case and method names all name the same action."""
    assert resolve_action(name) == action_id


def test_every_action_is_reachable_by_its_id() -> None:
    assert all(resolve_action(action.id) == action.id for action in KEY_ACTIONS)
    assert resolve_action("cycle_model") is None  # ambiguous method name (forward/backward)


@pytest.mark.parametrize(
    ("key", "textual"),
    [
        ("ctrl+l", "ctrl+l"),
        ("Ctrl+L", "ctrl+l"),
        ("shift+ctrl+p", "ctrl+shift+p"),
        ("ctrl+alt+x", "alt+ctrl+x"),
        ("esc", "escape"),
        ("return", "enter"),
        ("alt+return", "alt+enter"),
        ("pageUp", "pageup"),
        ("shift+l", "L"),
        ("L", "L"),
        ("ctrl+]", "ctrl+right_square_bracket"),
        ("?", "question_mark"),
        ("f2", "f2"),
        ("ctrl++", "ctrl+plus"),
    ],
)
def test_keys_in_pi_syntax_become_textual_keys(key: str, textual: str) -> None:
    assert normalize_key(key) == textual


@pytest.mark.parametrize("key", ["", "hyper+x", "ctrl+", "two words", "ctrl+@@"])
def test_invalid_keys_are_rejected(key: str) -> None:
    assert normalize_key(key) is None


def test_table_with_lists_unbinding_and_mistakes() -> None:
    """Lists and comma strings give several keys; "" unbinds; unknown names and bad keys are reported."""
    keymap = parse_keybindings(
        {
            "select_model": ["ctrl+l", "f2"],
            "follow_up": "alt+enter, ctrl+j",
            "cycleModelForward": "",
            "no_such_action": "ctrl+q",
            "toggle_tools": ["hyper+o", "ctrl+o"],
            "dequeue": 5,
        }
    )
    assert keymap.overrides == {
        "app.model.select": "ctrl+l,f2",
        "app.message.followUp": "alt+enter,ctrl+j",
        "app.model.cycleForward": unbound_key("app.model.cycleForward"),
        "app.tools.expand": "ctrl+o",
    }
    assert len(keymap.warnings) == 3
    assert any("no_such_action" in w and "unknown action" in w for w in keymap.warnings)
    assert any("'hyper+o' is not a key" in w for w in keymap.warnings)
    assert any("dequeue" in w and "list of keys" in w for w in keymap.warnings)
    assert display_keys(keymap.overrides["app.model.cycleForward"]) == "unbound"


def test_load_from_settings_file(project: Path) -> None:
    from pi_coder.settings import load_settings

    (project.parent / "home" / "settings.toml").write_text('[keybindings]\nselect_model = "f3"\n')
    keymap = load_keybindings(load_settings(str(project)).settings)
    assert keymap.overrides == {"app.model.select": "f3"}


async def test_remapped_key_opens_the_model_picker_and_hotkeys_shows_it(project: Path, make_session) -> None:
    """[keybindings] select_model = "f2" in settings.toml: F2 opens the picker, Ctrl+L no longer does."""
    home = project.parent / "home"
    (home / "settings.toml").write_text('# mine\n[keybindings]\nselect_model = "f2"\nbogus = "f9"\n')
    session, _ = make_session([faux_message("hi")])
    app = make_app(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.pause()
        assert app.effective_keys["app.model.select"] == "f2"
        assert "bogus: unknown action" in screen_text(app)
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert not isinstance(app.screen, ModelPicker)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="model picker")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ModelPicker), what="picker closed")
        app.editor.insert("/hotkeys")
        await pilot.pause()
        await pilot.press("enter")
        if app.editor.text:  # the first Enter completed the command name
            await pilot.press("enter")
        await wait_until(pilot, lambda: "app.model.select" in screen_text(app), what="hotkeys")
        line = next(line for line in screen_text(app).splitlines() if "app.model.select" in line)
        assert "F2" in line and "Ctrl+L" not in line


async def test_unbound_default_key_does_nothing(project: Path, make_session) -> None:
    """Unbinding Ctrl+L (select_model = "") leaves the key free."""
    (project.parent / "home" / "settings.toml").write_text('[keybindings]\nselect_model = ""\n')
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+l")
        await pilot.pause(0.05)
        assert not isinstance(app.screen, ModelPicker)
        assert display_keys(app.effective_keys["app.model.select"]) == "unbound"


async def test_keymap_and_theme_built_before_the_app_are_used(project: Path, make_session) -> None:
    """``run_tui`` sets up the keymap and theme and hands them to PiApp; their warnings still show."""
    from pi_coder.tui.theming import session_themes

    (project.parent / "home" / "settings.toml").write_text('theme = "nope"\n[keybindings]\nselect_model = "f2"\nbogus = "f9"\n')
    session, _ = make_session([])
    keymap = load_keybindings(session.settings)
    themes = session_themes(session)
    assert themes.app is None and themes.theme is not None and themes.theme.name == "dark"
    app = make_app(session, keymap=keymap, themes=themes)
    assert app.themes is themes and themes.app is app and app.theme == "pi-dark"
    async with app.run_test(size=(110, 40)) as pilot:
        await wait_until(pilot, lambda: "theme 'nope' not found" in screen_text(app), what="theme warning")
        assert "bogus: unknown action" in screen_text(app)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="model picker")
