"""Ctrl+G and Ctrl+Z in a real terminal: the editor takes over the terminal and hands it back;
Ctrl+Z stops pi in a job-control shell and ``fg`` brings the screen back."""

from __future__ import annotations

import shutil
import stat
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.tmux_support import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

PI = Path(sys.executable).parent / "pi"


@pytest.fixture
def shell_tmux(tmp_path: Path) -> Iterator[tuple[Tmux, Path]]:
    if not PI.exists():
        pytest.skip(f"the pi entry point is not installed next to {sys.executable}")
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    # After Ctrl+Z bash prints the "PI-EXIT=" of the stopped command at once; a transcript printed
    # on quitting would scroll it off this 24-row screen.
    (home / "settings.toml").write_text('fullscreen_exit_output = "resume-hint"\n')
    editor = tmp_path / "editor.sh"
    # A terminal program: it prints on the (restored) terminal, waits for Enter, then edits the file.
    editor.write_text('#!/bin/bash\necho "EDITOR-RUNNING on $1"\nread -r line\nprintf "from editor: %s" "$line" > "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    tmux = Tmux(f"pi-ed-{uuid.uuid4().hex[:8]}")
    tmux.run("new-session", "-d", "-s", tmux.name, "-x", "90", "-y", "24", "-c", str(project), "bash --norc --noprofile -i")
    tmux.text(f"export PS1='SHELL$ ' PI_CODER_HOME={home} EDITOR={editor}; unset VISUAL ANTHROPIC_API_KEY OPENAI_API_KEY")
    tmux.keys("Enter")
    try:
        yield tmux, home
    finally:
        tmux.run("kill-session", "-t", tmux.name)


def test_ctrl_g_and_ctrl_z_in_tmux(shell_tmux: tuple[Tmux, Path]) -> None:
    tmux, _ = shell_tmux
    tmux.wait_text("SHELL$")
    tmux.text(f"{PI} --no-session; echo PI-EXIT=$?")
    tmux.keys("Enter")
    tmux.wait_text("no model")
    tmux.text("draft")
    tmux.keys("C-g")
    tmux.wait_text("EDITOR-RUNNING on")
    tmux.wait(lambda: "no model" not in tmux.screen(), "the editor to take the terminal")
    tmux.text("hello")
    tmux.keys("Enter")
    tmux.wait(lambda: "from editor: hello" in tmux.screen() and "no model" in tmux.screen(), "pi back")
    tmux.keys("C-z")
    tmux.wait(lambda: "Stopped" in tmux.screen() and "no model" not in tmux.screen(), "pi stopped")
    tmux.text("fg")
    tmux.keys("Enter")
    tmux.wait(lambda: "no model" in tmux.screen() and "from editor: hello" in tmux.screen(), "pi resumed")
    tmux.keys("C-c", "C-c")
    tmux.wait(tmux.exited, "pi to exit")
