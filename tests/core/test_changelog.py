"""CHANGELOG.md: found from the source tree and from an installed copy, with a section per release."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from pi_coder.core.changelog import changelog_path, read_changelog

ROOT = Path(__file__).parent.parent.parent


def test_the_source_tree_reads_the_repository_changelog() -> None:
    assert changelog_path() == (ROOT / "CHANGELOG.md").resolve()
    assert read_changelog() == (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_the_version_in_pyproject_has_a_section_and_the_wheel_ships_the_file() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    version = project["project"]["version"]
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(version)}\]", text, re.MULTILINE), f"no section for {version}"
    assert "## [Unreleased]" in text
    included = project["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert included["CHANGELOG.md"] == "pi_coder/CHANGELOG.md"


def test_an_installed_layout_reads_the_copy_inside_the_package(tmp_path: Path) -> None:
    """As in a wheel: ``site/pi_coder/CHANGELOG.md`` and no repository around it."""
    site = tmp_path / "site"
    package = site / "pi_coder"
    (package / "core").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "core" / "__init__.py").write_text("")
    shutil.copy(ROOT / "pi_coder" / "core" / "changelog.py", package / "core" / "changelog.py")
    (package / "CHANGELOG.md").write_text("# Changelog\n\n## [9.9.9]\n- shipped\n", encoding="utf-8")
    code = "from pi_coder.core.changelog import read_changelog; print(read_changelog())"
    run = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); {code}"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "## [9.9.9]" in run.stdout
