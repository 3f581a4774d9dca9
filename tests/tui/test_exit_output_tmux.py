"""Quitting prints the conversation to the terminal (its scrollback), then the resume hint, as Pi
does; ``fullscreen_exit_output = "resume-hint"`` prints only the hint (tui/exit_output.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.sse_server import Text, Turn
from tests.tui.tmux_support import Tmux, pi_home, start_pi

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ANSWER = "ANSWER-MARK first line.\n\n### Third heading\n\n- bullet BULLET-MARK\n"


def _history(tmux: Tmux) -> str:
    return tmux.run("capture-pane", "-p", "-S", "-200", "-t", tmux.name)


def _quit_after_one_answer(tmux: Tmux) -> str:
    tmux.wait_text("test-model")
    tmux.text("PROMPT-MARK please")
    tmux.keys("Enter")
    tmux.wait_text("BULLET-MARK")
    tmux.keys("C-d")
    tmux.wait(tmux.exited, "pi to exit")
    return _history(tmux)


def test_quitting_prints_the_transcript_then_the_resume_hint(tmp_path: Path) -> None:
    with pi_home(tmp_path) as (home, project, server):
        server.enqueue(Turn([Text(ANSWER)]))
        tmux = start_pi(home, project)
        try:
            out = _quit_after_one_answer(tmux)
        finally:
            tmux.run("kill-session", "-t", tmux.name)
    after = out[out.rindex("PROMPT-MARK") :]  # the printed copy, below the (cleared) screen
    assert after.index("PROMPT-MARK") < after.index("ANSWER-MARK") < after.index("### Third heading")
    assert after.index("BULLET-MARK") < after.index("To resume this session: pi --session")
    assert "PI-EXIT=0" in after


def test_resume_hint_setting_prints_only_the_hint(tmp_path: Path) -> None:
    with pi_home(tmp_path) as (home, project, server):
        (home / "settings.toml").write_text('fullscreen_exit_output = "resume-hint"\n')
        server.enqueue(Turn([Text(ANSWER)]))
        tmux = start_pi(home, project)
        try:
            out = _quit_after_one_answer(tmux)
        finally:
            tmux.run("kill-session", "-t", tmux.name)
    assert "To resume this session: pi --session" in out
    assert "ANSWER-MARK" not in out and "PROMPT-MARK" not in out
