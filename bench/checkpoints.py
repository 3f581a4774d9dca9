"""What checkpoints add to a prompt, as the user waits for it: checkpoints on and off side by side
in one run, on folders of 10,000 small files.

Usage: ``python bench/checkpoints.py [--files N] [--rounds R] [--rpc-prompts K] [--model-ms MS]``

Each side ("on", "off") has its own configuration home and its own copy of the project folder (a
change made by one side must not be a hand edit for the other). The scripted model
(``tests/support/sse_server.py``) asks for one ``bash`` call per prompt, then answers. The call
either changes nothing (``true``) or changes 7 files (5 edited, 1 created, 1 deleted).

- ``pi -c -p``: a fresh process per prompt, the sides alternating, R rounds. Whole processes are
  timed (start-up, the snapshots and the wait for the checkpoint entry at exit included); CPU is
  pi's plus that of the processes it waited for (git, bash). "first prompt, new store" is a
  prompt in a folder whose store was just deleted (the first snapshot of all files); "to request"
  is when the model's first request arrived, from the process start: the first snapshot must not
  delay it.
- RPC: first, ``--rpc-fresh`` times per side, a new process on a deleted store prompted as soon
  as it starts ("first prompt, new store": the warm-up's first snapshot of all files runs while
  the prompt is sent; "to request" is from sending the prompt). Then one ``pi --mode rpc`` per
  side for the rest of the run, K prompts per case, the sides alternating; a prompt is timed from
  sending it to ``agent_settled``, and the next one is sent at once (so a checkpoint entry still
  being written delays it). CPU per prompt from ``/proc/<pid>/stat`` (pi and the children it
  waited for).

``--model-ms`` delays the model's first answer of each prompt (0: an instant model, the worst case
for checkpoints: nothing hides their work). Figures are medians; "added" is on minus off, measured
in the same run because the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.sse_server import SSEServer, Text, ToolCall, Turn  # noqa: E402

GOALS = {"nothing changed": 0.030, "7 files changed": 0.060}
Sample = tuple[float, float, float]
"""(wall seconds, CPU seconds, seconds to the first model request or NaN)."""


def _pi() -> list[str]:
    script = Path(sys.executable).with_name("pi")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pi_coder"]


def _home(root: Path, server: SSEServer, enabled: bool) -> Path:
    home = root / ("home-on" if enabled else "home-off")
    home.mkdir()
    (home / "models.toml").write_text(
        "[providers.local]\n"
        'api = "anthropic-messages"\n'
        f'base_url = "{server.anthropic_base_url}"\n'
        'api_key = "none"\n'
        'models = [{ id = "test-model", name = "Test Model", context_window = 32768, max_tokens = 4096 }]\n'
    )
    (home / "settings.toml").write_text(
        'default_provider = "local"\ndefault_model = "test-model"\n'
        f"[checkpoints]\nenabled = {'true' if enabled else 'false'}\n"
    )
    return home


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PI_CODER_HOME"] = str(home)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _seed(project: Path, count: int) -> None:
    for i in range(count):
        folder = project / f"pkg{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(f"# module {i}\n" + "x = 1\n" * 20)


def _enqueue(server: SSEServer, command: str, delay: float) -> None:
    server.enqueue(
        Turn([ToolCall("bash", {"command": command}, id="b1")], delay=delay), Turn([Text("Done.")])
    )


def _prompt(project: Path, home: Path, server: SSEServer, command: str, delay: float) -> Sample:
    _enqueue(server, command, delay)
    seen = len(server.requests)
    start = time.monotonic()
    with subprocess.Popen(
        [*_pi(), "-c", "-p", "go"],
        cwd=project,
        env=_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stderr is not None
        err = proc.stderr.read()
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"pi failed: {err.decode(errors='replace').strip()}")
    first = server.requests[seen].received_at - start if len(server.requests) > seen else float("nan")
    return elapsed, usage.ru_utime + usage.ru_stime, first


def _change_seven(round_no: int, side: str) -> str:
    edits = " && ".join(f"echo {side}{round_no} > pkg{i:03d}/mod{i * 100:05d}.py" for i in range(5))
    return f"{edits} && echo new > new_{side}{round_no}.py && rm -f pkg099/mod{9900 + round_no:05d}.py"


class _Rpc:
    """``pi --mode rpc`` for one side, prompted one prompt at a time."""

    def __init__(self, project: Path, home: Path) -> None:
        self.proc = subprocess.Popen(
            [*_pi(), "--mode", "rpc"],
            cwd=project,
            env=_env(home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self._id = 0

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(json.loads(raw))
        self.lines.put(None)

    def _until(self, match: Any) -> dict[str, Any]:
        while True:
            line = self.lines.get(timeout=120)
            if line is None:
                raise SystemExit("pi --mode rpc ended")
            if match(line):
                return line

    def call(self, command: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        ident = f"b{self._id}"
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"id": ident, **command}).encode() + b"\n")
        self.proc.stdin.flush()
        reply = self._until(lambda line: line.get("type") == "response" and line.get("id") == ident)
        if not reply.get("success"):
            raise SystemExit(f"rpc {command['type']} failed: {reply}")
        return reply

    def prompt(self) -> float:
        start = time.monotonic()
        self.call({"type": "prompt", "message": "go"})
        self._until(lambda line: line.get("type") == "agent_settled")
        return time.monotonic() - start

    def first_prompt(self, server: SSEServer) -> Sample:
        """A prompt sent as soon as the process runs: (wall to settled, NaN, wall to the model request)."""
        seen = len(server.requests)
        start = time.monotonic()
        self.prompt()
        first = server.requests[seen].received_at - start if len(server.requests) > seen else float("nan")
        return time.monotonic() - start, float("nan"), first

    def cpu(self) -> float:
        """CPU seconds of pi and of the children it waited for, so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
        return ticks / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)


def _print_runs(
    args: argparse.Namespace, server: SSEServer, root: Path, delay: float
) -> dict[str, dict[bool, list[Sample]]]:
    times: dict[str, dict[bool, list[Sample]]] = {}
    projects = {on: root / ("print-on" if on else "print-off") for on in (True, False)}
    homes = {on: _home(root / "print", server, on) for on in (True, False)}
    for on in (True, False):
        _seed(projects[on], args.files)
        _prompt(projects[on], homes[on], server, "true", 0)  # warm-up: caches, session file, store
    for round_no in range(args.rounds):
        for on in (True, False) if round_no % 2 == 0 else (False, True):
            side = "a" if on else "b"
            cases = {"nothing changed": "true", "7 files changed": _change_seven(round_no, side)}
            for name, command in cases.items():
                times.setdefault(name, {True: [], False: []})[on].append(
                    _prompt(projects[on], homes[on], server, command, delay)
                )
            if on:
                shutil.rmtree(homes[True] / "checkpoints", ignore_errors=True)
            times.setdefault("first prompt, new store", {True: [], False: []})[on].append(
                _prompt(projects[on], homes[on], server, "true", delay)
            )
    return times


def _rpc_runs(
    args: argparse.Namespace, server: SSEServer, root: Path, delay: float
) -> dict[str, dict[bool, list[Sample]]]:
    times: dict[str, dict[bool, list[Sample]]] = {}
    projects = {on: root / ("rpc-on" if on else "rpc-off") for on in (True, False)}
    homes = {on: _home(root / "rpc", server, on) for on in (True, False)}
    clients: dict[bool, _Rpc] = {}
    for on in (True, False):
        _seed(projects[on], args.files)
    fresh = times.setdefault("first prompt, new store", {True: [], False: []})
    for number in range(args.rpc_fresh):  # a new process each, prompted at once, its store deleted
        for on in (True, False) if number % 2 == 0 else (False, True):
            shutil.rmtree(homes[on] / "checkpoints", ignore_errors=True)
            client = _Rpc(projects[on], homes[on])
            try:
                _enqueue(server, "true", delay)
                fresh[on].append(client.first_prompt(server))
            finally:
                client.close()
    try:
        for on in (True, False):
            clients[on] = _Rpc(projects[on], homes[on])
            _enqueue(server, "true", 0)
            clients[on].prompt()  # warm-up (with checkpoints on, the store's first snapshot if none)
        for name in ("nothing changed", "7 files changed"):
            cpu = {on: clients[on].cpu() for on in (True, False)}
            samples: dict[bool, list[float]] = {True: [], False: []}
            for number in range(args.rpc_prompts):
                for on in (True, False) if number % 2 == 0 else (False, True):
                    command = (
                        "true" if name == "nothing changed" else _change_seven(number, "a" if on else "b")
                    )
                    _enqueue(server, command, delay)
                    samples[on].append(clients[on].prompt())
            for on in (True, False):
                per_prompt = (clients[on].cpu() - cpu[on]) / args.rpc_prompts
                times[name] = times.get(name, {True: [], False: []})
                times[name][on] = [(wall, per_prompt, float("nan")) for wall in samples[on]]
    finally:
        for client in clients.values():
            client.close()
    return times


def _snapshots(args: argparse.Namespace, root: Path) -> None:
    """The snapshot alone, in this process: a watched folder's partial snapshots against full scans."""
    import asyncio
    import resource

    from pi_coder.checkpoints.scanner import Scanner
    from pi_coder.checkpoints.shadow_git import ShadowRepo

    project = root / "snap"
    _seed(project, args.files)

    def cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    async def run() -> dict[str, list[tuple[float, float]]]:
        out: dict[str, list[tuple[float, float]]] = {}
        repo = ShadowRepo(project, root / "snap-store")
        full = Scanner(repo, watch=False)
        await full.take(1 << 20)  # the store's first snapshot

        async def timed(name: str, scanner: Scanner, change: str | None = None) -> None:
            if change is not None:
                await asyncio.to_thread(subprocess.run, ["sh", "-c", change], cwd=project)
            start, used = time.monotonic(), cpu()
            await scanner.take(1 << 20)
            out.setdefault(name, []).append((time.monotonic() - start, cpu() - used))

        for number in range(args.snapshots):
            watched = Scanner(repo)  # as in a new process
            await timed("watched: first of a process (watcher + full scan)", watched)
            await timed("watched: nothing changed", watched)
            await timed("watched: 7 files changed", watched, _change_seven(2 * number, "s"))
            watched.stop()
            await timed("full scan: nothing changed", full)
            await timed("full scan: 7 files changed", full, _change_seven(2 * number + 1, "s"))
        return out

    results = asyncio.run(run())
    print(
        f"The snapshot alone (one process, {args.snapshots} rounds, medians; ShadowRepo and Scanner in this process)"
    )
    for name, samples in results.items():
        wall = statistics.median(t[0] for t in samples)
        used = statistics.median(t[1] for t in samples)
        print(f"  {name:56}{wall * 1000:8.1f} ms wall {used * 1000:8.1f} ms CPU")


def _ms(value: float, width: int) -> str:
    return f"{value * 1000:{width - 2}.0f}ms" if value == value else " " * width  # NaN: not measured


def _report(title: str, times: dict[str, dict[bool, list[Sample]]]) -> None:
    print(title)
    print(
        f"{'':26}{'wall off':>10}{'on':>8}{'added':>8}{'ratio':>7}{'CPU off':>10}{'on':>8}{'added':>8}"
        f"{'to request off':>16}{'on':>8}  goal (wall)"
    )
    for name, sides in times.items():
        wall, cpu, first = (
            [statistics.median(t[index] for t in sides[on]) for on in (False, True)] for index in range(3)
        )
        goal = GOALS.get(name)
        verdict = (
            ""
            if goal is None
            else f"<= {goal * 1000:.0f} ms: {'met' if wall[1] - wall[0] <= goal else 'NOT met'}"
        )
        print(
            f"{name:26}{_ms(wall[0], 10)}{_ms(wall[1], 8)}{_ms(wall[1] - wall[0], 8)}{wall[1] / wall[0]:7.2f}"
            f"{_ms(cpu[0], 10)}{_ms(cpu[1], 8)}{_ms(cpu[1] - cpu[0], 8)}"
            f"{_ms(first[0], 16)}{_ms(first[1], 8)}  {verdict}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7, help="pi -c -p rounds (0: none)")
    parser.add_argument("--rpc-prompts", type=int, default=15, help="RPC prompts per case and side (0: none)")
    parser.add_argument("--rpc-fresh", type=int, default=3, help="RPC first prompts on a new store, per side")
    parser.add_argument("--snapshots", type=int, default=9, help="rounds of the snapshot alone (0: none)")
    parser.add_argument("--model-ms", type=float, default=0.0)
    args = parser.parse_args()
    delay = args.model_ms / 1000
    with tempfile.TemporaryDirectory() as tmp, SSEServer() as server:
        root = Path(tmp)
        for folder in ("print", "rpc"):
            (root / folder).mkdir()
        load = os.getloadavg()[0]
        printed = _print_runs(args, server, root, delay) if args.rounds else {}
        rpc = _rpc_runs(args, server, root, delay) if args.rpc_prompts else {}
    print(
        f"files: {args.files}, model delay: {args.model_ms:g} ms, load average at start {load:.1f} "
        f"(medians; 'added' = on - off)"
    )
    if printed:
        _report(f"pi -c -p, a process per prompt, {args.rounds} rounds", printed)
    if rpc:
        _report(f"RPC, one process per side, {args.rpc_prompts} prompts per case (CPU: mean per prompt)", rpc)
    if args.snapshots:
        with tempfile.TemporaryDirectory() as tmp:
            _snapshots(args, Path(tmp))


if __name__ == "__main__":
    main()
