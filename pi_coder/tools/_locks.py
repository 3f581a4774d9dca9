"""Per-file mutation locks: writes and edits to the same file run one after another."""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

__all__ = ["file_mutation_lock"]

# One table per event loop: asyncio locks must not be shared between loops.
_tables: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, tuple[asyncio.Lock, int]]] = (
    weakref.WeakKeyDictionary()
)


def _key(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except OSError:
        return str(path)


@asynccontextmanager
async def file_mutation_lock(path: Path) -> AsyncIterator[None]:
    """Hold the mutation lock of ``path`` (resolved through symlinks) for the block."""
    loop = asyncio.get_running_loop()
    table = _tables.setdefault(loop, {})
    key = _key(path)
    lock, users = table.get(key, (None, 0))
    if lock is None:
        lock = asyncio.Lock()
    table[key] = (lock, users + 1)
    try:
        async with lock:
            yield
    finally:
        lock, users = table[key]
        if users <= 1:
            del table[key]
        else:
            table[key] = (lock, users - 1)
