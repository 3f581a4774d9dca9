"""The trust dialog before the session starts, ``/trust``, and what an untrusted TUI leaves out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_coder.permissions.trust import (
    TrustDecision,
    TrustStore,
    apply_trust_choice,
    canonical_path,
    clear_trust_cache,
    project_resources,
)
from pi_coder.tui.screens.dialogs import ChoiceDialog
from pi_coder.tui.trust_dialog import TrustApp
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app
from tests.tui.test_theming import _theme_json, _write


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    clear_trust_cache()
    yield
    clear_trust_cache()


def _repo(project: Path) -> Path:
    (project / ".pi").mkdir(exist_ok=True)
    (project / ".pi" / "settings.toml").write_text('shell_command_prefix = "touch pwned"\n')
    (project / ".pi" / "SYSTEM.md").write_text("obey\n")
    return project


@pytest.mark.parametrize(
    ("downs", "choice", "saved"),
    [
        (0, "trust", "self-true"),
        (1, "trust_parent", "parent-true"),
        (2, "trust_session", None),
        (3, "distrust", "self-false"),
        (4, "distrust_session", None),
    ],
)
async def test_start_dialog_choices(project: Path, downs: int, choice: str, saved: str | None) -> None:
    """Each option returns its choice; applying it saves exactly what it says."""
    folder = canonical_path(_repo(project))
    app = TrustApp(folder, project_resources(folder))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="dialog")
        text = screen_text(app)
        assert "Trust this project folder?" in text
        assert str(folder) in text
        assert ".pi/settings.toml: sets shell_command_prefix" in text
        assert ".pi/SYSTEM.md: replaces the system prompt" in text
        for label in ("Trust parent folder", "Trust for this session only", "Don't trust for this session only"):
            assert label in text
        for _ in range(downs):
            await pilot.press("down")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.return_value is not None, what="answer")
    assert app.return_value == choice
    decision = apply_trust_choice(folder, app.return_value)  # type: ignore[arg-type]
    expected = {
        "self-true": {str(folder): True},
        "parent-true": {str(folder.parent): True},
        "self-false": {str(folder): False},
        None: {},
    }[saved]
    assert TrustStore().load() == expected
    assert decision.trusted is choice.startswith("trust")


async def test_start_dialog_escape_saves_nothing(project: Path) -> None:
    folder = canonical_path(_repo(project))
    app = TrustApp(folder, project_resources(folder))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="dialog")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.is_running, what="exit")
    assert app.return_value is None
    decision = apply_trust_choice(folder, None)
    assert not decision.trusted and decision.source == "undecided"
    assert not (project.parent / "home" / "trust.json").exists()


async def test_trust_command_shows_the_decision_and_saves_a_new_one(project: Path, make_session) -> None:
    folder = canonical_path(_repo(project))
    untrusted = TrustDecision(trusted=False, source="undecided", path=folder)
    session, _ = make_session([], project_trust=untrusted)
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_text(pilot, "/trust")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="dialog")
        labels = [label for _, label in app.screen.choices]
        assert labels == ["Trust", "Trust parent folder", "Don't trust"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: "next time pi starts" in screen_text(app), what="saved notice")
        text = screen_text(app)
        assert "not trusted (no decision yet)" in text
        assert "Saved decision: none" in text
        assert "sets shell_command_prefix" in text
    assert TrustStore().load() == {str(folder): True}


async def test_untrusted_session_skips_project_themes_and_templates(project: Path, make_session) -> None:
    """The TUI of an untrusted folder uses neither ``.pi/themes`` nor ``.pi/prompts``."""
    home = project.parent / "home"
    _write(project / ".pi" / "themes" / "mine.json", _theme_json("mine", "#222222"))
    (project / ".pi" / "prompts").mkdir(parents=True)
    (project / ".pi" / "prompts" / "explain.md").write_text("Explain $@\n")
    (home / "settings.toml").write_text('theme = "mine"\n')
    folder = canonical_path(project)
    untrusted = TrustDecision(trusted=False, source="saved", path=folder, saved_path=folder)
    session, _ = make_session([], project_trust=untrusted)
    assert [t.name for t in session.prompt_templates] == []
    app = make_app(session)
    async with app.run_test(size=(100, 30)):
        assert app.theme == "pi-dark"
        assert "mine" not in {info.name for info in app.themes.available()}

    trusted = TrustDecision(trusted=True, source="flag", path=folder)
    session, _ = make_session([], project_trust=trusted)
    assert [t.name for t in session.prompt_templates] == ["explain"]
    app = make_app(session)
    async with app.run_test(size=(100, 30)):
        assert app.current_theme.primary.lower() == "#222222"
