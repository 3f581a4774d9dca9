"""Holding the event loop at the moment a child process exists but its starter does not have it yet.

asyncio connects a new process's pipes over several turns of the loop after the fork; a
cancellation or abort landing there is the case ``pi_coder/_spawn.py`` handles. These helpers make
that moment deterministic: the child writes its pid and its background child's pid to a file, and
the loop is held from the first turn the child exists until both pids are there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

BACKGROUND_SCRIPT = 'sleep 300 & echo $! >> "$1"; echo $$ >> "$1"; wait'
"""A ``bash -c`` script (``$1``: the pids file) that puts a child in the background and waits."""


def children() -> set[int]:
    """This process's child processes (Linux: /proc/<pid>/task/<tid>/children)."""
    found: set[int] = set()
    for tid in os.listdir(f"/proc/{os.getpid()}/task"):
        with contextlib.suppress(OSError):
            found.update(int(p) for p in Path(f"/proc/{os.getpid()}/task/{tid}/children").read_text().split())
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1].split()[0] != "Z"  # a zombie is dead too
    except OSError:
        return False


async def while_it_starts(
    run: Coroutine[Any, Any, T], pids: Path, act: Callable[[asyncio.Task[T]], None]
) -> asyncio.Task[T]:
    """Run ``run`` in a task and call ``act(task)`` at the moment its child has started (it exists
    and has written ``pids``) but ``run`` is still starting it: this callback, checking once a
    turn, holds the loop from the first turn the child exists until the child has written ``pids``."""
    before = children()
    task = asyncio.ensure_future(run)
    loop = asyncio.get_running_loop()

    def check() -> None:
        if task.done():
            return
        if not children() - before:
            loop.call_soon(check)
            return
        deadline = time.monotonic() + 30
        while (not pids.exists() or len(pids.read_text().split()) < 2) and time.monotonic() < deadline:
            time.sleep(0.01)  # the loop is held on purpose: the starter must not get further
        act(task)

    loop.call_soon(check)
    return task


def assert_all_die(pids: Path) -> None:
    """Every pid recorded in ``pids`` is gone within 10 s."""
    recorded = [int(p) for p in pids.read_text().split()]
    deadline = time.monotonic() + 10
    while any(alive(p) for p in recorded) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in recorded if alive(p)], "left running"


def kill_recorded(pids: Path) -> None:
    for pid in (int(p) for p in pids.read_text().split()) if pids.exists() else ():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def assert_cancel_while_starting_kills_all(run: Callable[[], Coroutine[Any, Any, object]], pids: Path, what: str) -> None:
    """Cancel ``run()`` at the moment its child has started: the cancellation ends it within 30 s
    and every process it recorded in ``pids`` (the child, its background child) dies."""

    async def go() -> None:
        task = await while_it_starts(run(), pids, lambda task: task.cancel())
        done, _ = await asyncio.wait({task}, timeout=30)
        assert task in done, f"cancelling {what} did not end it"
        assert task.cancelled()

    try:
        asyncio.run(go())
        assert_all_die(pids)
    finally:
        kill_recorded(pids)
