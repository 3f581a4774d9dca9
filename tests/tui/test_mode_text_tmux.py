"""``--mode text`` in a real terminal (tmux), as Pi 1.6 does it: on a terminal the TUI still opens;
with stdout redirected pi runs once in print mode even without ``-p``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.sse_server import SSEServer, Text, Turn
from tests.tui.tmux_support import Tmux, pi_home, start_pi

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")



@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, Path, SSEServer]]:
    with pi_home(tmp_path) as (home, project, server):
        yield home, project, server


def _start(home: Path, project: Path, args: str) -> Tmux:
    return start_pi(home, project, args, prefix="pi-mode")


def test_mode_text_on_a_terminal_opens_the_tui(setup: tuple[Path, Path, SSEServer]) -> None:
    home, project, server = setup
    server.enqueue(Turn([Text("Answer in the TUI: TUI-OK.")]))
    tmux = _start(home, project, "--mode text 'say it'")
    try:
        tmux.wait_text("TUI-OK", timeout=40)
        tmux.wait_text("test-model")  # the footer: this is the TUI, still running
        assert not tmux.exited()
        tmux.keys("C-c", "C-c")
        tmux.wait(tmux.exited, "pi to exit", timeout=30)
        assert "PI-EXIT=0" in tmux.screen()
    finally:
        tmux.run("kill-session", "-t", tmux.name)


def test_redirected_stdout_runs_print_mode(setup: tuple[Path, Path, SSEServer], tmp_path: Path) -> None:
    home, project, server = setup
    server.enqueue(Turn([Text("PRINTED-ANSWER")]))
    out = tmp_path / "out.txt"
    tmux = _start(home, project, f"'say it' > {out}")
    try:
        tmux.wait(tmux.exited, "pi to exit", timeout=40)
        assert "PI-EXIT=0" in tmux.screen()
        assert out.read_text().strip() == "PRINTED-ANSWER"
    finally:
        tmux.run("kill-session", "-t", tmux.name)
