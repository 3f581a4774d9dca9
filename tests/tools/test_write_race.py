"""A symlink swapped between the permission check and the write never redirects the write."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from pathlib import Path

from pi_coder.errors import ToolError
from pi_coder.permissions.policy import Policy
from pi_coder.permissions.rules import RuleSet
from pi_coder.tools._paths import pin
from pi_coder.tools.edit import create_edit_tool
from pi_coder.tools.write import create_write_tool

ROUNDS = 300


def _flipper(project: Path, outside: Path, stop: threading.Event) -> None:
    """Swap ``sub`` between a real folder and a symlink to ``outside`` until told to stop. A write
    may recreate ``sub`` in the gap (the tools create missing folders): that copy is dropped."""
    sub, hold = project / "sub", project / "sub-hold"
    while not stop.is_set():
        os.rename(sub, hold)
        try:
            os.symlink(outside, sub)
            os.unlink(sub)
        except FileExistsError:
            shutil.rmtree(sub, ignore_errors=True)
        while True:
            try:
                os.rename(hold, sub)
                break
            except OSError:
                if sub.is_symlink():
                    sub.unlink()
                else:
                    shutil.rmtree(sub, ignore_errors=True)


async def _race(project: Path, outside: Path, kind: str) -> tuple[int, int]:
    policy = Policy("accept-edits", RuleSet(), str(project))
    tool = create_write_tool(str(project)) if kind == "write" else create_edit_tool(str(project))
    stop = threading.Event()
    flipper = threading.Thread(target=_flipper, args=(project, outside, stop), daemon=True)
    flipper.start()
    allowed = refused = 0
    try:
        for i in range(ROUNDS):
            name = f"sub/f{i % 5}.txt"
            args = {"path": name, "content": "new"} if kind == "write" else {"path": name, "edits": [{"oldText": "old", "newText": "new"}]}
            decision = policy.decide(kind, args)
            if decision.action != "allow":
                continue  # judged while sub was the symlink: outside, so it would ask
            allowed += 1
            assert decision.target is not None
            pin(f"c{i}", decision.target)  # what builtin:permissions does for an allowed call
            try:
                await tool.execute(f"c{i}", tool.parameters.model_validate(args), None, None)
            except (ToolError, FileNotFoundError, NotADirectoryError):
                refused += 1
    finally:
        stop.set()
        flipper.join()
    return allowed, refused


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "sub").mkdir(parents=True)
    outside.mkdir()
    for i in range(5):
        (project / "sub" / f"f{i}.txt").write_text("old")
        (outside / f"f{i}.txt").write_text("old")
    return project, outside


def test_write_never_lands_outside_while_a_symlink_flips(tmp_path: Path) -> None:
    project, outside = _setup(tmp_path)
    allowed, _ = asyncio.run(_race(project, outside, "write"))
    assert allowed > 0
    assert sorted(p.name for p in outside.iterdir()) == [f"f{i}.txt" for i in range(5)]
    assert all((outside / f"f{i}.txt").read_text() == "old" for i in range(5))


def test_edit_never_lands_outside_while_a_symlink_flips(tmp_path: Path) -> None:
    project, outside = _setup(tmp_path)
    allowed, _ = asyncio.run(_race(project, outside, "edit"))
    assert allowed > 0
    assert sorted(p.name for p in outside.iterdir()) == [f"f{i}.txt" for i in range(5)]
    assert all((outside / f"f{i}.txt").read_text() == "old" for i in range(5))


def test_a_symlinked_last_component_is_not_followed_after_the_check(tmp_path: Path) -> None:
    project, outside = _setup(tmp_path)
    policy = Policy("accept-edits", RuleSet(), str(project))
    decision = policy.decide("write", {"path": "sub/f0.txt", "content": "x"})
    assert decision.action == "allow" and decision.target is not None
    (project / "sub" / "f0.txt").unlink()
    (project / "sub" / "f0.txt").symlink_to(outside / "f0.txt")  # swapped after the check
    pin("late", decision.target)
    tool = create_write_tool(str(project))
    try:
        params = tool.parameters.model_validate({"path": "sub/f0.txt", "content": "x"})
        asyncio.run(tool.execute("late", params, None, None))
    except ToolError as exc:
        assert "symbolic link appeared" in str(exc)
    assert (outside / "f0.txt").read_text() == "old"
