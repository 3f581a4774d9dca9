"""/undo in the real TUI (tmux): the model writes a file, /undo removes it and puts the prompt back.

Sending the editor's text again proves the prompt is back in the editor (not only on screen).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modes.pirun import user_texts
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn
from tests.tui.tmux_support import Tmux, pi_home, start_pi

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git"),
]

PROMPT = "please make the notes file"


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, Path, SSEServer]]:
    with pi_home(tmp_path) as (home, project, server):
        yield home, project, server


BUSY = "Wait for the agent to finish"


def _undo(tmux: Tmux, made: Path) -> None:
    """Send /undo; the answer may end on screen a moment before the run is over: then send it again."""
    for _attempt in range(20):
        busy = tmux.screen().count(BUSY)
        tmux.text("/undo")
        tmux.wait_text("/undo")
        tmux.keys("Enter")
        tmux.wait(lambda b=busy: not made.exists() or tmux.screen().count(BUSY) > b, "/undo to answer", timeout=30)
        if not made.exists():
            return
    raise AssertionError("/undo kept finding the agent busy")


def test_undo_removes_the_file_and_restores_the_prompt(setup: tuple[Path, Path, SSEServer]) -> None:
    home, project, server = setup
    (project / "keep.txt").write_text("kept\n")
    server.enqueue(
        Turn([ToolCall("write", {"path": "notes.txt", "content": "notes\n"}, id="c1")]),
        Turn([Text("FIRST-DONE")]),
        Turn([Text("AGAIN-DONE")]),
    )
    tmux = start_pi(home, project, "", prefix="pi-undo", size=(100, 30))
    try:
        tmux.wait_text("test-model")  # the footer: the TUI is up
        tmux.text(PROMPT)
        tmux.keys("Enter")
        tmux.wait_text("FIRST-DONE", timeout=30)
        assert (project / "notes.txt").read_text() == "notes\n"

        _undo(tmux, project / "notes.txt")
        tmux.wait_text("Undid", timeout=30)
        tmux.wait(lambda: "FIRST-DONE" not in tmux.screen(), "the conversation to go back")
        tmux.wait_text(PROMPT)  # in the editor now
        assert (project / "keep.txt").read_text() == "kept\n"

        tmux.keys("Enter")  # send what the editor holds
        tmux.wait_text("AGAIN-DONE", timeout=30)
        assert user_texts(server.requests[-1].json)[-1] == PROMPT
        tmux.keys("C-c", "C-c")
        tmux.wait(tmux.exited, "pi to exit")
        assert "PI-EXIT=0" in tmux.screen()
    finally:
        tmux.run("kill-session", "-t", tmux.name)
