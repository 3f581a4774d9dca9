"""The SDK examples (examples/sdk/), each run as a program against the scripted server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, all_text
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

EXAMPLES = Path(__file__).parents[2] / "examples" / "sdk"


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, "anthropic")


def run_example(pi: PiHome, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), "local/test-model", *args],
        cwd=pi.project,
        env=pi.env(),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_one_shot(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("A folder with two files.")], usage={"input": 12, "output": 5}))
    run = run_example(pi, "01_one_shot.py")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "A folder with two files.\n"
    assert "(12 tokens in, 5 out" in run.stderr
    assert pi.session_files() == []  # in memory


def test_streaming_printer(pi: PiHome) -> None:
    (pi.project / "a.txt").write_text("x")
    pi.server.enqueue(Turn([ToolCall("read", {"path": "a.txt"})]), Turn([Text("a.txt holds an x.")]))
    run = run_example(pi, "02_streaming.py", "What is in a.txt?")
    assert run.returncode == 0, run.stderr
    assert "[read {'path': 'a.txt'}]\n[read done]\n" in run.stdout
    assert run.stdout.rstrip().endswith("a.txt holds an x.")
    assert "4 messages" in run.stderr  # prompt, tool call, tool result, answer


def test_program_answers_permission_questions(pi: PiHome) -> None:
    (pi.project / "data").mkdir()
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "touch notes.md"})]),
        Turn([ToolCall("bash", {"command": "rm -rf data"})]),
        Turn([Text("Made notes.md; removing data was refused.")]),
    )
    run = run_example(pi, "03_permissions.py", "Make notes.md and remove data")
    assert run.returncode == 0, run.stderr
    assert "allowed: Allow bash: touch notes.md?" in run.stdout
    assert "denied: Allow bash: rm -rf data?" in run.stdout
    assert (pi.project / "notes.md").exists()
    assert (pi.project / "data").is_dir()
    last = pi.server.requests[-1].json
    assert "The user denied this tool call. Reason: not allowed by the approver program" in all_text(last)
    assert run.stdout.rstrip().endswith("Made notes.md; removing data was refused.")
