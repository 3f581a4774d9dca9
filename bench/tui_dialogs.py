"""TUI latency side by side with Pi 1.6 in tmux: first frame, dialogs, Ctrl+O on a long output.

Usage: ``python bench/tui_dialogs.py --pi16 /work/pi16 [--runs 5] [--only NAME ...] [--show] [--baseline DIR]``

``--pi16`` is a folder where ``npm install node@22 @earendil-works/pi-coding-agent@1.6.0`` was
run. Both programs run in their own detached tmux session (100x30) on the same project folder, a
resumed 400-entry session and 20 more sessions of that folder (same files for both), configured
for one model on a local scripted server (``bench/vs_pi16.py``'s set-up). Each run starts both
programs afresh, in turns, and times what a user waits for, polling ``tmux capture-pane`` every
10 ms (the same cost for both):

- ``frame``: from starting the program (``--no-session``) until its editor border is drawn;
  ``frame+400``: the same, resuming the 400-entry session (``--session``);
- ``/settings``, ``/model``, ``/tree``, ``/resume``, ``/hotkeys``: from the Enter that sends the
  command until the dialog (or the key table) shows its content; Esc closes it again;
- ``ctrl+o``: ``!seq 1 2000`` is run, then Ctrl+O, timed until the collapsed output's
  "earlier lines" / "more lines" hint has left the screen (the expanded output is drawn).

Medians are printed with the ratio pi_coder / Pi (lower is better for pi_coder), then the CPU
time each program used over the same waits (all its threads, from ``/proc/PID/task/*/schedstat``):
on a loaded machine the wall times mostly measure the queue for a core, the CPU times do not.
``--show``
prints each program's screen after each step (to check the markers). ``--baseline DIR`` times a
third program in the same turns: another checkout of pi_coder, run as ``python -m pi_coder`` with
``PYTHONPATH=DIR`` (before and after a change, in one run).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.vs_pi16 import Client, pi16_client, pi_coder_client, write_session  # noqa: E402
from pi_coder.paths import encode_cwd  # noqa: E402
from tests.support.sse_server import SSEServer  # noqa: E402

Check = Callable[[str], bool]


def _has(*needles: str) -> Check:
    return lambda screen: all(needle in screen for needle in needles)


def _lacks(*needles: str) -> Check:
    return lambda screen: not any(needle in screen for needle in needles)


_COUNT = re.compile(r"\(\d+/\d+\)")

# What shows that a dialog is open with its content, per program.
OPENED: dict[str, dict[str, Check]] = {
    "pi_coder": {
        "/settings": _has("Auto-compact", "Esc clear/close"),
        "/model": _has("Select model", "test-model  bench"),
        "/tree": _has("Session Tree", "user: Please look at file_"),
        "/resume": _has("Resume Session", "Please look at file_0.py"),
        "/hotkeys": _has("!!cmd", "kept out of the context"),
    },
    "pi 1.6": {
        "/settings": _has("Auto-compact", "Esc to cancel"),
        "/model": _has("Model Name:", "test-model [bench]"),
        "/tree": _has("Session Tree", "user: Please look at file_"),
        "/resume": _has("Resume Session", "Please look at file_0.py"),
        "/hotkeys": _has("Run bash command (excluded from context)"),
    },
}
BORDER = {"pi_coder": "╰──────────", "pi 1.6": "─" * 40}
HINT = {"pi_coder": "earlier lines", "pi 1.6": "more lines"}
DIALOGS = ["/settings", "/model", "/tree", "/resume", "/hotkeys"]


class Pane:
    def __init__(self, client: Client, cwd: Path, session: Path | None, size: tuple[int, int] = (100, 30)) -> None:
        self.client = client
        self.name = f"bench-{uuid.uuid4().hex[:8]}"
        env = [f"{key}={value}" for key, value in client.env.items()
               if key in ("HOME", "PI_CODER_HOME", "PI_OFFLINE", "PYTHONPATH")]  # fmt: skip
        command = " ".join(["env", *env, "TERM=xterm-256color", *client.argv,
                            *(["--session", str(session)] if session else ["--no-session"])])
        self.start = time.perf_counter()
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", self.name, "-x", str(size[0]), "-y", str(size[1]), "-c", str(cwd),
             command + "; sleep 30"], check=True,
        )  # fmt: skip

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True, check=False
        ).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *(["-l"] if literal else []), *keys], check=True)

    def wait(self, check: Check, what: str, timeout: float = 30.0) -> float:
        """Seconds (from now) until ``check`` holds for the screen."""
        start = time.perf_counter()
        while True:
            screen = self.screen()
            if check(screen):
                return time.perf_counter() - start
            if time.perf_counter() - start > timeout:
                raise TimeoutError(f"{self.client.name}: no {what} within {timeout}s; screen:\n{screen}")
            time.sleep(0.01)

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, check=False)

    def program_pid(self) -> int | None:
        """The program's process: the newest descendant of the pane's shell that is not ``sleep``."""
        shell = subprocess.run(
            ["tmux", "list-panes", "-t", self.name, "-F", "#{pane_pid}"], capture_output=True, text=True, check=False
        ).stdout.strip()
        todo, found = [shell], None
        while todo:
            pid = todo.pop()
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if pid != shell and not command.startswith(b"sleep"):
                found = int(pid)
            todo += subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True, check=False).stdout.split()
        return found


def cpu_seconds(pid: int | None) -> float:
    """CPU time of all the threads of ``pid`` so far (0 where /proc cannot tell)."""
    if pid is None:
        return 0.0
    total = 0
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for thread in threads:
        try:
            total += int(Path(f"/proc/{pid}/task/{thread}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


def one_run(client: Client, cwd: Path, session: Path, names: list[str], show: bool) -> dict[str, float]:
    times: dict[str, float] = {}
    kind = "pi 1.6" if client.name == "pi 1.6" else "pi_coder"  # a --baseline is a pi_coder
    pane = Pane(client, cwd, None)
    try:
        pane.wait(_has(BORDER[kind]), "first frame")
        times["frame"] = time.perf_counter() - pane.start
    finally:
        pane.close()
    copy = session.with_name(f"run-{uuid.uuid4().hex[:8]}.jsonl")
    shutil.copyfile(session, copy)
    pane = Pane(client, cwd, copy)
    try:
        pane.wait(_has(BORDER[kind]), "first frame")
        times["frame+400"] = time.perf_counter() - pane.start
        time.sleep(1.5)  # start-up work settles, as a user starts typing
        pid = pane.program_pid()
        for name in names:
            if name == "ctrl+o":
                pane.keys("!seq 1 2000", literal=True)
                pane.wait(_has("!seq 1 2000"), "the typed command")
                pane.keys("Enter")
                pane.wait(_has(HINT[kind], "2000"), "the command's output")
                time.sleep(0.5)
                before = cpu_seconds(pid)
                pane.keys("C-o")
                times[name] = pane.wait(_lacks(HINT[kind]), "the expanded output")
                times[f"{name} cpu"] = cpu_seconds(pid) - before
            else:
                opened = OPENED[kind][name]
                pane.keys(name, literal=True)
                pane.wait(_has(name), "the typed command")
                time.sleep(0.2)
                before = cpu_seconds(pid)
                pane.keys("Enter")
                times[name] = pane.wait(opened, f"{name} open")
                times[f"{name} cpu"] = cpu_seconds(pid) - before
            if show:
                print(f"--- {client.name} {name}\n{pane.screen()}")
            if name != "/hotkeys" and name != "ctrl+o":
                pane.keys("Escape")
                pane.wait(lambda s, o=OPENED[kind][name]: not o(s), f"{name} closed")
            time.sleep(0.3)
    finally:
        pane.close()
        copy.unlink(missing_ok=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pi16", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", nargs="*", help="steps: /settings /model /tree /resume /hotkeys ctrl+o")
    parser.add_argument("--show", action="store_true", help="print the screens")
    parser.add_argument("--baseline", type=Path, help="also time another pi_coder checkout (python -m pi_coder)")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is not installed")
    steps = args.only or [*DIALOGS, "ctrl+o"]
    with tempfile.TemporaryDirectory() as tmp, SSEServer() as server:
        scratch = Path(tmp)
        project = scratch / "project"
        project.mkdir()
        clients = [pi_coder_client(scratch, server), pi16_client(scratch, server, args.pi16)]
        if args.baseline is not None:
            (scratch / "baseline").mkdir()
            base = pi_coder_client(scratch / "baseline", server)
            base.name = "baseline"
            base.argv = [sys.executable, "-m", "pi_coder"]
            base.env = base.env | {"PYTHONPATH": str(args.baseline.resolve())}
            clients.append(base)
        folders = {
            "pi_coder": Path(clients[0].env["PI_CODER_HOME"]) / "sessions" / encode_cwd(str(project)),
            "pi 1.6": Path(clients[1].env["HOME"]) / ".pi" / "agent" / "sessions" / encode_cwd(str(project)),
        }
        if args.baseline is not None:
            folders["baseline"] = Path(clients[2].env["PI_CODER_HOME"]) / "sessions" / encode_cwd(str(project))
        main_session = scratch / "main.jsonl"
        write_session(main_session, project, 400)
        for folder in folders.values():
            folder.mkdir(parents=True)
        for index in range(20):
            other = scratch / f"other-{index}.jsonl"
            write_session(other, project, 30)
            for folder in folders.values():
                shutil.copyfile(other, folder / other.name)
        results: dict[str, dict[str, list[float]]] = {c.name: {} for c in clients}
        for _ in range(args.runs):
            for client in clients:
                run = one_run(client, project, _place(main_session, folders[client.name]), steps, args.show)
                for key, value in run.items():
                    results[client.name].setdefault(key, []).append(value)
        print(f"medians of {args.runs} runs; ratio = pi_coder / Pi 1.6 (tmux 100x30)")
        base = results.get("baseline")
        print(f"{'step':14} {'pi_coder':>10} {'pi 1.6':>10} {'ratio':>7}" + (f" {'baseline':>10} {'ratio':>7}" if base else ""))
        ours, pis = results["pi_coder"], results["pi 1.6"]
        for key in sorted(ours, key=lambda key: key.endswith(" cpu")):  # wall times, then CPU
            o, p = statistics.median(ours[key]), statistics.median(pis[key])
            if key.endswith(" cpu") and p <= 0:
                p = float("nan")
            line = f"{key:14} {o * 1000:7.0f} ms {p * 1000:7.0f} ms {o / p:6.2f}x"
            if base:
                b = statistics.median(base[key])
                line += f" {b * 1000:7.0f} ms {b / p:6.2f}x"
            print(line)


def _place(session: Path, folder: Path) -> Path:
    target = folder / session.name
    if not target.exists():
        shutil.copyfile(session, target)
    return target


if __name__ == "__main__":
    main()
