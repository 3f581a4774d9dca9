"""Sessions under crashes, full disks, concurrent writers and damaged files, with the real ``pi``.

Regression tests for issue 12 ("A crash or a full disk must not lose what the user said or did").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.modes.pirun import PI, PiHome, user_texts
from tests.support.sse_server import SSEServer, Text, Turn

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.fixture
def pi_a(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, "anthropic")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _slow_turn(text: str = "streaming " * 200) -> Turn:
    return Turn([Text(text)], delta_chars=4, delay=0.02)


def _kill_mid_stream(pi: PiHome, prompt: str, *args: str) -> None:
    """Start ``pi -p prompt``, wait until the answer streams, SIGKILL it."""
    proc = subprocess.Popen(
        [*PI, *args, "-p", prompt],
        cwd=pi.project,
        env=pi.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        count = len(pi.server.requests)
        pi.server.wait_for_requests(count + 1, timeout=60)
        time.sleep(0.3)  # some of the answer is on the wire
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)


def test_sigkill_while_the_first_answer_streams_keeps_the_prompt(pi_a: PiHome) -> None:
    """10 runs killed mid-stream: each file holds the prompt, and ``-c`` sends it again."""
    runs = 10
    for index in range(runs):
        pi_a.server.enqueue(_slow_turn())
        _kill_mid_stream(pi_a, f"first prompt {index}")
        files = pi_a.session_files()
        assert len(files) == index + 1, "no session file for the killed run"
        newest = max(files, key=lambda p: p.stat().st_mtime)
        lines = _lines(newest)
        assert lines[0]["type"] == "session"
        assert [line["message"]["content"][0]["text"] for line in lines if line["type"] == "message"] == [
            f"first prompt {index}"
        ]
    pi_a.server.enqueue(Turn([Text("continued")]))
    result = pi_a.run("-c", "-p", "go on")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "continued"
    assert user_texts(pi_a.server.requests[-1].json) == [f"first prompt {runs - 1}", "go on"]


def test_no_session_still_writes_nothing(pi_a: PiHome) -> None:
    pi_a.server.enqueue(_slow_turn())
    _kill_mid_stream(pi_a, "secret", "--no-session")
    assert pi_a.session_files() == []


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 64 KiB tmpfs (needs root and mount permission; skipped otherwise)."""
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mount_point)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def _fill(folder: Path, leave: int) -> Path:
    """Fill ``folder``'s filesystem until about ``leave`` bytes are free."""
    filler = folder / "filler"
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    with open(filler, "wb") as handle:
        handle.write(b"x" * max(0, free - leave))
    return filler


def test_full_disk_prints_the_answer_and_keeps_the_chain(pi_a: PiHome, small_disk: Path) -> None:
    sessions = small_disk / "sessions"
    pi_a.server.enqueue(Turn([Text("first answer")]))
    first = pi_a.run("--session-dir", str(sessions), "-p", "first question")
    assert first.returncode == 0, first.stderr
    filler = _fill(small_disk, 8192)
    big = "long answer " * 3000  # 36 KB: cannot be saved
    pi_a.server.enqueue(Turn([Text(big)]))
    full = pi_a.run("--session-dir", str(sessions), "-c", "-p", "second question")
    assert full.returncode == 0, full.stderr
    assert full.stdout.strip() == big.strip()  # the answer is printed all the same
    warnings = [line for line in full.stderr.splitlines() if "could not be saved" in line]
    assert len(warnings) == 1, full.stderr
    assert "Traceback" not in full.stderr
    filler.unlink()
    pi_a.server.enqueue(Turn([Text("third answer")]))
    third = pi_a.run("--session-dir", str(sessions), "-c", "-p", "third question")
    assert third.returncode == 0, third.stderr
    assert "Warning" not in third.stderr
    # Every turn that reached the file is still on the path: the chain was never broken.
    assert user_texts(pi_a.server.requests[-1].json) == ["first question", "second question", "third question"]


def test_full_disk_on_the_first_save_recovers_when_space_is_freed(pi_a: PiHome, small_disk: Path) -> None:
    sessions = small_disk / "sessions"
    sessions.mkdir()
    filler = _fill(small_disk, 0)
    pi_a.server.enqueue(Turn([Text("answer one")]))
    full = pi_a.run("--session-dir", str(sessions), "-p", "question one " * 400)
    assert full.returncode == 0 and full.stdout.strip() == "answer one", full.stderr
    assert sum("could not be saved" in line for line in full.stderr.splitlines()) == 1
    assert list(sessions.iterdir()) == []  # nothing half-written
    filler.unlink()
    pi_a.server.enqueue(Turn([Text("answer two")]))
    ok = pi_a.run("--session-dir", str(sessions), "-p", "question two")
    assert ok.returncode == 0 and ok.stderr == "", ok.stderr
    assert len(list(sessions.glob("*.jsonl"))) == 1
