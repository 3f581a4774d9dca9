"""Cost of checkpoint snapshots: a 10,000-file folder, first snapshot and one with a few changes.

Run: .venv/bin/python bench/checkpoints.py [files]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from pi_coder.core.shadow_git import ShadowRepo


async def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp, "repo")
        for i in range(count):
            folder = work / f"pkg{i // 100:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"mod{i:05d}.py").write_text(f"# module {i}\n" + "x = 1\n" * 20)
        repo = ShadowRepo(work, Path(tmp, "shadow"))
        limit = 10 * 1024 * 1024
        t = time.perf_counter()
        await repo.count_files(50_000)
        counted = time.perf_counter() - t
        t = time.perf_counter()
        await repo.snapshot(limit)
        first = time.perf_counter() - t
        t = time.perf_counter()
        await repo.snapshot(limit)
        unchanged = time.perf_counter() - t
        for i in range(5):
            (work / f"pkg{i:03d}" / f"mod{i * 100:05d}.py").write_text("changed\n")
        (work / "new_file.py").write_text("new\n")
        os.unlink(work / "pkg099" / "mod09999.py") if count >= 10_000 else None
        t = time.perf_counter()
        await repo.snapshot(limit)
        few = time.perf_counter() - t
        print(f"files: {count}")
        print(f"count files (first run only): {counted * 1000:.0f} ms")
        print(f"first snapshot:               {first * 1000:.0f} ms")
        print(f"snapshot, nothing changed:    {unchanged * 1000:.0f} ms")
        print(f"snapshot, 7 files changed:    {few * 1000:.0f} ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
