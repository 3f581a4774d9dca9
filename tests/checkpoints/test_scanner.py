"""Snapshots through the scanner: partial ones with the watcher, full scans whenever it cannot be
trusted, and restores exact either way. Real git, real inotify, real files."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from pi_coder.checkpoints.scanner import Scanner
from pi_coder.checkpoints.shadow_git import ShadowRepo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only")

MB = 1 << 20


def _folder(tmp_path: Path) -> Path:
    top = tmp_path / "w"
    for i in range(30):
        (top / f"d{i % 3}").mkdir(parents=True, exist_ok=True)
        (top / f"d{i % 3}" / f"f{i}.txt").write_text(f"{i}\n")
    (top / ".gitignore").write_text("build/\n")
    return top


def _run(tmp_path: Path, scenario: Callable[[Path, ShadowRepo], Awaitable[None]]) -> None:
    top = _folder(tmp_path)
    repo = ShadowRepo(top, tmp_path / "store")
    asyncio.run(scenario(top, repo))


def _watched(scanner: Scanner) -> None:
    if not scanner.watching:
        pytest.skip(f"cannot watch here: {scanner.unwatched}")


@linux_only
def test_nothing_changed_needs_no_scan_and_changes_are_looked_at_alone(tmp_path: Path) -> None:
    async def scenario(top: Path, repo: ShadowRepo) -> None:
        scanner = Scanner(repo)
        first = await scanner.take(MB)
        _watched(scanner)
        assert (scanner.full_scans, scanner.partial_scans) == (1, 0)
        assert (await scanner.take(MB)).commit == first.commit
        (top / "d1" / "f1.txt").write_text("changed\n")
        (top / "d2" / "f2.txt").unlink()
        (top / "new" / "deep").mkdir(parents=True)
        (top / "new" / "deep" / "n.txt").write_text("n\n")
        (top / "build").mkdir()
        (top / "build" / "out.o").write_text("ignored\n")
        second = await scanner.take(MB)
        assert (scanner.full_scans, scanner.partial_scans) == (1, 2)
        assert sorted(await repo.changed_paths(first.commit, second.commit)) == [
            "d1/f1.txt",
            "d2/f2.txt",
            "new/deep/n.txt",
        ]
        # A full scan from scratch (another process) sees the same folder.
        again = await ShadowRepo(top, repo.dir.parent).snapshot(MB)
        assert again.commit == second.commit

    _run(tmp_path, scenario)


@linux_only
def test_a_hand_edit_between_two_snapshots_is_restored_exactly(tmp_path: Path) -> None:
    async def scenario(top: Path, repo: ShadowRepo) -> None:
        scanner = Scanner(repo)
        await scanner.take(MB)
        _watched(scanner)
        target = top / "d0" / "f0.txt"
        target.write_text("by the agent\n")  # prompt 1
        after_one = await scanner.take(MB)
        target.write_text("by hand\n")  # between the prompts
        os.chmod(target, 0o600)
        before_two = await scanner.take(MB)  # prompt 2's undo point
        target.write_text("by the agent again\n")
        (top / "d0" / "extra.txt").write_text("x\n")
        after_two = await scanner.take(MB)
        assert sorted(await repo.changed_paths(before_two.commit, after_two.commit)) == [
            "d0/extra.txt",
            "d0/f0.txt",
        ]
        assert before_two.commit != after_one.commit
        await repo.restore(before_two.commit, ["d0/f0.txt", "d0/extra.txt"])
        assert target.read_text() == "by hand\n"
        assert target.stat().st_mode & 0o777 == 0o600
        assert not (top / "d0" / "extra.txt").exists()

    _run(tmp_path, scenario)


@linux_only
def test_an_overflow_falls_back_to_a_full_scan_and_restores_stay_exact(tmp_path: Path) -> None:
    try:
        queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    except (OSError, ValueError):
        pytest.skip("the inotify queue size is not readable")
    if queued > 100_000:
        pytest.skip(f"the inotify queue holds {queued} events: too many to overflow in a test")

    async def scenario(top: Path, repo: ShadowRepo) -> None:
        scanner = Scanner(repo)
        first = await scanner.take(MB)
        _watched(scanner)
        (top / "d1" / "f4.txt").write_text("hand edit lost in the flood\n")
        (top / "d2" / "f5.txt").unlink()
        one, two = top / "d0" / "f0.txt", top / "d0" / "f3.txt"
        for _ in range(queued // 2 + 100):
            os.utime(one)
            os.utime(two)
        second = await scanner.take(MB)
        assert scanner.full_scans == 2, "an overflow must mean a full scan"
        assert scanner.watching
        assert sorted(await repo.changed_paths(first.commit, second.commit)) == ["d1/f4.txt", "d2/f5.txt"]
        (top / "d1" / "f4.txt").write_text("agent\n")
        (top / "d2" / "f5.txt").write_text("agent\n")
        third = await scanner.take(MB)
        assert scanner.partial_scans == 1  # watching again
        await repo.restore(second.commit, await repo.changed_paths(second.commit, third.commit))
        assert (top / "d1" / "f4.txt").read_text() == "hand edit lost in the flood\n"
        assert not (top / "d2" / "f5.txt").exists()

    _run(tmp_path, scenario)


@linux_only
def test_a_snapshot_by_another_process_means_a_full_scan(tmp_path: Path) -> None:
    async def scenario(top: Path, repo: ShadowRepo) -> None:
        scanner = Scanner(repo)
        await scanner.take(MB)
        _watched(scanner)
        other = ShadowRepo(top, repo.dir.parent)
        (top / "d1" / "f1.txt").write_text("other\n")
        await other.snapshot(MB)  # the store's last snapshot is no longer this process's
        await scanner.take(MB)
        assert (scanner.full_scans, scanner.partial_scans) == (2, 0)
        await scanner.take(MB)
        assert scanner.partial_scans == 1

    _run(tmp_path, scenario)


@linux_only
def test_a_cancelled_snapshot_leaves_no_base_behind(tmp_path: Path) -> None:
    async def scenario(top: Path, repo: ShadowRepo) -> None:
        scanner = Scanner(repo)
        first = await scanner.take(MB)
        _watched(scanner)
        for i in range(400):
            (top / f"many{i}.txt").write_text(f"{i}\n")
        task = asyncio.get_running_loop().create_task(scanner.take(MB))
        await asyncio.sleep(0)  # it drained the watcher and started git
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        second = await scanner.take(MB)
        assert scanner.full_scans == 2
        assert len(await repo.changed_paths(first.commit, second.commit)) == 400

    _run(tmp_path, scenario)


def test_without_a_watcher_every_snapshot_is_a_full_scan(tmp_path: Path) -> None:
    async def scenario(top: Path, repo: ShadowRepo) -> None:
        scanner = Scanner(repo, watch=False)
        first = await scanner.take(MB)
        (top / "d1" / "f1.txt").write_text("changed\n")
        (top / "d2" / "f2.txt").write_text("changed too\n")
        hinted = await scanner.take(MB, only=["d1/f1.txt"])  # a write/edit-only run's paths
        full = await scanner.take(MB)
        assert (scanner.full_scans, scanner.partial_scans) == (3, 0)
        assert await repo.changed_paths(first.commit, hinted.commit) == ["d1/f1.txt"]
        assert await repo.changed_paths(hinted.commit, full.commit) == ["d2/f2.txt"]

    _run(tmp_path, scenario)


@linux_only
def test_a_scan_started_ahead_is_the_base_and_changes_after_it_are_kept(tmp_path: Path) -> None:
    async def scenario(top: Path, repo: ShadowRepo) -> None:
        await repo.set_excludes([".env"])
        first = await repo.snapshot(MB)
        (top / "d1" / "f1.txt").write_text("before the start\n")
        scanner = Scanner(repo)
        scanner.prestart()
        _watched(scanner)
        assert scanner._pending is not None
        (top / "d2" / "f2.txt").write_text("after the start\n")  # the watcher saw it
        base = await scanner.take(MB)
        assert "d1/f1.txt" in await repo.changed_paths(first.commit, base.commit)
        later = await scanner.take(MB)
        assert scanner.partial_scans == 1
        assert (await repo.entries(later.commit, ["d2/f2.txt"]))["d2/f2.txt"] != (
            await repo.entries(first.commit, ["d2/f2.txt"])
        )["d2/f2.txt"]
        scanner.stop()

    _run(tmp_path, scenario)
