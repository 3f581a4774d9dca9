"""``pi`` in tmux: the jump marker, the terminal's real size, the resume hint (issue 14).

Each test starts the installed ``pi`` in its own detached tmux session against the scripted
model server (``tests/support/sse_server.py``) and reads the pane as a user would.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.sse_server import SSEServer, Text, Turn
from tests.tui.tmux_support import PI, Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

MARKER = "New output below"

Start = Callable[..., Tmux]


@pytest.fixture
def start_pi(tmp_path: Path) -> Iterator[tuple[Start, SSEServer, Path]]:
    if not PI.exists():
        pytest.skip(f"the pi entry point is not installed next to {PI.parent}")
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    sessions: list[Tmux] = []
    with SSEServer() as server:
        (home / "models.toml").write_text(
            "[providers.local]\n"
            'api = "openai-completions"\n'
            f'base_url = "{server.openai_base_url}"\n'
            'api_key = "none"\n'
            'models = [{ id = "test-model", context_window = 32000 }]\n'
        )

        def start(width: int = 100, height: int = 30, env: str = "", args: str = "") -> Tmux:
            tmux = Tmux(f"pi-view-{uuid.uuid4().hex[:8]}")
            sessions.append(tmux)
            command = (
                f"env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY PI_CODER_HOME={home} {env} {PI} --model local/test-model"
                f" {args}; echo PI-EXIT=$?; sleep 60"
            )
            tmux.run(
                "new-session",
                "-d",
                "-s",
                tmux.name,
                "-x",
                str(width),
                "-y",
                str(height),
                "-c",
                str(project),
                command,
            )
            tmux.wait_text("test-model")
            return tmux

        try:
            yield start, server, home
        finally:
            for tmux in sessions:
                tmux.run("kill-session", "-t", tmux.name)


def _long_answer(tag: str, lines: int = 80) -> str:
    return "\n\n".join(f"{tag} paragraph {i} " + "words " * 8 for i in range(lines)) + f"\n\n{tag} LAST LINE."


def _idle(tmux: Tmux) -> bool:
    return "Working" not in tmux.screen()


def test_marker_comes_and_goes_and_never_covers_the_answer(start_pi) -> None:
    """Scroll up mid-stream: marker; End: gone; after /new and a second long answer the last line shows."""
    start, server, _ = start_pi
    server.enqueue(
        Turn([Text(_long_answer("A"))], delta_chars=40, delay=0.02),
        Turn([Text(_long_answer("B"))], delta_chars=40, delay=0.01),
    )
    tmux = start()
    tmux.text("first")
    tmux.keys("Enter")
    tmux.wait_text("A paragraph 30")
    tmux.keys("PageUp")
    tmux.wait_text(MARKER)
    tmux.keys("End")
    tmux.wait(lambda: MARKER not in tmux.screen(), "the marker to go after End")
    tmux.wait_text("A LAST LINE.", timeout=30)
    tmux.text("/new")
    tmux.keys("Enter")
    tmux.wait(lambda: "A LAST LINE." not in tmux.screen(), "a new session")
    tmux.text("second")
    tmux.keys("Enter")
    tmux.wait_text("B LAST LINE.", timeout=30)
    tmux.wait(lambda: _idle(tmux), "the turn to end")
    screen = tmux.screen()
    assert MARKER not in screen
    assert "B LAST LINE." in screen


def test_marker_stays_away_while_messages_are_queued(start_pi) -> None:
    """Queuing a steer and a follow-up without scrolling shows no marker; Esc shows "Operation aborted"."""
    start, server, _ = start_pi
    server.enqueue(Turn([Text(_long_answer("C", 400))], delta_chars=10, delay=0.05))
    tmux = start()
    tmux.text("go")
    tmux.keys("Enter")
    tmux.wait_text("C paragraph 20", timeout=40)
    tmux.text("steer this")
    tmux.keys("Enter")
    tmux.text("and follow")
    tmux.keys("M-Enter")
    tmux.wait_text("Follow-up: and follow", timeout=40)
    for _ in range(10):  # output keeps arriving with the queue shown
        assert MARKER not in tmux.screen()
        before = tmux.screen()
        tmux.wait(lambda before=before: tmux.screen() != before, "more output")
    tmux.keys("Escape")
    tmux.wait_text("Operation aborted")
    assert MARKER not in tmux.screen()


def _footer_width(tmux: Tmux) -> int:
    lines = [line for line in tmux.screen().splitlines() if "test-model" in line]
    return len(lines[-1].rstrip()) if lines else 0


def test_stale_columns_and_lines_do_not_fix_the_size(start_pi) -> None:
    """COLUMNS=40 LINES=10 exported in a 100x30 pane: pi draws at 100x30 and follows a resize."""
    start, _, _ = start_pi
    tmux = start(env="COLUMNS=40 LINES=10")
    tmux.wait(lambda: _footer_width(tmux) >= 95, "the footer to reach the right edge of 100 columns")
    tmux.wait(lambda: "╰" in tmux.screen().splitlines()[-3], "the editor box at the bottom of 30 rows")
    assert len([line for line in tmux.screen().splitlines()]) == 30
    tmux.run("resize-window", "-t", tmux.name, "-x", "120", "-y", "35")
    tmux.wait(lambda: _footer_width(tmux) >= 115, "the footer to follow the resize to 120 columns")


def test_quit_prints_the_resume_hint(start_pi) -> None:
    start, server, home = start_pi
    server.enqueue(Turn([Text("Hello there.")]))
    tmux = start()
    tmux.text("hi")
    tmux.keys("Enter")
    tmux.wait_text("Hello there.")
    tmux.keys("C-d")
    tmux.wait(tmux.exited, "pi to exit")
    files = list((home / "sessions").rglob("*.jsonl")) if (home / "sessions").exists() else list(home.rglob("*.jsonl"))
    assert files
    hint = [line for line in tmux.screen().splitlines() if "To resume this session: pi --session " in line]
    assert hint, tmux.screen()
    session_id = hint[0].split("--session ")[1].strip()
    assert session_id and session_id in files[0].read_text()
