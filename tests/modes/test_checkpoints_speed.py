"""What checkpoints cost a prompt: a new folder's first snapshot is taken in the background as
soon as RPC (or the TUI) starts, a snapshot of many files is added in batches, and the permission
bits of the last snapshot come from the store's ``last`` file. Real ``pi`` processes and real git;
bench/checkpoints.py has the timings (no timing is asserted here)."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest

from pi_coder.checkpoints.shadow_git import ShadowRepo
from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server)
    for i in range(50):
        (home.project / f"f{i}.txt").write_text(f"{i}\n")
    return home


def _last_files(pi: PiHome) -> list[Path]:
    return [p for p in pi.home.rglob("last") if p.parent.parent.name == "checkpoints"]


def test_rpc_start_snapshots_a_new_folder_before_any_prompt(pi: PiHome) -> None:
    """Before: the first snapshot waited for the first prompt (and its first file-changing call)."""
    rpc = RpcClient(pi)
    try:
        assert rpc.call({"type": "get_state"})["success"]
        deadline = time.monotonic() + 60
        while not _last_files(pi) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _last_files(pi), "no snapshot was taken in the background"
        # The first prompt's undo point builds on it and restores exactly.
        pi.server.enqueue(
            Turn([ToolCall("bash", {"command": "echo changed > f1.txt && rm f2.txt"}, id="b1")]),
            Turn([Text("Done.")]),
        )
        assert rpc.call({"type": "prompt", "message": "change"})["success"]
        rpc.event("agent_settled", timeout=60)
        undo = rpc.call({"type": "undo"}, timeout=60)
        assert undo["success"], undo
    finally:
        rpc.close()
    assert (pi.project / "f1.txt").read_text() == "1\n"
    assert (pi.project / "f2.txt").read_text() == "2\n"


def test_closing_during_the_first_snapshot_leaves_no_git_and_a_usable_store(pi: PiHome) -> None:
    for i in range(3000):
        (pi.project / f"many{i}.txt").write_text(f"{i}\n")
    rpc = RpcClient(pi)
    assert rpc.call({"type": "get_state"})["success"]
    assert rpc.close() == 0
    # The next process finishes (or continues) the first snapshot and records a checkpoint.
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "echo changed > many7.txt"}, id="b1")]), Turn([Text("Done.")])
    )
    run = pi.run("-p", "change", timeout=120)
    assert run.returncode == 0, run.stderr
    undo = pi.run("-c", "--undo", timeout=120)
    assert undo.returncode == 0, undo.stderr
    assert (pi.project / "many7.txt").read_text() == "7\n"


def test_snapshot_of_more_files_than_a_batch_and_perms_across_instances(tmp_path: Path) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    for i in range(2600):  # more than one update-index batch
        (folder / f"n{i}.txt").write_text(f"{i}\n")
    tool = folder / "tool.sh"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o750)

    async def scenario() -> None:
        first = await ShadowRepo(folder, tmp_path / "store").snapshot(1 << 20)
        assert first.added == 2601
        names = await ShadowRepo(folder, tmp_path / "store").changed_paths(None, first.commit)
        assert len(names) == 2601
        # A new instance (as in the next process): perms come from "last"; a change and a restore.
        again = ShadowRepo(folder, tmp_path / "store")
        (folder / "n5.txt").write_text("five\n")
        (folder / "n6.txt").unlink()
        second = await again.snapshot(1 << 20)
        assert second.added == 1
        assert sorted(await again.changed_paths(first.commit, second.commit)) == ["n5.txt", "n6.txt"]
        os.chmod(tool, 0o644)
        tool.write_text("changed\n")
        third = ShadowRepo(folder, tmp_path / "store")
        assert await third.restore(first.commit, ["tool.sh", "n5.txt", "n6.txt"]) == ["n5.txt", "n6.txt", "tool.sh"]

    asyncio.run(scenario())
    assert tool.read_text() == "#!/bin/sh\n"
    assert tool.stat().st_mode & 0o777 == 0o750
    assert (folder / "n6.txt").read_text() == "6\n"


def test_snapshot_of_named_paths_only_looks_at_them_and_keeps_ignore_rules(tmp_path: Path) -> None:
    """A run of only ``write``/``edit`` calls closes with a snapshot of the paths they named."""
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / ".gitignore").write_text("build/\n")
    (folder / "a.txt").write_text("a\n")
    (folder / "b.txt").write_text("b\n")

    async def scenario() -> None:
        repo = ShadowRepo(folder, tmp_path / "store")
        await repo.set_excludes([".env"])
        first = await repo.snapshot(1 << 20)
        (folder / "a.txt").write_text("a2\n")
        (folder / "b.txt").write_text("b2\n")  # changed, but not named: left for the next full scan
        (folder / "build").mkdir()
        (folder / "build" / "out.o").write_text("o\n")
        (folder / ".env").write_text("KEY=1\n")
        (folder / "new" / "deep").mkdir(parents=True)
        (folder / "new" / "deep" / "c.txt").write_text("c\n")
        named = ["a.txt", "build/out.o", ".env", "new/deep/c.txt"]
        second = await ShadowRepo(folder, tmp_path / "store").snapshot(1 << 20, only=named)
        assert sorted(await repo.changed_paths(first.commit, second.commit)) == ["a.txt", "new/deep/c.txt"]
        same = await ShadowRepo(folder, tmp_path / "store").snapshot(1 << 20, only=[])
        assert same.commit == second.commit
        full = await ShadowRepo(folder, tmp_path / "store").snapshot(1 << 20)
        assert await repo.changed_paths(second.commit, full.commit) == ["b.txt"]

    asyncio.run(scenario())


def test_write_only_run_is_undone_exactly(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn(
            [
                ToolCall("write", {"path": "sub/new.txt", "content": "new\n"}, id="w1"),
                ToolCall("edit", {"path": "f3.txt", "edits": [{"oldText": "3", "newText": "three"}]}, id="e1"),
            ]
        ),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "write", timeout=120)
    assert run.returncode == 0, run.stderr
    assert (pi.project / "f3.txt").read_text() == "three\n"
    undo = pi.run("-c", "--undo", timeout=120)
    assert undo.returncode == 0, undo.stderr
    assert (pi.project / "f3.txt").read_text() == "3\n"
    assert not (pi.project / "sub" / "new.txt").exists()
