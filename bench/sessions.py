"""Session store benchmark: load + context rebuild of a 5,000-entry and a 100 MB session.

Usage: ``python bench/sessions.py [--runs N] [--big-mb MB] [--sessions N] [--keep DIR]``

Each figure comes from a fresh subprocess (imports done before measuring): the median wall
and CPU time (CPU time is what to compare on a busy machine) of ``SessionStore.open(path)`` followed by ``build_session_context()``; the rise of the
peak RSS (``VmHWM``) over the post-import baseline for one load + rebuild; and the tracemalloc peak
of one load + rebuild (Python allocations only). Finally ``list_sessions`` over a folder of
300 sessions (120 entries each) is timed in process. Targets: 5,000 entries under 100 ms; 100 MB
under 2 s with memory under 3 times the file size.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pi_coder.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from pi_coder.session import SessionStore, list_sessions

_CHILD = r"""
import gc, json, resource, sys, time
from pi_coder.session import SessionStore, list_sessions
path, mode, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "time":
    SessionStore.open(path).build_session_context()  # warm the page cache and validators
    gc.collect()
    times, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        store = SessionStore.open(path)
        context = store.build_session_context()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        result = {"messages": len(context.messages), "entries": len(store.get_entries())}
        del store, context
        gc.collect()
    result["times"], result["cpu"] = times, cpu
elif mode == "rss":
    def peak_rss():
        # VmHWM belongs to this process image; ru_maxrss would start at the forking parent's peak.
        try:
            with open("/proc/self/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    base = peak_rss()
    store = SessionStore.open(path)
    context = store.build_session_context()
    result = {"rss_rise": peak_rss() - base}
else:
    import tracemalloc
    tracemalloc.start()
    store = SessionStore.open(path)
    context = store.build_session_context()
    result = {"peak": tracemalloc.get_traced_memory()[1]}
print(json.dumps(result))
"""


def _turn(rng: random.Random, index: int, output_size: int) -> list[object]:
    call_id = f"toolu_{index:06d}{rng.randrange(16**8):08x}"
    path = f"src/module_{index % 97}/file_{index}.py"
    body = "".join(
        f"{n:5d}\tdef function_{n}(value):  # {rng.random():.6f}\n" for n in range(max(1, output_size // 48))
    )
    return [
        UserMessage(content=f"Please look at {path} and fix the failing test number {index}."),
        AssistantMessage(
            content=[
                TextContent(text=f"I'll read {path} first to understand the failure. " * 3),
                ToolCall(id=call_id, name="read", arguments={"path": path, "offset": 1, "limit": 200}),
            ],
            api="anthropic-messages",
            provider="anthropic",
            model="claude-sonnet-4-5",
            usage=Usage(input=1200 + index, output=80, cache_read=900, total_tokens=2180 + index),
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id=call_id, tool_name="read", content=[TextContent(text=body)]),
    ]


def generate(
    path: Path, *, entries: int | None = None, size_bytes: int | None = None, output_size: int
) -> None:
    """Write a linear session at ``path`` through the store (as pi_coder itself would)."""
    rng = random.Random(7)
    store = SessionStore.create("/home/user/project", path.parent)
    store.append_model_change("anthropic", "claude-sonnet-4-5")
    store.append_thinking_level_change("medium")
    written = 2
    turn = 0
    while True:
        for message in _turn(rng, turn, output_size):
            store.append_message(message)
            written += 1
        turn += 1
        if entries is not None and written >= entries:
            break
        if size_bytes is not None and turn % 50 == 0 and os.path.getsize(store.session_file) >= size_bytes:
            break
    assert store.session_file is not None
    os.replace(store.session_file, path)


def _child(path: Path, mode: str, runs: int = 1) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), mode, str(runs)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def measure(path: Path, runs: int) -> dict[str, float]:
    """Timing, RSS rise and tracemalloc peak, each from its own subprocess."""
    return {**_child(path, "time", runs), **_child(path, "rss"), **_child(path, "tracemalloc")}


def report(label: str, path: Path, result: dict[str, float], target_s: float) -> None:
    size = path.stat().st_size
    median = statistics.median(result["times"])
    print(
        f"{label}: {result['entries']:,} entries, {size / 1e6:.1f} MB, {result['messages']:,} messages | "
        f"load+rebuild median {median * 1000:.1f} ms wall, {statistics.median(result['cpu']) * 1000:.1f} ms CPU "
        f"(target {target_s * 1000:.0f} ms) [wall min {min(result['times']) * 1000:.1f}, "
        f"max {max(result['times']) * 1000:.1f}] | "
        f"tracemalloc peak {result['peak'] / 1e6:.1f} MB ({result['peak'] / size:.2f}x file), "
        f"peak RSS rise {result['rss_rise'] / 1e6:.1f} MB ({result['rss_rise'] / size:.2f}x file)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--big-mb", type=float, default=100.0)
    parser.add_argument("--sessions", type=int, default=300, help="sessions for the listing benchmark")
    parser.add_argument("--keep", type=Path, default=None, help="write the generated files here")
    args = parser.parse_args()
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="pi-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)

    small = workdir / "small.jsonl"
    big = workdir / "big.jsonl"
    start = time.perf_counter()
    generate(small, entries=5000, output_size=300)
    print(f"generated {small.name} in {time.perf_counter() - start:.1f} s")
    report("5,000 entries", small, measure(small, args.runs), 0.100)

    start = time.perf_counter()
    generate(big, size_bytes=int(args.big_mb * 1e6), output_size=4000)
    print(f"generated {big.name} in {time.perf_counter() - start:.1f} s")
    report(f"{args.big_mb:.0f} MB", big, measure(big, max(3, args.runs // 2)), 2.0)

    listing = workdir / "listing"
    start = time.perf_counter()
    for index in range(args.sessions):
        generate(listing / f"s{index}.jsonl", entries=120, output_size=2000)
    size = sum(file.stat().st_size for file in listing.iterdir())
    print(f"generated {args.sessions} sessions ({size / 1e6:.1f} MB) in {time.perf_counter() - start:.1f} s")
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        infos = list_sessions("/home/user/project", listing)
        times.append(time.perf_counter() - start)
    assert len(infos) == args.sessions
    print(f"list_sessions over {args.sessions} sessions: median {statistics.median(times) * 1000:.1f} ms")
    if args.keep is None:
        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
