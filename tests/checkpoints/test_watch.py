"""The inotify watcher of checkpoints: real folders, real inotify (Linux only)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pi_coder.checkpoints import watch
from pi_coder.checkpoints.ignore_rules import DirRules, parse_rules

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only")


def _start(folder: Path, skip: tuple[str, ...] = ()) -> watch.FolderWatch:
    started = watch.start(os.path.realpath(folder), skip=skip)
    if isinstance(started, str):
        pytest.skip(f"cannot watch here: {started}")
    return started


def _tree(tmp_path: Path) -> Path:
    top = tmp_path / "w"
    (top / "src" / "pkg").mkdir(parents=True)
    (top / "src" / "pkg" / "a.py").write_text("a\n")
    (top / "notes.txt").write_text("n\n")
    (top / ".gitignore").write_text("node_modules/\n/build\n*.egg-info\n")
    (top / "node_modules" / "dep").mkdir(parents=True)
    (top / "build").mkdir()
    (top / "src" / "build").mkdir()  # "/build" is anchored to the top: this one is watched
    (top / "x.egg-info").mkdir()
    (top / ".git" / "objects").mkdir(parents=True)
    return top


def _watched(w: watch.FolderWatch) -> set[str]:
    return set(w._paths.values())


def test_watches_every_folder_but_ignored_ones_and_git(tmp_path: Path) -> None:
    w = _start(_tree(tmp_path))
    try:
        assert _watched(w) == {"", "src", "src/pkg", "src/build"}
        assert w.drain() == set()
    finally:
        w.stop()


def test_drain_names_changed_paths_and_new_folders_are_watched(tmp_path: Path) -> None:
    top = _tree(tmp_path)
    w = _start(top)
    try:
        (top / "src" / "pkg" / "a.py").write_text("changed\n")
        (top / "notes.txt").unlink()
        (top / "new.txt").write_text("new\n")
        os.chmod(top / ".gitignore", 0o600)
        (top / "fresh" / "deep").mkdir(parents=True)
        (top / "fresh" / "deep" / "f.txt").write_text("f\n")
        (top / "node_modules" / "dep" / "x.js").write_text("ignored\n")
        assert w.drain() is None  # the .gitignore changed (chmod): which files count may differ
        (top / "fresh" / "deep" / "g.txt").write_text("g\n")
        (top / "src" / "pkg" / "a.py").write_text("again\n")
        (top / "fresh2" / "deep").mkdir(parents=True)
        assert w.drain() == {"fresh/deep/g.txt", "src/pkg/a.py", "fresh2"}
        assert {"fresh", "fresh/deep", "fresh2", "fresh2/deep"} <= _watched(w)
        (top / "fresh2" / "deep" / "h.txt").write_text("h\n")  # watched since the last drain
        assert w.drain() == {"fresh2/deep/h.txt"}
        assert w.drain() == set()
    finally:
        w.stop()


def test_a_folder_moved_is_named_at_both_places_and_watched_at_the_new_one(tmp_path: Path) -> None:
    top = _tree(tmp_path)
    w = _start(top)
    try:
        os.rename(top / "src", top / "lib")
        (top / "lib" / "pkg" / "b.py").write_text("b\n")
        moved = w.drain()
        assert moved is not None and {"src", "lib"} <= moved  # git looks below both
        assert all(
            path.split("/")[0] in ("src", "lib") for path in moved
        )  # (b.py may be named by its old place)
        assert "src/pkg" not in _watched(w) and "lib/pkg" in _watched(w)
        (top / "lib" / "pkg" / "c.py").write_text("c\n")
        assert w.drain() == {"lib/pkg/c.py"}
        os.rename(top / "lib", tmp_path / "outside")
        assert w.drain() == {"lib"}
        (tmp_path / "outside" / "pkg" / "d.py").write_text("d\n")
        assert w.drain() == set()
    finally:
        w.stop()


def test_queue_overflow_means_scan_everything_then_watching_goes_on(tmp_path: Path) -> None:
    top = _tree(tmp_path)
    try:
        queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    except (OSError, ValueError):
        pytest.skip("the inotify queue size is not readable")
    if queued > 100_000:
        pytest.skip(f"the inotify queue holds {queued} events: too many to overflow in a test")
    w = _start(top)
    try:
        first, second = top / "one.txt", top / "two.txt"
        first.write_text("1")
        second.write_text("2")
        for _ in range(queued // 2 + 100):  # alternating: the kernel merges only repeats in a row
            os.utime(first)
            os.utime(second)
        assert w.drain() is None
        assert w.alive
        (top / "notes.txt").write_text("after\n")
        assert w.drain() == {"notes.txt"}
    finally:
        w.stop()


def test_cannot_watch_more_folders_than_allowed(tmp_path: Path) -> None:
    top = _tree(tmp_path)
    reason = watch.start(os.path.realpath(top), max_dirs=2)
    assert isinstance(reason, str) and "more than 2 folders" in reason


def test_a_negation_keeps_every_folder_below_watched(tmp_path: Path) -> None:
    top = _tree(tmp_path)
    (top / "src" / ".gitignore").write_text("!build/\n")
    (top / "src" / "node_modules").mkdir()
    w = _start(top)
    try:
        assert {"src/node_modules", "src/build"} <= _watched(w)
        assert "node_modules" not in _watched(w)
    finally:
        w.stop()


def test_skipped_folders_and_stopping(tmp_path: Path) -> None:
    top = _tree(tmp_path)
    w = _start(top, skip=(str(top / "src"),))
    assert "src" not in _watched(w)
    w.stop("done")
    assert w.drain() is None and w.reason == "done"


def test_the_top_removed_stops_the_watcher(tmp_path: Path) -> None:
    top = _tree(tmp_path)
    w = _start(top)
    os.rename(top, tmp_path / "elsewhere")
    assert w.drain() is None
    assert w.reason is not None and "moved or removed" in w.reason


def test_ignore_rules_only_claim_what_git_certainly_ignores() -> None:
    rules = DirRules().below("", "# c\nnode_modules/\n/dist\ndocs/_build\n*.egg-info\n[Bb]in\n\\#x\n")
    assert rules.ignores("node_modules") and rules.ignores("a/b/node_modules")
    assert rules.ignores("dist") and not rules.ignores("a/dist")
    assert rules.ignores("docs/_build") and not rules.ignores("x/docs/_build")
    assert rules.ignores("pkg.egg-info")
    assert not rules.ignores("bin") and not rules.ignores("Bin")  # classes: not read, so watched
    nested = rules.below("a", "out\n")
    assert nested.ignores("a/out") and nested.ignores("a/b/out") and not nested.ignores("b/out")
    assert parse_rules(["x", "!y"]) is None
    unsure = rules.below("a", "out\n!keep\n")
    assert not unsure.ignores("a/node_modules") and not unsure.below("a/b", "z\n").ignores("a/b/z")


def test_folders_without_subfolders_are_watched_unlisted_and_their_gitignore_still_counts(
    tmp_path: Path,
) -> None:
    top = _tree(tmp_path)
    (top / "leaf").mkdir()
    (top / "leaf" / ".gitignore").write_text("out/\n")
    (top / "other").mkdir()
    (top / "other" / ".gitignore").write_text("!node_modules/\n")
    w = _start(top)
    try:
        assert {"leaf", "other"} <= _watched(w)
        (top / "leaf" / "out").mkdir()
        (top / "leaf" / "keep").mkdir()
        (top / "other" / "node_modules").mkdir()  # ignored at the top, brought back here
        (top / "node_modules" / "dep" / "x.js").write_text("x\n")
        assert w.drain() == {"leaf/out", "leaf/keep", "other/node_modules"}
        assert {"leaf/keep", "other/node_modules"} <= _watched(w) and "leaf/out" not in _watched(w)
        (top / "other" / "node_modules" / "y.js").write_text("y\n")
        (top / "leaf" / "out" / "o.txt").write_text("o\n")
        assert w.drain() == {"other/node_modules/y.js"}
    finally:
        w.stop()
