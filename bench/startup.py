"""Start-up benchmark: ``pi --version`` and a two-turn ``pi -p`` against the local scripted server.

Usage: ``python bench/startup.py [--runs N] [--importtime]``

The ``-p`` run is a realistic smallest session: the model asks for a ``read`` tool call, the
tool runs, the model answers (two HTTP requests to ``tests/support/sse_server.py``, Anthropic
wire format, configured through a throw-away ``PI_CODER_HOME/models.toml``). Each run is a fresh
process of the installed ``pi`` script; wall time is measured around the process and peak
memory is the child's own ``ru_maxrss`` and CPU time its user+system time (``os.wait4``;
CPU time is the steadier figure on a loaded machine). One warm-up run of each writes
the bytecode caches first (``PYTHONDONTWRITEBYTECODE`` is removed from the children's
environment), so the figures are those of an installed ``pi``. Medians are printed next to
the targets: ``--version`` at most 60 ms; ``-p`` at most 250 ms and 50 MB.

``--importtime`` also prints the slowest imports (cumulative) of one ``-p`` run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.sse_server import SSEServer, Text, ToolCall, Turn  # noqa: E402

TARGETS = {"version": (0.060, None), "print": (0.250, 50.0), "baseline": (None, None)}


def _pi() -> list[str]:
    script = Path(sys.executable).with_name("pi")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pi_coder"]


# Runs one child and reports (seconds, ru_maxrss KB, exit status). It exists because a child's
# ru_maxrss starts at the high-water mark of the process that spawned it (the kernel carries
# the old address space's peak across exec), so the spawner must be a small process, not this
# benchmark. Started with -S -I so that it stays small.
_SPAWNER = r"""
import os, sys, time
out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, out, 1),
           (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
start = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ, file_actions=actions)
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime)
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int, str, float]:
    """(wall seconds, peak MB, exit code, stdout, CPU seconds) of one ``pi`` process."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "stdout")
        report = subprocess.run(
            [sys.executable, "-S", "-I", "-c", _SPAWNER, str(out), *argv],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        text = out.read_text(encoding="utf-8", errors="replace")
    return float(report[0]), int(report[1]) / 1024, int(report[2]), text, float(report[3])


def _write_models(home: Path, server: SSEServer) -> None:
    home.joinpath("models.toml").write_text(
        "[providers.bench]\n"
        'api = "anthropic-messages"\n'
        f'base_url = "{server.anthropic_base_url}"\n'
        'api_key = "none"\n'
        'models = [{ id = "test-model", context_window = 200000, max_tokens = 8192 }]\n',
        encoding="utf-8",
    )


def _report(name: str, samples: list[tuple[float, float, float]]) -> None:
    times = [s for s, _, _ in samples]
    mems = [m for _, m, _ in samples]
    cpu = statistics.median(c for _, _, c in samples)
    target_s, target_mb = TARGETS[name]
    med_s, med_mb = statistics.median(times), statistics.median(mems)
    if target_s is None:
        judged = "   [python -c 'import asyncio': a yardstick for the machine's speed and load]"
    else:
        verdict = "ok" if med_s <= target_s and (target_mb is None or med_mb <= target_mb) else "OVER"
        judged = (
            f"   [target {target_s * 1000:.0f} ms"
            + (f", {target_mb:.0f} MB" if target_mb else "")
            + f": {verdict}]"
        )
    print(
        f"{name:<8} median {med_s * 1000:6.1f} ms (min {min(times) * 1000:6.1f}, max {max(times) * 1000:6.1f})"
        f"  cpu {cpu * 1000:6.1f} ms  peak {med_mb:5.1f} MB{judged}"
    )


def _importtime(argv: list[str], cwd: Path, env: dict[str, str], top: int = 25) -> None:
    run = subprocess.run(
        argv,
        cwd=cwd,
        env=env | {"PYTHONPROFILEIMPORTTIME": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    rows = []
    for line in run.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if cumulative.strip().isdigit():
                rows.append((int(cumulative), name.rstrip()))
    print(f"\nslowest imports of one -p run (cumulative µs, {len(rows)} modules):")
    for cumulative, name in sorted(rows, reverse=True)[:top]:
        print(f"{cumulative:>9}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--importtime", action="store_true")
    args = parser.parse_args()

    pi = _pi()
    with tempfile.TemporaryDirectory() as tmp, SSEServer() as server:
        home, project = Path(tmp, "home"), Path(tmp, "project")
        home.mkdir()
        project.mkdir()
        project.joinpath("notes.txt").write_text("The answer is 42.\n", encoding="utf-8")
        _write_models(home, server)
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PI_CODER_HOME"] = str(home)
        version_argv = [*pi, "--version"]
        print_argv = [*pi, "--no-session", "-p", "What does notes.txt say?"]

        def script() -> None:
            server.enqueue(
                Turn(
                    [ToolCall("read", {"path": "notes.txt"}, id="call_1")], usage={"input": 900, "output": 20}
                ),
                Turn([Text("It says the answer is 42.")], usage={"input": 950, "output": 9}),
            )

        baseline_argv = [sys.executable, "-c", "import asyncio"]
        versions: list[tuple[float, float, float]] = []
        prints: list[tuple[float, float, float]] = []
        baselines: list[tuple[float, float, float]] = []
        for index in range(args.runs + 1):
            elapsed, mem, code, out, cpu = _run(version_argv, project, env)
            if code != 0 or not out.strip():
                raise SystemExit(f"pi --version failed (exit {code})")
            if index:
                versions.append((elapsed, mem, cpu))
            script()
            elapsed, mem, code, out, cpu = _run(print_argv, project, env)
            if code != 0 or "42" not in out:
                raise SystemExit(f"pi -p failed (exit {code}): {out!r}")
            if index:
                prints.append((elapsed, mem, cpu))
            elapsed, mem, _, _, cpu = _run(baseline_argv, project, env)
            baselines.append((elapsed, mem, cpu))
        print(f"{args.runs} runs each, pi = {' '.join(pi)}, load average {os.getloadavg()[0]:.2f}")
        _report("version", versions)
        _report("print", prints)
        _report("baseline", baselines)
        if args.importtime:
            script()
            _importtime(print_argv, project, env)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
