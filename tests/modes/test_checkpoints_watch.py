"""Checkpoints with the folder watched (the first snapshot of a process scans, later ones look at
what the watcher saw): hand edits between prompts still belong to no prompt, in one RPC process and
across ``pi -p`` processes. Real ``pi`` processes and real git; tests/checkpoints has the watcher's
own cases (overflow, folders moved, fallbacks)."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server)
    (home.project / "src").mkdir()
    for i in range(20):
        (home.project / "src" / f"m{i}.py").write_text(f"{i}\n")
    return home


def _bash(pi: PiHome, command: str) -> None:
    pi.server.enqueue(Turn([ToolCall("bash", {"command": command}, id="b1")]), Turn([Text("Done.")]))


def test_rpc_hand_edit_between_two_prompts_is_restored_exactly(pi: PiHome) -> None:
    src = pi.project / "src"
    rpc = RpcClient(pi)
    try:
        _bash(pi, "echo agent one > src/m1.py")
        assert rpc.call({"type": "prompt", "message": "one"})["success"]
        rpc.event("agent_settled", timeout=60)
        # By hand while pi is idle: an edit with a mode change, a new file, a new folder, a deletion.
        (src / "m1.py").write_text("by hand\n")
        (src / "m1.py").chmod(0o600)
        (src / "hand.txt").write_text("hand\n")
        (pi.project / "fresh").mkdir()
        (pi.project / "fresh" / "f.txt").write_text("f\n")
        (src / "m2.py").unlink()
        _bash(pi, "echo agent two > src/m1.py && echo new > fresh/g.txt && rm src/m3.py")
        assert rpc.call({"type": "prompt", "message": "two"})["success"]
        rpc.event("agent_settled", timeout=60)
        checkpoints = rpc.call({"type": "get_checkpoints"}, timeout=60)
        assert checkpoints["success"], checkpoints
        undo = rpc.call({"type": "undo"}, timeout=60)
        assert undo["success"], undo
    finally:
        rpc.close()
    assert (src / "m1.py").read_text() == "by hand\n"
    assert stat.S_IMODE((src / "m1.py").stat().st_mode) == 0o600
    assert (src / "hand.txt").read_text() == "hand\n"
    assert (pi.project / "fresh" / "f.txt").read_text() == "f\n"
    assert not (pi.project / "fresh" / "g.txt").exists()
    assert not (src / "m2.py").exists()  # deleted by hand: not the second prompt's doing
    assert (src / "m3.py").read_text() == "3\n"


def test_print_runs_hand_edit_between_processes_is_restored_exactly(pi: PiHome) -> None:
    """``pi -p`` scans at start (started ahead, before its event loop gets to it): the base of its
    watcher includes what changed since the last process."""
    src = pi.project / "src"
    _bash(pi, "echo agent one > src/m1.py")
    assert pi.run("-p", "one", timeout=120).returncode == 0
    (src / "m1.py").write_text("by hand\n")
    (src / "m4.py").unlink()
    _bash(pi, "echo agent two > src/m1.py && echo agent two > src/m5.py")
    run = pi.run("-c", "-p", "two", timeout=120)
    assert run.returncode == 0, run.stderr
    undo = pi.run("-c", "--undo", timeout=120)
    assert undo.returncode == 0, undo.stderr
    assert (src / "m1.py").read_text() == "by hand\n"
    assert (src / "m5.py").read_text() == "5\n"
    assert not (src / "m4.py").exists()
    # Then the first prompt: its file back as it was; the hand deletion belongs to no prompt.
    again = pi.run("-c", "--undo", timeout=120)
    assert again.returncode == 0, again.stderr
    assert (src / "m1.py").read_text() == "1\n"
    assert not (src / "m4.py").exists()
