"""Print mode with broken or stuck extensions (issue 27): load failures stop the run as in Pi,
the answer is printed before ``session_shutdown``, and stuck handlers cannot keep ``pi`` alive."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.extensions.conftest import write_ext
from tests.modes.pirun import PI, PiHome
from tests.support.sse_server import Text, Turn


def _wait_for(path: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} never appeared")
        time.sleep(0.05)


def _start(pi: PiHome, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*PI, *args], cwd=pi.project, env=pi.env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json", "-p"]])
def test_failed_load_exits_1_with_the_ne_hint(pi: PiHome, mode: list[str]) -> None:
    bad = write_ext(pi.project, "bad", "def extension(pi):\n    raise RuntimeError('boom')\n")
    run = pi.run("-e", str(bad), *mode, "hi")
    assert run.returncode == 1
    assert f'Error: Failed to load extension "{bad}": boom' in run.stderr
    assert 'Hint: Start without extensions using "pi -ne".' in run.stderr
    assert not pi.server.requests


def test_answer_is_printed_before_a_stuck_shutdown_handler(pi: PiHome) -> None:
    marker = pi.project / "shutting"
    ext = write_ext(
        pi.project,
        "slow",
        f"""
        import time

        def extension(pi):
            @pi.on("session_shutdown")
            def bye(event, ctx):
                open({str(marker)!r}, "w").close()
                time.sleep(600)
        """,
    )
    pi.server.enqueue(Turn([Text("the answer")]))
    proc = _start(pi, "-e", str(ext), "-p", "q")
    try:
        _wait_for(marker)
        proc.send_signal(signal.SIGTERM)
        out, _err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert out.decode().strip() == "the answer"


def test_one_ctrl_c_ends_a_hung_async_before_agent_start(pi: PiHome) -> None:
    marker = pi.project / "hung"
    ext = write_ext(
        pi.project,
        "hang",
        f"""
        import asyncio

        def extension(pi):
            @pi.on("before_agent_start")
            async def wait(event, ctx):
                open({str(marker)!r}, "w").close()
                await asyncio.sleep(3600)
        """,
    )
    proc = _start(pi, "-e", str(ext), "-p", "q")
    try:
        _wait_for(marker)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert not pi.server.requests


@pytest.mark.parametrize("signals", [[signal.SIGTERM], [signal.SIGINT, signal.SIGINT]], ids=["term", "int-int"])
def test_a_blocking_sync_handler_cannot_keep_pi_alive(pi: PiHome, signals: list[int]) -> None:
    marker = pi.project / "blocked"
    ext = write_ext(
        pi.project,
        "block",
        f"""
        import time

        def extension(pi):
            @pi.on("turn_end")
            def stuck(event, ctx):
                open({str(marker)!r}, "w").close()
                time.sleep(600)
        """,
    )
    pi.server.enqueue(Turn([Text("said")]))
    proc = _start(pi, "-e", str(ext), "-p", "q")
    try:
        _wait_for(marker)
        for sig in signals:
            proc.send_signal(sig)
            time.sleep(0.3)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signals[0]
    (session,) = pi.session_files()
    roles = [json.loads(line).get("message", {}).get("role") for line in session.read_text().splitlines()]
    assert "user" in roles and "assistant" in roles
