"""``pi`` in a real terminal (tmux) against a local scripted model server.

Starts the installed ``pi`` entry point in a detached tmux session with a temporary
PI_CODER_HOME whose models.toml points at ``tests/support/sse_server.py``, types a prompt, queues
a follow-up with Alt+Enter while the answer streams (tmux sends the legacy ESC CR encoding), sees
both answers, and quits with Ctrl+C twice.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.sse_server import SSEServer, Text, Turn
from tests.tui.tmux_support import PI, Tmux, pi_home, start_pi

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

@pytest.fixture
def tmux_pi(tmp_path: Path) -> Iterator[tuple[Tmux, SSEServer]]:
    with pi_home(tmp_path) as (home, project, server):
        tmux = start_pi(home, project)
        try:
            yield tmux, server
        finally:
            tmux.run("kill-session", "-t", tmux.name)


def test_prompt_follow_up_and_quit_in_tmux(tmux_pi: tuple[Tmux, SSEServer]) -> None:
    tmux, server = tmux_pi
    long_answer = "Counting slowly: " + " ".join(f"n{i}" for i in range(120)) + " and DONE-ONE."
    server.enqueue(
        Turn([Text(long_answer)], delta_chars=6, delay=0.03),  # about 2 s of streaming
        Turn([Text("Second answer: DONE-TWO.")]),
    )
    tmux.wait_text("pi v")
    tmux.wait_text("test-model")  # footer shows the model
    tmux.text("count for me")
    tmux.keys("Enter")
    tmux.wait_text("Counting slowly")
    tmux.text("and then stop")
    tmux.keys("M-Enter")  # legacy Alt+Enter: ESC CR
    tmux.wait_text("Follow-up: and then stop", timeout=10)
    tmux.wait_text("DONE-TWO", timeout=30)
    assert len(server.requests) == 2
    follow_up = server.requests[1].json["messages"][-1]
    assert "and then stop" in str(follow_up["content"])
    tmux.keys("C-c", "C-c")
    tmux.wait(tmux.exited, "pi to exit")
    assert "PI-EXIT=0" in tmux.screen()


def test_resumed_session_shows_thinking_tool_call_and_answer_without_a_resize(tmp_path: Path) -> None:
    """``pi -c`` renders the stored assistant text and thinking on the first frames, not only after
    a resize (the resumed transcript used to show only the user prompts and the tool blocks)."""
    if not PI.exists():
        pytest.skip(f"the pi entry point is not installed next to {sys.executable}")
    from tests.support.sse_server import Thinking, ToolCall

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "notes.txt").write_text("NOTES-CONTENT\n")
    with SSEServer() as server:
        (home / "models.toml").write_text(
            "[providers.local]\n"
            'api = "anthropic-messages"\n'
            f'base_url = "{server.anthropic_base_url}"\n'
            'api_key = "none"\n'
            'models = [{ id = "test-model", context_window = 32000, reasoning = true }]\n'
        )
        server.enqueue(
            Turn([Thinking("PONDER-MARK about the notes"), ToolCall("read", {"path": "notes.txt"})]),
            Turn([Text("ANSWER-MARK: the notes say hello.")]),
        )
        env = {"PI_CODER_HOME": str(home), "PATH": "/usr/bin:/bin"}
        done = subprocess.run(
            [str(PI), "--model", "local/test-model", "-p", "read notes.txt"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "ANSWER-MARK" in done.stdout
        tmux = Tmux(f"pi-test-{uuid.uuid4().hex[:8]}")
        command = f"env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY PI_CODER_HOME={home} {PI} -c; echo PI-EXIT=$?; sleep 60"
        tmux.run("new-session", "-d", "-s", tmux.name, "-x", "100", "-y", "40", "-c", str(project), command)
        try:
            tmux.wait_text("read notes.txt")
            tmux.wait_text("ANSWER-MARK")
            tmux.wait_text("PONDER-MARK")
            tmux.wait_text("notes.txt")
            tmux.keys("C-c", "C-c")
            tmux.wait(tmux.exited, "pi to exit")
        finally:
            tmux.run("kill-session", "-t", tmux.name)
