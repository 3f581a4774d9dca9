"""``api_key = "!command"`` that never finishes: given up after its limit, and nothing of it keeps running."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from pi_coder.ai.keys import clear_command_cache, resolve_config_value

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def _alive(pid: int) -> bool:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def test_command_that_times_out_leaves_no_process(tmp_path: Path) -> None:
    """The shell and the child it started are both killed when the key command times out."""
    pidfile = tmp_path / "child.pid"
    command = f"!sleep 300 & echo $! > {pidfile}; echo $$ >> {pidfile}; wait"
    clear_command_cache()
    started = time.monotonic()
    assert resolve_config_value(command, timeout=3.0) is None  # time for the shell to write both pids under load
    assert time.monotonic() - started < 60  # not the 300 s of the child
    pids = [int(line) for line in pidfile.read_text().split()]
    assert len(pids) == 2
    try:
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in pids), "a process of the key command survived"
    finally:
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        clear_command_cache()


def test_command_that_finishes_gives_its_output() -> None:
    """A normal key command still works (stdout, stripped)."""
    clear_command_cache()
    try:
        assert resolve_config_value("!printf ' key-from-command \\n'", timeout=10) == "key-from-command"
    finally:
        clear_command_cache()
