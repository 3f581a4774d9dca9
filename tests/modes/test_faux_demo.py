"""``--provider faux``: the scripted demo provider works without any key, and only when asked for."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.modes.pirun import PI, clean_env


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [*PI, *args], cwd=tmp_path, env=clean_env(home), input="", capture_output=True, text=True, timeout=60
    )


def test_faux_provider_answers_without_a_key(tmp_path: Path) -> None:
    result = _run(tmp_path, "--provider", "faux", "--no-session", "-p", "hello there")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "You said: hello there"


def test_faux_is_not_listed_unless_asked_for(tmp_path: Path) -> None:
    result = _run(tmp_path, "--list-models", "faux")
    assert result.returncode == 0, result.stderr
    assert "faux-1" not in result.stdout
