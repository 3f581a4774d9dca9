"""Cost of checkpoint snapshots: a 10,000-file folder, first snapshot and one with a few changes.

Run: .venv/bin/python bench/checkpoints.py [files] [rounds]   (prints the median of the rounds)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pi_coder.checkpoints.shadow_git import ShadowRepo


async def one_round(count: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp, "repo")
        for i in range(count):
            folder = work / f"pkg{i // 100:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"mod{i:05d}.py").write_text(f"# module {i}\n" + "x = 1\n" * 20)
        repo = ShadowRepo(work, Path(tmp, "shadow"))
        limit = 10 * 1024 * 1024
        out: dict[str, float] = {}
        t = time.perf_counter()
        await repo.count_files(50_000)
        out["count files (first run only)"] = time.perf_counter() - t
        t = time.perf_counter()
        await repo.snapshot(limit)
        out["first snapshot"] = time.perf_counter() - t
        t = time.perf_counter()
        await repo.snapshot(limit)
        out["snapshot, nothing changed"] = time.perf_counter() - t
        for i in range(5):
            (work / f"pkg{i:03d}" / f"mod{i * 100:05d}.py").write_text("changed\n")
        (work / "new_file.py").write_text("new\n")
        if count >= 10_000:
            os.unlink(work / "pkg099" / "mod09999.py")
        t = time.perf_counter()
        await repo.snapshot(limit)
        out["snapshot, 7 files changed"] = time.perf_counter() - t
        return out


async def main(count: int, rounds: int) -> None:
    results = [await one_round(count) for _ in range(rounds)]
    print(f"files: {count}, rounds: {rounds} (median, min-max)")
    for key in results[0]:
        values = [r[key] * 1000 for r in results]
        print(f"{key + ':':32}{statistics.median(values):6.0f} ms  ({min(values):.0f}-{max(values):.0f})")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    asyncio.run(main(args[0] if args else 10_000, args[1] if len(args) > 1 else 5))
