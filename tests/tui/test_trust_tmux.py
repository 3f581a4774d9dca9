"""The trust dialog in a real terminal (tmux): asked before the first prompt, then the TUI starts.

A project whose ``.pi/settings.toml`` runs ``touch <marker>`` before every bash command: "Don't
trust for this session only" starts the TUI with the prefix left out (the model's bash call
leaves no marker) and saves nothing; "Trust" saves the folder in trust.json and the next start
asks nothing and runs the prefix.
"""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.sse_server import SSEServer, Text, ToolCall, Turn
from tests.tui.tmux_support import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

PI = Path(sys.executable).parent / "pi"


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, Path, SSEServer]]:
    if not PI.exists():
        pytest.skip(f"the pi entry point is not installed next to {sys.executable}")
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.toml").write_text(f'shell_command_prefix = "touch {project / "pwned"}"\n')
    with SSEServer() as server:
        (home / "models.toml").write_text(
            "[providers.local]\n"
            'api = "openai-completions"\n'
            f'base_url = "{server.openai_base_url}"\n'
            'api_key = "none"\n'
            'models = [{ id = "test-model", context_window = 32000 }]\n'
        )
        yield home, project, server


def _start(home: Path, project: Path) -> Tmux:
    tmux = Tmux(f"pi-trust-{uuid.uuid4().hex[:8]}")
    command = (
        f"env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY PI_CODER_HOME={home} {PI} --model local/test-model;"
        " echo PI-EXIT=$?; sleep 60"
    )
    tmux.run("new-session", "-d", "-s", tmux.name, "-x", "100", "-y", "30", "-c", str(project), command)
    return tmux


def _run_bash(tmux: Tmux, server: SSEServer, done: str) -> None:
    server.enqueue(Turn([ToolCall("bash", {"command": "echo hi"}, id="c1")]), Turn([Text(done)]))
    tmux.wait_text("test-model")  # the footer: the TUI is up
    tmux.text("run it")
    tmux.keys("Enter")
    tmux.wait_text(done, timeout=30)


def _quit(tmux: Tmux) -> None:
    tmux.keys("C-c", "C-c")
    tmux.wait(tmux.exited, "pi to exit")
    assert "PI-EXIT=0" in tmux.screen()


def test_dialog_then_tui_then_saved_decision(setup: tuple[Path, Path, SSEServer]) -> None:
    home, project, server = setup
    tmux = _start(home, project)
    try:
        tmux.wait_text("Trust this project folder?")
        tmux.wait_text("sets shell_command_prefix")
        for _ in range(4):
            tmux.keys("Down")
        tmux.keys("Enter")  # Don't trust for this session only
        tmux.wait_text("This project folder is not trusted")
        _run_bash(tmux, server, "FIRST-DONE")
        assert not (project / "pwned").exists()
        _quit(tmux)
    finally:
        tmux.run("kill-session", "-t", tmux.name)
    assert not (home / "trust.json").exists()

    tmux = _start(home, project)
    try:
        tmux.wait_text("Trust this project folder?")
        tmux.keys("Enter")  # Trust
        _run_bash(tmux, server, "SECOND-DONE")
        assert (project / "pwned").exists()
        _quit(tmux)
    finally:
        tmux.run("kill-session", "-t", tmux.name)
    assert json.loads((home / "trust.json").read_text()) == {str(project.resolve()): True}

    (project / "pwned").unlink()
    tmux = _start(home, project)
    try:
        _run_bash(tmux, server, "THIRD-DONE")  # no dialog: the saved decision applies
        assert (project / "pwned").exists()
        _quit(tmux)
    finally:
        tmux.run("kill-session", "-t", tmux.name)
