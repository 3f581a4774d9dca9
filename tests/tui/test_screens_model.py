"""Model selector: Ctrl+L and /model, search, choose (model_change; only Ctrl+S saves a default), cancel, scope."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pi_coder.session.entries import ModelChangeEntry
from pi_coder.tui.screens.model_picker import ModelPicker, exact_model_match
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import faux_models, keyless_provider, make_app, session_for

SPECS = [("alpha", "alpha-fast", False), ("beta", "beta-smart", True), ("beta", "beta-large", False)]


def _session(project: Path, **kwargs):
    models, providers = faux_models(*SPECS)
    models.set_provider(keyless_provider())
    model = models.get_model("alpha", "alpha-fast")
    return session_for(project, models, model, **kwargs)


def _global_settings(project: Path) -> dict:
    path = project.parent / "home" / "settings.toml"
    return tomllib.loads(path.read_text()) if path.exists() else {}


def _picker_lines(app) -> list[str]:
    picker = app.screen
    assert isinstance(picker, ModelPicker)
    return [entry.key for entry in picker.shown]


async def test_ctrl_l_lists_keyed_models_current_first_and_search_chooses(project: Path) -> None:
    """Only models with a key, current first with ✓; typing filters; Enter switches this session
    only (the picker says "Ctrl+S save as default": nothing is written without it, as in Pi)."""
    session = _session(project)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        await pilot.pause()
        assert _picker_lines(app) == ["alpha/alpha-fast", "beta/beta-smart", "beta/beta-large"]
        text = screen_text(app)
        assert "alpha-fast" in text and "✓" in text and "locked-model" not in text
        await pilot.press(*"large")
        await pilot.pause()
        assert _picker_lines(app) == ["beta/beta-large"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, ModelPicker), what="picker closed")
        await pilot.pause()
        await wait_until(pilot, lambda: (session.model.provider, session.model.id) == ("beta", "beta-large"), what="(session.model.provider, session.model.id) == ('beta', 'b...")
        last = [e for e in session.store.get_entries() if isinstance(e, ModelChangeEntry)][-1]
        assert (last.provider, last.model_id) == ("beta", "beta-large")
        saved = _global_settings(project)
        assert "default_model" not in saved and "default_provider" not in saved
        assert "Model: beta-large" in screen_text(app)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker again")
        await pilot.press(*"smart")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "default_model" in _global_settings(project), what="Ctrl+S saved")
        saved = _global_settings(project)
        assert (saved["default_provider"], saved["default_model"]) == ("beta", "beta-smart")
        await pilot.press("escape")


async def test_ctrl_p_and_shift_tab_change_the_session_only_and_ctrl_t_is_remembered(project: Path) -> None:
    """Ctrl+P and Shift+Tab write nothing to settings.toml (as in Pi); Ctrl+T's hide-thinking is saved."""
    session = _session(project)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: session.model.id == "beta-smart", what="cycled to the reasoning model")
        level = session.thinking_level
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: session.thinking_level != level, what="thinking level cycled")
        await pilot.pause()
        saved = _global_settings(project)
        assert not {"default_model", "default_provider", "default_thinking_level"} & set(saved)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: _global_settings(project).get("hide_thinking_block") is True, what="saved")
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: _global_settings(project).get("hide_thinking_block") is False, what="saved")


async def test_model_picker_at_80x24_shows_its_count_and_key_hints(project: Path) -> None:
    models, _ = faux_models(*[("p", f"model-{n:02d}", False) for n in range(40)])
    session = session_for(project, models, models.get_model("p", "model-00"))
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        await pilot.pause()
        text = screen_text(app)
        assert "(1/40)" in text
        assert "Ctrl+S save as default" in text and "Esc cancel" in text
        await pilot.press("escape")


async def test_escape_cancels_without_changes(project: Path) -> None:
    session = _session(project)
    entries_before = len(session.store.get_entries())
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        await pilot.press("down", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ModelPicker), what="picker closed")
        assert session.model.id == "alpha-fast"
        assert len(session.store.get_entries()) == entries_before
        assert "default_model" not in _global_settings(project)
        # The app's own keys work again once the dialog is gone (Esc did not abort anything).
        assert app.editor.has_focus


async def test_model_command_with_exact_id_switches_at_once(project: Path) -> None:
    session = _session(project)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        app.editor.insert("/model beta/beta-smart")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.model.id == "beta-smart", what="switch")
        assert not isinstance(app.screen, ModelPicker)


async def test_model_command_with_a_term_opens_the_picker_filtered(project: Path) -> None:
    session = _session(project)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        app.editor.insert("/model beta")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        await pilot.pause()
        assert app.screen.search_input.value == "beta"
        assert _picker_lines(app) == ["beta/beta-smart", "beta/beta-large"]
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: session.model.id == "beta-large", what="switch")


async def test_scoped_models_tab_toggles_between_scope_and_all(project: Path) -> None:
    """With a Ctrl+P scope the picker opens on it; Tab shows all keyed models."""
    models, _ = faux_models(*SPECS)
    alpha = models.get_model("alpha", "alpha-fast")
    beta = models.get_model("beta", "beta-smart")
    session = session_for(project, models, alpha, scoped_models=[(alpha, None), (beta, "high")])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        await pilot.pause()
        assert _picker_lines(app) == ["alpha/alpha-fast", "beta/beta-smart"]
        await pilot.press("tab")
        await pilot.pause()
        assert _picker_lines(app) == ["alpha/alpha-fast", "beta/beta-smart", "beta/beta-large"]
        # Ctrl+P (model cycling) is the app's key, switched off while the dialog is open.
        await pilot.press("ctrl+p")
        await pilot.pause()
        await wait_until(pilot, lambda: session.model.id == "alpha-fast", what="session.model.id == 'alpha-fast'")
        await pilot.press("escape")


def test_exact_match_needs_a_unique_id_or_provider_id() -> None:
    models, _ = faux_models(("a", "same", False), ("b", "same", False), ("b", "other", False))
    every = models.all_models()
    assert exact_model_match("b/same", every).provider == "b"
    assert exact_model_match("same", every) is None
    assert exact_model_match("OTHER", every).id == "other"
    assert exact_model_match("oth", every) is None


async def test_enabled_models_setting_scopes_ctrl_p_and_the_picker(project: Path) -> None:
    (project.parent / "home" / "settings.toml").write_text('enabled_models = ["beta/*"]\n')
    models, _ = faux_models(*SPECS)
    session = session_for(project, models, models.get_model("beta", "beta-smart"))
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        seen = []
        for _ in range(3):
            await pilot.press("ctrl+p")
            await pilot.pause()
            seen.append(session.model.id)
        assert seen == ["beta-large", "beta-smart", "beta-large"]
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        await pilot.pause()
        assert _picker_lines(app) == ["beta/beta-large", "beta/beta-smart"]
        assert "scoped" in screen_text(app)
        await pilot.press("escape")
