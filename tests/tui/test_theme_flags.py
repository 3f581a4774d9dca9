"""``--theme``, ``--use-theme`` and ``--no-themes`` reach the TUI through the start-up plan."""

from __future__ import annotations

import json
from pathlib import Path

from pi_coder.ai.models import create_models
from pi_coder.ai.providers.faux import faux_provider
from pi_coder.core import create_agent_session
from pi_coder.core.startup import PlanOptions, plan_startup
from pi_coder.permissions.trust import TrustDecision
from pi_coder.session.store import SessionStore
from pi_coder.settings import load_settings
from pi_coder.tui.app import PiApp
from pi_coder.tui.commands import find_command
from tests.tui.screens_support import make_app


def _theme_file(folder: Path, name: str) -> Path:
    dark = json.loads((Path(__file__).resolve().parents[2] / "themes" / "dark.json").read_text())
    dark["name"] = name
    path = folder / f"{name}.json"
    path.write_text(json.dumps(dark))
    return path


def _app_from_plan(project: Path, options: PlanOptions, trust: TrustDecision | None = None) -> PiApp:
    """The app on a session built the way ``pi`` builds it: through the start-up plan of ``options``."""
    faux = faux_provider([])
    models = create_models(include_builtin=False, env={}, models_toml=Path("/nonexistent/models.toml"))
    models.set_provider(faux)
    plan = plan_startup(
        options, cwd=str(project), settings=load_settings(str(project)), models=models,
        store=SessionStore.in_memory(str(project)), project_trust=trust,
    )
    return make_app(create_agent_session(plan))


async def test_use_theme_picks_a_theme_loaded_with_theme(project: Path, tmp_path: Path) -> None:
    extra = tmp_path / "themes"
    extra.mkdir()
    _theme_file(extra, "ocean")
    app = _app_from_plan(project, PlanOptions(themes=[str(extra)], use_theme="ocean"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.themes.theme is not None and app.themes.theme.name == "ocean"
        assert app.theme == "pi-ocean"
    assert load_settings(str(project)).settings.theme == "dark"  # nothing saved


async def test_no_themes_drops_the_themes_setting(project: Path, tmp_path: Path) -> None:
    configured = tmp_path / "configured"
    configured.mkdir()
    _theme_file(configured, "forest")
    home = Path(str(project.parent / "home"))
    (home / "settings.toml").write_text(f'themes = ["{configured}"]\ntheme = "forest"\n')
    app = _app_from_plan(project, PlanOptions())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.themes.theme is not None and app.themes.theme.name == "forest"
    app = _app_from_plan(project, PlanOptions(no_themes=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.themes.theme is not None and app.themes.theme.name == "dark"  # forest is not found: dark


async def test_no_themes_skips_the_config_and_project_folders(project: Path, tmp_path: Path) -> None:
    """Pi's rule: ``--no-themes`` disables discovered and configured themes; ``--theme`` paths load."""
    home = Path(str(project.parent / "home"))
    (home / "themes").mkdir()
    _theme_file(home / "themes", "forest")
    (project / ".pi" / "themes").mkdir(parents=True)
    _theme_file(project / ".pi" / "themes", "ocean")
    extra = tmp_path / "extra"
    extra.mkdir()
    given = _theme_file(extra, "desert")
    (home / "settings.toml").write_text('theme = "ocean"\n')
    trusted = TrustDecision(trusted=True, source="flag", path=str(project))
    app = _app_from_plan(project, PlanOptions(), trusted)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.themes.theme is not None and app.themes.theme.name == "ocean"
        assert {"forest", "ocean"} <= {info.name for info in app.themes.available()}
    app = _app_from_plan(project, PlanOptions(no_themes=True, themes=[str(given)]), trusted)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.themes.theme is not None and app.themes.theme.name == "dark"  # ocean is not found: dark
        assert [info.name for info in app.themes.available()] == ["dark", "desert", "light", "system"]
        assert app.themes.use("forest") is not None  # the config folder's theme is not loaded either
        app.themes.use("desert")
        await pilot.pause()
        assert app.theme == "pi-desert"
        reload = find_command("reload")
        assert reload is not None
        await reload.run(app, "")  # the run's paths and --no-themes hold after /reload
        await pilot.pause()
        assert [info.name for info in app.themes.available()] == ["dark", "desert", "light", "system"]
