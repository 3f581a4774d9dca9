"""Overhead of an empty PreToolUse hook per tool call.

Usage: ``python bench/hooks.py [--runs N] [--calls N]``

1. In-process: ``run_hooks`` with one hook that reads nothing and exits 0 (``true``, run by
   ``bash -c`` like every hook) and with a Python hook that reads its stdin JSON
   (``python3 -c 'import json,sys; json.load(sys.stdin)'``): median wall time per call.
2. End to end: ``pi -p`` against ``tests/support/sse_server.py`` with ``--calls`` bash tool
   calls (``true``), with and without an empty ``PreToolUse`` hook in ``~/.claude/settings.json``;
   the difference of the medians divided by the number of calls.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_coder.hooks.config import HookCommand  # noqa: E402
from pi_coder.hooks.process import run_hooks  # noqa: E402
from tests.modes.pirun import PI, PiHome  # noqa: E402
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn  # noqa: E402

PY_HOOK = "python3 -c 'import json,sys; json.load(sys.stdin)'"


def in_process(command: str, runs: int) -> float:
    hook = HookCommand(event="PreToolUse", matcher="", command=command, timeout=60, source="bench")
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "true"}}

    async def go() -> list[float]:
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            await run_hooks([hook], payload, cwd=".", env={"PATH": "/usr/bin:/bin"})
            times.append(time.perf_counter() - started)
        return times

    return statistics.median(asyncio.run(go())[1:]) * 1000


def end_to_end(home: PiHome, server: SSEServer, calls: int, hooked: bool, user_home: Path) -> float:
    settings = user_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}
    settings.write_text(json.dumps({"hooks": hooks}) if hooked else "{}")
    server.requests.clear()
    server.enqueue(
        *[Turn([ToolCall("bash", {"command": "true"}, id=f"c{i}")]) for i in range(calls)], Turn([Text("ok")])
    )
    started = time.perf_counter()
    proc = subprocess.run(
        [*PI, "-p", "go", "--no-session"],
        cwd=home.project,
        env=home.env(HOME=str(user_home)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0 or len(server.requests) != calls + 1:
        raise RuntimeError(f"pi -p failed ({proc.returncode}): {proc.stderr[-500:]!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    print(
        f"in-process, median of 50: empty hook {in_process('true', 51):.1f} ms, Python hook {in_process(PY_HOOK, 51):.1f} ms"
    )
    with SSEServer() as server, tempfile.TemporaryDirectory() as tmp:
        home = PiHome(Path(tmp), server, "anthropic")
        user_home = Path(tmp) / "user"
        end_to_end(home, server, args.calls, True, user_home)  # warm caches
        results: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.runs):
            for hooked in (False, True):
                results[hooked].append(end_to_end(home, server, args.calls, hooked, user_home))
        base, hooked = statistics.median(results[False]), statistics.median(results[True])
        print(
            f"pi -p with {args.calls} bash calls, median of {args.runs}: without hook {base * 1000:.0f} ms, "
            f"with an empty PreToolUse hook {hooked * 1000:.0f} ms: {(hooked - base) / args.calls * 1000:.1f} ms per call"
        )


if __name__ == "__main__":
    main()
