"""The "ask" permission dialog in the real TUI (tmux): a write waits for the user's answer.

Deny first with a reason (the file is not written, the model gets the reason), then "Allow once" on the next
call (the file is written); the footer shows the mode all along.
"""

from __future__ import annotations

import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modes.pirun import all_text
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn
from tests.tui.test_terminal_tmux import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

PI = Path(sys.executable).parent / "pi"


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, Path, SSEServer]]:
    if not PI.exists():
        pytest.skip(f"the pi entry point is not installed next to {sys.executable}")
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    with SSEServer() as server:
        (home / "models.toml").write_text(
            "[providers.local]\n"
            'api = "openai-completions"\n'
            f'base_url = "{server.openai_base_url}"\n'
            'api_key = "none"\n'
            'models = [{ id = "test-model", context_window = 32000 }]\n'
        )
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
    tmux = Tmux(f"pi-ask-{uuid.uuid4().hex[:8]}")
    command = (
        f"env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY PI_CODER_HOME={home} {PI} --model local/test-model"
        " --permission-mode ask; echo PI-EXIT=$?; sleep 60"
    )
    tmux.run("new-session", "-d", "-s", tmux.name, "-x", "110", "-y", "32", "-c", str(project), command)
    try:
        tmux.wait_text("mode: ask")  # the footer shows the mode
        tmux.text("write the notes")
        tmux.keys("Enter")
        tmux.wait_text("Allow once", timeout=30)
        assert "notes.txt" in tmux.screen()
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
