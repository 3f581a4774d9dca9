"""``pi checkpoints gc`` in a real process: snapshots past ``checkpoints.max_age_days`` go, recent ones stay."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _shadow_git(pi: PiHome) -> Path:
    (cwd_file,) = [p for p in pi.home.rglob("cwd") if p.parent.parent.name == "checkpoints"]
    return cwd_file.parent / "git"


def _git(
    git_dir: Path, *args: str, stdin: bytes | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "GIT_DIR": str(git_dir),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", *args], env=env, input=stdin, capture_output=True, check=check)


def _refs(git_dir: Path) -> list[str]:
    out = _git(git_dir, "for-each-ref", "--format=%(refname)", "refs/pi/").stdout.decode()
    return out.split()


def test_gc_prunes_old_snapshots_and_keeps_recent_ones(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server)
    (pi.project / "a.txt").write_text("original\n")
    sse_server.enqueue(
        Turn([Text("Writing."), ToolCall("write", {"path": "a.txt", "content": "changed\n"}, id="w1")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "change it")
    assert run.returncode == 0, run.stderr
    git_dir = _shadow_git(pi)
    recent = _refs(git_dir)
    assert recent, "the run stored snapshots"

    # An old snapshot (40 days) of content that no recent snapshot holds.
    blob = (
        _git(git_dir, "hash-object", "-w", "--stdin", stdin=b"only in the old snapshot\n")
        .stdout.decode()
        .strip()
    )
    tree = _git(git_dir, "mktree", stdin=f"100644 blob {blob}\told.txt\n".encode()).stdout.decode().strip()
    commit = _git(git_dir, "commit-tree", tree, "-m", "old").stdout.decode().strip()
    old_ref = f"refs/pi/s/{int(time.time()) - 40 * 86400}-{commit}"
    _git(git_dir, "update-ref", old_ref, commit)
    assert _git(git_dir, "cat-file", "-e", blob, check=False).returncode == 0

    gc = pi.run("checkpoints", "gc")
    assert gc.returncode == 0, gc.stderr
    assert gc.stdout.startswith("Pruned 1 snapshots;"), gc.stdout
    assert sorted(_refs(git_dir)) == sorted(recent)
    assert _git(git_dir, "cat-file", "-e", blob, check=False).returncode != 0  # its objects are gone

    # The recent snapshots still restore: undo works after the gc.
    undo = pi.run("-c", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert (pi.project / "a.txt").read_text() == "original\n"


def test_gc_usage_and_empty_store(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server)
    bad = pi.run("checkpoints", "prune")
    assert bad.returncode == 2 and bad.stderr.startswith("Usage: pi checkpoints gc")
    empty = pi.run("checkpoints", "gc")
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout.strip() == "No checkpoints stored"


def test_gc_removes_the_stores_of_folders_that_no_longer_exist(tmp_path: Path, sse_server: SSEServer) -> None:
    """Before: "cannot run git" for each such store, and the store stayed."""
    pi = PiHome(tmp_path, sse_server)
    (pi.project / "a.txt").write_text("original\n")
    sse_server.enqueue(
        Turn([ToolCall("write", {"path": "a.txt", "content": "changed\n"}, id="w1")]), Turn([Text("Done.")])
    )
    assert pi.run("-p", "change it").returncode == 0
    store = _shadow_git(pi).parent
    shutil.rmtree(pi.project)
    gc = pi.run("checkpoints", "gc", cwd=tmp_path)
    assert gc.returncode == 0, gc.stderr
    assert gc.stderr == ""
    assert "removed the stores of 1 folders that no longer exist" in gc.stdout
    assert not store.exists()
