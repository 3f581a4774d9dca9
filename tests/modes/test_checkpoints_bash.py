"""Checkpoints for shell changes: ``!`` commands as undo points, bash writes outside the folder,
and ``/redo`` after a restart. Real ``pi`` processes against the scripted model server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server)
    (home.project / "a.txt").write_text("alpha\n")
    return home


def _ok(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply.get("success"), reply
    return reply.get("data") or {}


def test_user_bash_is_undone_and_redone_after_a_restart(pi: PiHome) -> None:
    """`!cmd` over RPC: /undo restores its files and gives `!cmd` back; quit, `pi -c`, /redo redoes it."""
    project = pi.project
    command = "echo made > made.txt && sed -i s/alpha/ALPHA/ a.txt"
    rpc = RpcClient(pi)
    try:
        ran = _ok(rpc.call({"type": "bash", "command": command}, timeout=30))
        assert ran["exitCode"] == 0
        assert (project / "made.txt").read_text() == "made\n"
        undone = _ok(rpc.call({"type": "undo"}, timeout=30))
        assert undone["editorText"] == "!" + command
        assert not (project / "made.txt").exists()
        assert (project / "a.txt").read_text() == "alpha\n"
    finally:
        assert rpc.close() == 0

    rpc = RpcClient(pi, "-c")
    try:
        _ok(rpc.call({"type": "redo"}, timeout=30))
        assert (project / "made.txt").read_text() == "made\n"
        assert (project / "a.txt").read_text() == "ALPHA\n"
        again = rpc.call({"type": "redo"}, timeout=30)
        assert not again["success"] and again["error"] == "Nothing to redo"
    finally:
        rpc.close()


def test_prompt_undo_quit_continue_redo(pi: PiHome) -> None:
    """The /undo, quit, `pi -c`, /redo sequence of a prompt's run: files and conversation come back."""
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "new.txt", "content": "created\n"}, id="c1")]), Turn([Text("Done.")])
    )
    assert pi.run("-p", "make a file").returncode == 0
    undo = pi.run("-c", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert not (pi.project / "new.txt").exists()

    rpc = RpcClient(pi, "-c")
    try:
        before = _ok(rpc.call({"type": "get_state"}))["messageCount"]
        _ok(rpc.call({"type": "redo"}, timeout=30))
        assert (pi.project / "new.txt").read_text() == "created\n"
        after = _ok(rpc.call({"type": "get_state"}))["messageCount"]
        assert after > before  # the prompt and its answer are back on the branch
    finally:
        rpc.close()


def test_a_new_prompt_ends_redo_after_a_restart(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "new.txt", "content": "x\n"}, id="c1")]),
        Turn([Text("Done.")]),
        Turn([Text("Hello.")]),
    )
    assert pi.run("-p", "make a file").returncode == 0
    assert pi.run("-c", "--undo").returncode == 0
    assert pi.run("-c", "-p", "say hello").returncode == 0
    rpc = RpcClient(pi, "-c")
    try:
        reply = rpc.call({"type": "redo"}, timeout=30)
        assert not reply["success"] and reply["error"] == "Nothing to redo"
    finally:
        rpc.close()
    assert not (pi.project / "new.txt").exists()


def test_bash_writes_outside_the_folder_are_undone(pi: PiHome, tmp_path: Path) -> None:
    """Redirections, sed -i, rm and cp naming paths outside the folder are snapshotted first."""
    out = tmp_path / "outside"
    (out / "dir").mkdir(parents=True)
    (out / "kept.txt").write_text("old\n")
    (out / "gone.txt").write_text("remove me\n")
    command = (
        "echo new > ../outside/created.txt && sed -i 's/old/NEW/' "
        f"{out / 'kept.txt'} && rm ../outside/gone.txt && cp a.txt ../outside/dir/"
    )
    pi.server.enqueue(Turn([ToolCall("bash", {"command": command}, id="c1")]), Turn([Text("Done.")]))
    run = pi.run("-p", "change outside")
    assert run.returncode == 0, run.stderr
    assert (out / "created.txt").exists() and (out / "dir" / "a.txt").exists()
    assert not (out / "gone.txt").exists() and (out / "kept.txt").read_text() == "NEW\n"

    (session,) = pi.session_files()
    (checkpoint,) = [e for e in map(json.loads, session.read_text().splitlines()) if e["type"] == "checkpoint"]
    assert set(checkpoint["outside"]) == {
        str(p.resolve()) for p in (out / "created.txt", out / "kept.txt", out / "gone.txt", out / "dir" / "a.txt")
    }

    undo = pi.run("-c", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert (out / "kept.txt").read_text() == "old\n"
    assert (out / "gone.txt").read_text() == "remove me\n"
    assert not (out / "created.txt").exists() and not (out / "dir" / "a.txt").exists()
    assert (out / "dir").is_dir()  # the folder that was there stays
