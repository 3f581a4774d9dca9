"""``pi config``: the toggle list writes the same ``packages`` entries a hand edit would."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pi_coder.packages.manage import Packages
from tests.packages.support import make_source


def entries(home: Path) -> list[object]:
    return list(tomllib.loads((home / "settings.toml").read_text())["packages"])


async def test_toggles_write_settings_and_turn_resources_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_coder.tui.package_config import PackageConfigApp

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(), project.mkdir()
    monkeypatch.setenv("PI_CODER_HOME", str(home))
    source = make_source(tmp_path / "alpha-src", "alpha")
    Packages("user", str(project)).install(str(source))

    app = PackageConfigApp(str(project))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("space")  # the first row: the extension
        await pilot.pause()
        assert entries(home) == [{"source": str(source), "extensions": ["-alpha"]}]
        await pilot.press("down", "space")  # the skill
        await pilot.pause()
        assert entries(home) == [{"source": str(source), "extensions": ["-alpha"], "skills": ["-alpha-skill"]}]
        await pilot.press("up", "space")  # the extension back on: its key goes
        await pilot.pause()
        assert entries(home) == [{"source": str(source), "skills": ["-alpha-skill"]}]

    (package,) = Packages("user", str(project)).resolved()
    assert [ext.name for ext in package.extensions] == ["alpha"]
    assert package.skills == [] and package.disabled["skills"] == ["alpha-skill"]
    assert len(package.prompts) == 1 and len(package.themes) == 1


async def test_tab_switches_to_the_project_scope(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.widgets import SelectionList, Static

    from pi_coder.tui.package_config import PackageConfigApp

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(), project.mkdir()
    monkeypatch.setenv("PI_CODER_HOME", str(home))
    make_source(project / "tools", "alpha")
    Packages("project", str(project)).install("./tools")

    app = PackageConfigApp(str(project))
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.query_one("#resources", SelectionList).option_count == 0
        await pilot.press("tab")
        await pilot.pause()
        assert "This project's packages" in str(app.query_one("#title", Static).render())
        assert app.query_one("#resources", SelectionList).option_count == 4
        await pilot.press("down", "down", "space")  # the prompt
        await pilot.pause()
    data = tomllib.loads((project / ".pi" / "settings.toml").read_text())
    assert data["packages"] == [{"source": "../tools", "prompts": ["-alpha-prompt"]}]
