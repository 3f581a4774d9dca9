"""/thinking, /scoped-models and Ctrl+S in the model picker (Textual pilot, real AgentSession)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pi_coder.session.entries import ThinkingLevelChangeEntry
from pi_coder.tui.screens.dialogs import ChoiceDialog
from pi_coder.tui.screens.model_picker import ModelPicker
from pi_coder.tui.screens.scoped_models import ScopedModelsScreen
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import faux_models, make_app, session_for

SPECS = [("alpha", "alpha-fast", False), ("beta", "beta-smart", True), ("beta", "beta-large", False)]


def _settings(project: Path) -> dict:
    path = project.parent / "home" / "settings.toml"
    return tomllib.loads(path.read_text()) if path.exists() else {}


def _session(project: Path, model: tuple[str, str] = ("beta", "beta-smart")):
    models, _ = faux_models(*SPECS)
    return session_for(project, models, models.get_model(*model))


async def run_command(app, pilot, text: str) -> None:
    """Type ``text`` and send it (a second Enter when the first one closed the completion menu)."""
    app.editor.insert(text)
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()
    if app.editor.text:
        await pilot.press("enter")
        await pilot.pause()


async def test_thinking_dialog_sets_the_session_level_and_ctrl_s_saves_the_default(project: Path) -> None:
    """Enter in /thinking changes this session only; Ctrl+S also saves the default (as Pi)."""
    session = _session(project)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_command(app, pilot, "/thinking")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="thinking dialog")
        dialog = app.screen
        assert [value for value, _ in dialog.choices] == ["off", "minimal", "low", "medium", "high"]
        text = screen_text(app)
        assert "Levels of beta-smart" in text and "Ctrl+S set as default" in text
        assert "medium   Moderate reasoning · default" in text
        await pilot.press("down", "enter")  # medium (the current level) -> high
        await wait_until(pilot, lambda: session.thinking_level == "high", what="level set")
        await wait_until(pilot, lambda: "Thinking level: high" in screen_text(app), what="notice")
        assert app.editor.has_class("-thinking-high")
        assert "default_thinking_level" not in _settings(project)
        last = [e for e in session.store.get_entries() if isinstance(e, ThinkingLevelChangeEntry)][-1]
        assert last.thinking_level == "high"

        await run_command(app, pilot, "/thinking")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="thinking dialog again")
        await pilot.press("up", "ctrl+s")  # high -> medium, saved as the default
        await wait_until(pilot, lambda: not isinstance(app.screen, ChoiceDialog), what="closed")
        await wait_until(pilot, lambda: "Default thinking level: medium" in screen_text(app), what="notice")
        assert session.thinking_level == "medium"
        assert _settings(project)["default_thinking_level"] == "medium"


async def test_thinking_with_a_level_changes_the_session_only_and_is_clamped_per_model(project: Path) -> None:
    session = _session(project)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_command(app, pilot, "/thinking low")
        await wait_until(pilot, lambda: session.thinking_level == "low", what="low")
        assert "default_thinking_level" not in _settings(project)
        await run_command(app, pilot, "/thinking xhigh")  # beta-smart stops at high
        await wait_until(pilot, lambda: session.thinking_level == "high", what="clamped")
        await wait_until(pilot, lambda: "does not support xhigh" in screen_text(app), what="notice")
        await run_command(app, pilot, "/thinking hard")
        await wait_until(pilot, lambda: 'Unknown thinking level "hard"' in screen_text(app), what="error")
        assert session.thinking_level == "high"
        assert "default_thinking_level" not in _settings(project)


async def test_a_models_own_thinking_level_from_settings_applies_when_switching_to_it(project: Path) -> None:
    from pi_coder.tui.screens.settings_screen import SettingsScreen

    session = _session(project, ("alpha", "alpha-fast"))
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_command(app, pilot, "/settings")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), what="settings")
        screen = app.screen
        await pilot.press(*"per model")
        assert [item.key for item in screen.items] == ["model_thinking_levels"]
        assert "none" in screen_text(app).split("Default thinking level per model", 1)[1].splitlines()[0]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="step 1")
        assert [value for value, _ in app.screen.choices] == ["beta/beta-smart"]  # models that think
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Step 2/2" in screen_text(app), what="step 2")
        assert app.screen.choices[0][0] == "none"
        await pilot.press("down", "down", "down", "down", "down", "enter")  # none, off, minimal, low, medium, high
        await wait_until(pilot, lambda: app.screen is screen, what="back in /settings")
        await wait_until(pilot, lambda: "1 model" in screen_text(app), what="the count")
        assert _settings(project)["model_thinking_levels"] == {"beta/beta-smart": "high"}
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), what="closed")

        await run_command(app, pilot, "/model beta/beta-smart")
        await wait_until(pilot, lambda: session.model.id == "beta-smart", what="switched")
        assert session.thinking_level == "high"
        assert "default_thinking_level" not in _settings(project)


async def test_thinking_without_reasoning_says_so(project: Path) -> None:
    session = _session(project, ("alpha", "alpha-fast"))
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_command(app, pilot, "/thinking")
        await wait_until(pilot, lambda: "does not support thinking" in screen_text(app), what="notice")
        assert not isinstance(app.screen, ChoiceDialog)


async def test_scoped_models_toggle_reorder_apply_and_save(project: Path) -> None:
    session = _session(project, ("alpha", "alpha-fast"))
    app = make_app(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await run_command(app, pilot, "/scoped-models")
        await wait_until(pilot, lambda: isinstance(app.screen, ScopedModelsScreen), what="scoped screen")
        screen = app.screen
        assert [e.key for e in screen.shown] == ["alpha/alpha-fast", "beta/beta-large", "beta/beta-smart"]
        assert "None enabled" in screen_text(app)
        await pilot.press("enter")  # alpha-fast on
        await pilot.press("down", "enter")  # beta-large on
        await wait_until(pilot, lambda: len(session.scoped_models) == 2, what="applied")
        await pilot.press("alt+up")  # beta-large first in the cycle
        await pilot.pause()
        assert [m.id for m, _ in session.scoped_models] == ["beta-large", "alpha-fast"]
        assert "[x] beta-large" in screen_text(app) and "not saved" in screen_text(app)
        assert "enabled_models" not in _settings(project)  # applied to the session only, so far
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "enabled_models" in _settings(project), what="saved")
        assert _settings(project)["enabled_models"] == ["beta/beta-large", "alpha/alpha-fast"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ScopedModelsScreen), what="closed")
        await wait_until(pilot, lambda: "Ctrl+P cycles 2 models" in screen_text(app), what="notice")
        seen = []
        for _ in range(3):
            await pilot.press("ctrl+p")
            await pilot.pause()
            seen.append(session.model.id)
        assert seen == ["beta-large", "alpha-fast", "beta-large"]


async def test_scoped_models_all_clear_and_provider(project: Path) -> None:
    session = _session(project, ("alpha", "alpha-fast"))
    app = make_app(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await run_command(app, pilot, "/scoped-models")
        await wait_until(pilot, lambda: isinstance(app.screen, ScopedModelsScreen), what="scoped screen")
        await pilot.press("ctrl+a")
        await wait_until(pilot, lambda: len(session.scoped_models) == 3, what="all")
        await pilot.press("ctrl+x")
        await wait_until(pilot, lambda: session.scoped_models == [], what="none")
        await pilot.press("down", "ctrl+p")  # beta-large: both beta models on
        await wait_until(pilot, lambda: len(session.scoped_models) == 2, what="provider")
        assert {m.provider for m, _ in session.scoped_models} == {"beta"}
        await pilot.press(*"smart")
        await pilot.pause()
        assert [e.key for e in app.screen.shown] == ["beta/beta-smart"]
        await pilot.press("ctrl+x")  # clears only the models shown
        await wait_until(pilot, lambda: len(session.scoped_models) == 1, what="search clear")
        assert session.scoped_models[0][0].id == "beta-large"
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ScopedModelsScreen), what="closed")
        assert "enabled_models" not in _settings(project)


async def test_ctrl_s_in_the_model_picker_saves_the_default_without_switching(project: Path) -> None:
    session = _session(project, ("alpha", "alpha-fast"))
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        await pilot.pause()
        await pilot.press(*"large")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: _settings(project).get("default_model") == "beta-large", what="saved")
        assert _settings(project)["default_provider"] == "beta"
        assert isinstance(app.screen, ModelPicker) and "Default model saved: beta/beta-large" in screen_text(app)
        assert session.model.id == "alpha-fast"
        await pilot.press("escape")
