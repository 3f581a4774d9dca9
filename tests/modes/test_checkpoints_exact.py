"""Checkpoints restore exactly: paths that change type, permission bits, two undos outside the
folder, restores after a conversation-only restore, and undos that must say they restored nothing.
Real ``pi`` processes (``-p``, ``-c --undo``, RPC) against the scripted model server."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server)


def _bash(pi: PiHome, command: str, call_id: str = "c1") -> None:
    pi.server.enqueue(Turn([ToolCall("bash", {"command": command}, id=call_id)]), Turn([Text("Done.")]))


def _ok(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply.get("success"), reply
    return reply.get("data") or {}


def _tree(folder: Path) -> dict[str, str]:
    """Every path below ``folder``: file content, ``->target`` for symlinks, ``/`` for folders."""
    out: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            out[rel] = "->" + os.readlink(path)
        elif path.is_dir():
            out[rel] = "/"
        else:
            out[rel] = path.read_text()
    return out


def _perm(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_paths_that_change_type_are_restored(pi: PiHome) -> None:
    """file->folder, folder->file, file->symlink and symlink->file in one prompt: undo puts all back,
    and checkpoints keep working in the next session."""
    project = pi.project
    (project / "notes").write_text("a file\n")
    (project / "data").mkdir()
    (project / "data" / "inner.txt").write_text("inside\n")
    (project / "target.txt").write_text("target\n")
    (project / "link").write_text("was a file\n")
    os.symlink("target.txt", project / "was_link")
    before = _tree(project)
    _bash(
        pi,
        "rm notes && mkdir notes && echo a > notes/a.txt && rm -r data && echo now a file > data"
        " && rm link && ln -s target.txt link && rm was_link && echo plain > was_link",
    )
    run = pi.run("-p", "change types")
    assert run.returncode == 0, run.stderr
    assert "appears as both" not in run.stderr
    assert (project / "notes" / "a.txt").is_file() and (project / "link").is_symlink()

    undo = pi.run("-c", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert _tree(project) == before

    # Checkpoints are still on here: a later session's change is undone as well.
    _bash(pi, "rm -r notes && mkdir -p notes/deeper && echo b > notes/deeper/b.txt")
    assert pi.run("-c", "-p", "again").returncode == 0
    assert (project / "notes" / "deeper" / "b.txt").is_file()
    again = pi.run("-c", "--undo")
    assert again.returncode == 0, again.stderr
    assert _tree(project) == before


def test_undo_says_why_when_the_files_were_not_recorded(pi: PiHome) -> None:
    """Over checkpoints.max_files nothing is snapshotted: the undo says so and exits 1, files untouched."""
    (pi.home / "settings.toml").write_text("[checkpoints]\nmax_files = 3\n")
    for i in range(5):
        (pi.project / f"f{i}.txt").write_text(f"{i}\n")
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "new.txt", "content": "new\n"}, id="c1")]), Turn([Text("Done.")])
    )
    assert pi.run("-p", "P1").returncode == 0
    undo = pi.run("-c", "--undo")
    assert undo.returncode == 1
    assert "Undid" not in undo.stdout
    assert "more than 3 files" in undo.stderr and "nothing was restored" in undo.stderr
    assert (pi.project / "new.txt").read_text() == "new\n"


def test_two_undos_restore_outside_changes_of_both_prompts(pi: PiHome, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "x.txt").write_text("old\n")
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "echo one > in.txt"}, id="c1")]),
        Turn([Text("Done.")]),
        Turn(
            [ToolCall("bash", {"command": "echo changed > ../out/x.txt && echo new > ../out/y.txt"}, id="c2")]
        ),
        Turn([Text("Done.")]),
    )
    assert pi.run("-p", "P1").returncode == 0
    assert pi.run("-c", "-p", "P2").returncode == 0
    assert (out / "x.txt").read_text() == "changed\n" and (out / "y.txt").exists()
    first = pi.run("-c", "--undo")
    assert first.returncode == 0, first.stderr
    second = pi.run("-c", "--undo")
    assert second.returncode == 0, second.stderr
    assert (out / "x.txt").read_text() == "old\n"
    assert not (out / "y.txt").exists()
    assert not (pi.project / "in.txt").exists()


def test_permission_bits_come_back(pi: PiHome, tmp_path: Path) -> None:
    """A deleted 0600 file, an outside 0600 file and an outside +x script keep their bits."""
    secret = pi.project / "private.txt"
    secret.write_text("mine\n")
    secret.chmod(0o600)
    script = pi.project / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    (out / "conf").write_text("conf\n")
    (out / "conf").chmod(0o600)
    (out / "tool.sh").write_text("#!/bin/sh\necho v1\n")
    (out / "tool.sh").chmod(0o750)
    pi.server.enqueue(
        Turn(
            [
                ToolCall("bash", {"command": "rm private.txt run.sh"}, id="c1"),
                ToolCall("write", {"path": str(out / "conf"), "content": "changed\n"}, id="c2"),
                ToolCall("bash", {"command": f"rm {out / 'tool.sh'}"}, id="c3"),
            ]
        ),
        Turn([Text("Done.")]),
    )
    assert pi.run("-p", "change modes").returncode == 0
    assert not secret.exists() and not (out / "tool.sh").exists()
    undo = pi.run("-c", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert secret.read_text() == "mine\n" and _perm(secret) == 0o600
    assert _perm(script) == 0o755
    assert (out / "conf").read_text() == "conf\n" and _perm(out / "conf") == 0o600
    assert (out / "tool.sh").read_text() == "#!/bin/sh\necho v1\n" and _perm(out / "tool.sh") == 0o750


def _three_prompts(pi: PiHome, rpc: RpcClient) -> list[str]:
    pi.server.enqueue(
        *(
            turn
            for n in (1, 2, 3)
            for turn in (
                Turn([ToolCall("write", {"path": f"p{n}.txt", "content": f"{n}\n"}, id=f"c{n}")]),
                Turn([Text("Done.")]),
            )
        )
    )
    for n in (1, 2, 3):
        _ok(rpc.call({"type": "prompt", "message": f"P{n}"}))
        rpc.event("agent_settled", timeout=30)
    return [c["id"] for c in _ok(rpc.call({"type": "get_checkpoints"}))["checkpoints"]]


def test_both_after_conversation_only_removes_later_files(pi: PiHome) -> None:
    """ "Conversation only" back to P2, then "conversation and code" back to P1: p2/p3 files go too."""
    rpc = RpcClient(pi)
    try:
        cp1, cp2, _cp3 = _three_prompts(pi, rpc)
        _ok(rpc.call({"type": "restore_checkpoint", "checkpointId": cp2, "mode": "conversation"}))
        assert (pi.project / "p3.txt").exists()  # conversation only: files stay
        both = _ok(rpc.call({"type": "restore_checkpoint", "checkpointId": cp1, "mode": "both"}, timeout=30))
        assert both["applied"]
        assert not (pi.project / "p1.txt").exists()
        assert not (pi.project / "p2.txt").exists()
        assert not (pi.project / "p3.txt").exists()
    finally:
        rpc.close()


def test_redo_after_a_tree_restore_names_what_it_redid(pi: PiHome) -> None:
    rpc = RpcClient(pi)
    try:
        cp1, _cp2, _cp3 = _three_prompts(pi, rpc)
        _ok(rpc.call({"type": "restore_checkpoint", "checkpointId": cp1, "mode": "code"}, timeout=30))
        assert not (pi.project / "p1.txt").exists()
        redo = _ok(rpc.call({"type": "redo"}, timeout=30))
        assert redo["message"] == "Reversed the last restore; restored 3 files"
        assert (pi.project / "p3.txt").exists()
        _ok(rpc.call({"type": "undo"}, timeout=30))
        undo_redo = _ok(rpc.call({"type": "redo"}, timeout=30))
        assert undo_redo["message"].startswith("Redid the last undone prompt")
    finally:
        rpc.close()


def test_store_is_private_and_leaves_secrets_out(pi: PiHome) -> None:
    """The store is 0700 (and checkpoints/ above it); a .env is not in any snapshot."""
    (pi.project / ".env").write_text("TOKEN=abc\n")
    (pi.project / ".env").chmod(0o600)
    (pi.project / "a.txt").write_text("a\n")
    _bash(pi, "echo b > a.txt && echo TOKEN=changed > .env")
    assert pi.run("-p", "go").returncode == 0
    (cwd_file,) = [p for p in pi.home.rglob("cwd") if p.parent.parent.name == "checkpoints"]
    store = cwd_file.parent
    assert _perm(store) == 0o700 and _perm(store.parent) == 0o700
    (session,) = pi.session_files()
    (checkpoint,) = [
        e for e in map(json.loads, session.read_text().splitlines()) if e["type"] == "checkpoint"
    ]
    assert checkpoint["files"] == ["a.txt"]
    blobs = b"".join(p.read_bytes() for p in store.rglob("*") if p.is_file())
    assert b"TOKEN" not in blobs  # git objects are compressed: a plain search finds no stray copy
    undo = pi.run("-c", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert (pi.project / ".env").read_text() == "TOKEN=changed\n"  # left alone, not restored


def test_keep_secrets_setting_keeps_them_with_their_mode(pi: PiHome) -> None:
    (pi.home / "settings.toml").write_text("[checkpoints]\nkeep_secrets = true\n")
    env = pi.project / ".env"
    env.write_text("TOKEN=abc\n")
    env.chmod(0o600)
    _bash(pi, "rm .env")
    assert pi.run("-p", "go").returncode == 0
    assert pi.run("-c", "--undo").returncode == 0
    assert env.read_text() == "TOKEN=abc\n" and _perm(env) == 0o600
