"""Checkpoints end to end: a scripted model changes files (tools and bash), ``pi -c --undo`` restores them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server)


def _script(pi: PiHome, outside: Path | None = None) -> None:
    calls = [
        ToolCall("write", {"path": "new.txt", "content": "created\n"}, id="c1"),
        ToolCall("edit", {"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "ALPHA"}]}, id="c2"),
        ToolCall(
            "bash",
            {
                "command": "sed -i 's/beta/BETA/' b.txt && rm gone.txt && mkdir -p sub && echo x > sub/made.txt"
            },
            id="c3",
        ),
    ]
    if outside is not None:
        calls.append(ToolCall("write", {"path": str(outside), "content": "changed outside\n"}, id="c4"))
    pi.server.enqueue(Turn([Text("Working."), *calls]), Turn([Text("Done.")]))


def _files(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(folder).parts
    }


def _seed(project: Path) -> None:
    (project / "a.txt").write_text("alpha\n")
    (project / "b.txt").write_text("beta\n")
    (project / "gone.txt").write_text("delete me\n")
    (project / ".gitignore").write_text("build/\n")
    (project / "build").mkdir()
    (project / "build" / "out.o").write_text("object v1\n")


def _git(project: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=project, capture_output=True, check=True).stdout


def _git_state(project: Path) -> tuple[bytes, ...]:
    index = (project / ".git" / "index").read_bytes()  # before anything git runs here
    return (
        index,
        _git(project, "--no-optional-locks", "status", "--porcelain"),
        _git(project, "stash", "list"),
        _git(project, "branch", "-a"),
        _git(project, "rev-parse", "HEAD"),
        _git(project, "for-each-ref"),
    )


@pytest.mark.parametrize("in_git", [False, True], ids=["plain-folder", "git-repo"])
def test_undo_after_restart_restores_tool_and_bash_changes(pi: PiHome, tmp_path: Path, in_git: bool) -> None:
    """write, edit, sed -i and rm through bash are undone by a new `pi -c --undo`; git state is untouched."""
    project = pi.project
    _seed(project)
    outside = tmp_path / "elsewhere" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text("outside original\n")
    if in_git:
        _git(project, "init", "-q")
        _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "a.txt", ".gitignore")
        _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
        (project / "a.txt").write_text("stashed change\n")
        _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "stash", "-q")
        _git(project, "add", "b.txt")
    before_files = _files(project)
    before_git = _git_state(project) if in_git else None
    _script(pi, outside)

    run = pi.run("-p", "change things")
    assert run.returncode == 0, run.stderr
    assert (project / "new.txt").read_text() == "created\n"
    assert (project / "a.txt").read_text() == "ALPHA\n"
    assert not (project / "gone.txt").exists()
    assert outside.read_text() == "changed outside\n"
    (project / "build" / "out.o").write_text("object v2\n")  # ignored build output, changed later

    (session_file,) = pi.session_files()
    entries = [json.loads(line) for line in session_file.read_text().splitlines()]
    (checkpoint,) = [e for e in entries if e["type"] == "checkpoint"]
    prompt = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "user")
    assert checkpoint["promptId"] == prompt["id"]
    assert set(checkpoint["files"]) == {"new.txt", "a.txt", "b.txt", "gone.txt", "sub/made.txt"}
    assert list(checkpoint["outside"]) == [str(outside.resolve())]

    undo = pi.run("-c", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert undo.stdout.strip() == 'Undid "change things"; restored 6 files'
    expected = dict(before_files, **{"build/out.o": "object v2\n"})
    assert _files(project) == expected
    assert not (project / "sub").exists()
    assert outside.read_text() == "outside original\n"
    if in_git:
        assert _git_state(project) == before_git
    assert not (project / ".git" / "pi-index").exists()

    again = pi.run("-c", "--undo")  # the conversation went back too: nothing earlier to undo
    assert again.returncode == 1
    assert again.stderr.strip() == "Nothing to undo"


def test_hand_edit_after_the_run_blocks_undo_unless_forced(pi: PiHome) -> None:
    """A file changed by hand since the run is listed and left alone; --force overwrites it."""
    _seed(pi.project)
    _script(pi)
    assert pi.run("-p", "change things").returncode == 0
    (pi.project / "a.txt").write_text("my own edit\n")

    refused = pi.run("-c", "--undo")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "Changed by hand since pi saw them (restore not done; --force to overwrite): a.txt"
    )
    assert (pi.project / "a.txt").read_text() == "my own edit\n"
    assert (pi.project / "new.txt").exists()

    forced = pi.run("-c", "--undo", "--force")
    assert forced.returncode == 0, forced.stderr
    assert (pi.project / "a.txt").read_text() == "alpha\n"
    assert not (pi.project / "new.txt").exists()


def test_rpc_get_and_restore_checkpoints_and_redo(pi: PiHome) -> None:
    """RPC lists checkpoints, restores code only, and a second restore of the conversation works."""
    _seed(pi.project)
    _script(pi)
    rpc = RpcClient(pi)
    try:
        assert rpc.call({"type": "prompt", "message": "change things"})["success"]
        rpc.event("agent_settled", timeout=30)
        listing = rpc.call({"type": "get_checkpoints"})
        assert listing["success"], listing
        (cp,) = listing["data"]["checkpoints"]
        assert cp["prompt"] == "change things" and "a.txt" in cp["files"]
        diff = rpc.call({"type": "get_checkpoint_diff", "checkpointId": cp["id"]})
        assert "-alpha\n+ALPHA" in diff["data"]["diff"]

        code = rpc.call({"type": "restore_checkpoint", "checkpointId": cp["id"], "mode": "code"})
        assert code["success"], code
        assert (pi.project / "a.txt").read_text() == "alpha\n"
        state = rpc.call({"type": "get_state"})
        assert state["data"]["messageCount"] >= 3  # the conversation stayed

        both = rpc.call({"type": "restore_checkpoint", "checkpointId": cp["id"], "mode": "conversation"})
        assert both["success"], both
        assert both["data"]["editorText"] == "change things"
        redo = rpc.call({"type": "redo"})
        assert redo["success"], redo
        assert (pi.project / "a.txt").read_text() == "ALPHA\n"
    finally:
        rpc.close()
