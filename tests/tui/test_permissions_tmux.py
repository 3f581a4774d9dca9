"""The "ask" permission dialog in the real TUI (tmux): a write waits for the user's answer.

Deny first with a reason (the file is not written, the model gets the reason), then "Allow once" on the next
call (the file is written); the footer shows the mode all along.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modes.pirun import all_text
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn
from tests.tui.tmux_support import pi_home, start_pi

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")



@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, Path, SSEServer]]:
    with pi_home(tmp_path) as (home, project, server):
        yield home, project, server


def test_ask_mode_dialog_denies_then_allows_once(setup: tuple[Path, Path, SSEServer]) -> None:
    home, project, server = setup
    target = project / "notes.txt"
    server.enqueue(
        Turn([ToolCall("write", {"path": "notes.txt", "content": "one\n"}, id="c1")]),
        Turn([Text("DENIED-SEEN")]),
        Turn([ToolCall("write", {"path": "notes.txt", "content": "two\n"}, id="c2")]),
        Turn([Text("WRITTEN-SEEN")]),
    )
    tmux = start_pi(home, project, "--permission-mode ask", prefix="pi-ask", size=(110, 32))
    try:
        tmux.wait_text("mode: ask")  # the footer shows the mode
        tmux.text("write the notes")
        tmux.keys("Enter")
        tmux.wait_text("Allow once", timeout=30)
        tmux.wait_text("notes.txt")
        assert not target.exists()  # nothing runs while the dialog waits
        tmux.text("Deny")  # type to filter the choices, then pick
        tmux.wait(lambda: "Allow this session" not in tmux.screen(), "the filter to leave Deny")
        tmux.keys("Enter")
        tmux.wait_text("Reason for the model", timeout=30)
        tmux.text("keep the folder clean")
        tmux.keys("Enter")
        tmux.wait_text("DENIED-SEEN", timeout=30)
        assert not target.exists()
        assert "keep the folder clean" in all_text(server.requests[1].json)

        tmux.text("now really")
        tmux.keys("Enter")
        tmux.wait_text("Allow once", timeout=30)
        tmux.keys("Enter")  # the first choice: Allow once
        tmux.wait_text("WRITTEN-SEEN", timeout=30)
        assert target.read_text() == "two\n"
        tmux.keys("C-c", "C-c")
        tmux.wait(tmux.exited, "pi to exit")
        assert "PI-EXIT=0" in tmux.screen()
    finally:
        tmux.run("kill-session", "-t", tmux.name)
