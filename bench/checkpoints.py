"""What checkpoints add to a prompt, as the user waits for it: ``pi -c -p`` with checkpoints on and
off, side by side in one run, on a folder of 10,000 small files.

Usage: ``python bench/checkpoints.py [--files N] [--rounds R] [--model-ms MS]``

Each round runs, for "on" and "off" alternately (two configuration homes, one project folder), a
fresh ``pi -c -p`` process whose scripted model (``tests/support/sse_server.py``) asks for one
``bash`` call, then answers. The call either changes nothing (``true``) or changes 7 files (5
edited, 1 created, 1 deleted). A third case times the first prompt in a folder whose store was
just deleted (the first snapshot of all files). ``--model-ms`` delays the model's first answer
(0: an instant model, the worst case for checkpoints: nothing hides their work). The figures
are medians over the rounds; "added" is on minus off, measured in the same run because the
machine is shared and noisy. Whole processes are timed, so start-up, the run's snapshots and
the wait for the checkpoint entry at exit are all included.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.sse_server import SSEServer, Text, ToolCall, Turn  # noqa: E402

GOALS = {"nothing changed": 0.030, "7 files changed": 0.060}


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


def _prompt(project: Path, home: Path, server: SSEServer, command: str, delay: float) -> tuple[float, float]:
    """(wall seconds, CPU seconds of pi and the processes it waited for: git, bash)."""
    server.enqueue(
        Turn([ToolCall("bash", {"command": command}, id="b1")], delay=delay), Turn([Text("Done.")])
    )
    start = time.perf_counter()
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
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"pi failed: {err.decode(errors='replace').strip()}")
    return elapsed, usage.ru_utime + usage.ru_stime


def _change_seven(round_no: int, side: str) -> str:
    edits = " && ".join(f"echo {side}{round_no} > pkg{i:03d}/mod{i * 100:05d}.py" for i in range(5))
    return f"{edits} && echo new > new_{side}{round_no}.py && rm -f pkg099/mod{9900 + round_no * 2 + (side == 'b'):05d}.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--model-ms", type=float, default=0.0)
    args = parser.parse_args()
    delay = args.model_ms / 1000
    times: dict[str, dict[bool, list[tuple[float, float]]]] = {}
    with tempfile.TemporaryDirectory() as tmp, SSEServer() as server:
        root = Path(tmp)
        projects = {on: root / ("project-on" if on else "project-off") for on in (True, False)}
        for project in projects.values():  # one each: a change made by one side is no hand edit for the other
            _seed(project, args.files)
        homes = {on: _home(root, server, on) for on in (True, False)}
        for on in (True, False):  # warm-up: bytecode caches, the session file, the first snapshot
            _prompt(projects[on], homes[on], server, "true", 0)
        for round_no in range(args.rounds):
            for on in (True, False) if round_no % 2 == 0 else (False, True):
                side = "a" if on else "b"
                cases = {
                    "nothing changed": "true",
                    "7 files changed": _change_seven(round_no, side),
                }
                for name, command in cases.items():
                    times.setdefault(name, {True: [], False: []})[on].append(
                        _prompt(projects[on], homes[on], server, command, delay)
                    )
                if on:
                    shutil.rmtree(homes[True] / "checkpoints", ignore_errors=True)
                name = "first prompt, new store"
                times.setdefault(name, {True: [], False: []})[on].append(
                    _prompt(projects[on], homes[on], server, "true", delay)
                )
    print(
        f"files: {args.files}, rounds: {args.rounds}, model delay: {args.model_ms:g} ms (medians of whole `pi -c -p` runs)"
    )
    print(
        f"{'':26}{'wall off':>10}{'on':>8}{'added':>8}{'ratio':>7}{'CPU off':>10}{'on':>8}{'added':>8}  goal (wall)"
    )
    for name, sides in times.items():
        wall_off, wall_on = (statistics.median(t[0] for t in sides[side]) for side in (False, True))
        cpu_off, cpu_on = (statistics.median(t[1] for t in sides[side]) for side in (False, True))
        goal = GOALS.get(name)
        verdict = (
            ""
            if goal is None
            else f"<= {goal * 1000:.0f} ms: {'met' if wall_on - wall_off <= goal else 'NOT met'}"
        )
        print(
            f"{name:26}{wall_off * 1000:8.0f}ms{wall_on * 1000:6.0f}ms{(wall_on - wall_off) * 1000:6.0f}ms{wall_on / wall_off:7.2f}"
            f"{cpu_off * 1000:8.0f}ms{cpu_on * 1000:6.0f}ms{(cpu_on - cpu_off) * 1000:6.0f}ms  {verdict}"
        )


if __name__ == "__main__":
    main()
