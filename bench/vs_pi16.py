"""pi_coder side by side with Pi 1.6 on the same scripted server: wall time and peak memory.

Usage: ``python bench/vs_pi16.py --pi16 /tmp/pi16 [--runs 5] [--only NAME ...]``

``--pi16`` is a folder where ``npm install node@22 @earendil-works/pi-coding-agent@1.6.0`` was run.
Both programs talk to one ``tests/support/sse_server.py`` (Anthropic wire format) through their own
configuration (pi_coder: ``PI_CODER_HOME/models.toml``; Pi: ``HOME/.pi/agent/models.json`` with
``PI_OFFLINE=1``), in turns, so that the machine's load falls on both alike. Scenarios:

- ``version``: ``--version``.
- ``two-turn``: ``-p``: a ``read`` tool call, then a short answer.
- ``stream``: ``-p``: one 400 KB answer in 50,000 text deltas.
- ``reads``: ``-p``: 50 ``read`` calls in one turn, then an answer.
- ``resume``: ``--session FILE -p``: a 5,000-entry session (a fresh copy per run), one answer.
- ``tui``: the interactive TUI in a pseudo-terminal: time until its first frame is drawn
  (pi_coder's header, Pi's editor border), then CPU time used over ``--idle`` idle seconds.

Each print run is a fresh process; wall time is measured around it and peak memory is the
child's own ``ru_maxrss`` (spawned from a small process, see ``bench/startup.py``). Medians are
printed with the ratio pi_coder / Pi (lower is better for pi_coder).
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.startup import _SPAWNER  # noqa: E402  (one small spawning process: see bench/startup.py)
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn  # noqa: E402


class Client:
    def __init__(self, name: str, argv: list[str], env: dict[str, str], first_frame: bytes) -> None:
        self.name, self.argv, self.env, self.first_frame = name, argv, env, first_frame


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL", "_OAUTH_TOKEN"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for name in ("COLUMNS", "LINES"):
        env.pop(name, None)
    return env


def pi_coder_client(scratch: Path, server: SSEServer) -> Client:
    home = scratch / "pi-coder-home"
    home.mkdir()
    (home / "models.toml").write_text(
        f'[providers.bench]\napi = "anthropic-messages"\nbase_url = "{server.anthropic_base_url}"\n'
        'api_key = "none"\nmodels = [{ id = "test-model", context_window = 200000, max_tokens = 8192 }]\n',
        encoding="utf-8",
    )
    (home / "settings.toml").write_text(
        'default_provider = "bench"\ndefault_model = "test-model"\n', encoding="utf-8"
    )
    script = Path(sys.executable).with_name("pi")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "pi_coder"]
    env = _base_env() | {"PI_CODER_HOME": str(home), "HOME": str(scratch / "pi-coder-user")}
    (scratch / "pi-coder-user").mkdir()
    return Client("pi_coder", argv, env, b"pi v")


def pi16_client(scratch: Path, server: SSEServer, pi16: Path) -> Client:
    home = scratch / "pi16-home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    models = {"providers": {"bench": {"baseUrl": server.anthropic_base_url, "api": "anthropic-messages",
              "apiKey": "none", "models": [{"id": "test-model", "contextWindow": 200000, "maxTokens": 8192}]}}}  # fmt: skip
    (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
    (agent / "settings.json").write_text(
        json.dumps({"defaultProvider": "bench", "defaultModel": "test-model"}), encoding="utf-8"
    )
    node = pi16 / "node_modules" / ".bin" / "node"
    cli = pi16 / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js"
    env = _base_env() | {"HOME": str(home), "PI_OFFLINE": "1"}
    env.pop("PI_CODER_HOME", None)
    return Client("pi 1.6", [str(node), str(cli)], env, "─".encode() * 8)


def run_print(client: Client, args: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """(wall s, peak MB, exit code, stdout) of one process."""
    out = cwd.parent / f"stdout-{os.getpid()}"
    report = subprocess.run(
        [sys.executable, "-S", "-I", "-c", _SPAWNER, str(out), *client.argv, *args],
        cwd=cwd, env=client.env, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    text = out.read_text(encoding="utf-8", errors="replace")
    out.unlink()
    return float(report[0]), int(report[1]) / 1024, int(report[2]), text


def write_session(path: Path, cwd: Path, entries: int) -> None:
    from pi_coder.ai.types import AssistantMessage, TextContent, ToolResultMessage, Usage, UserMessage
    from pi_coder.ai.types import ToolCall as Call
    from pi_coder.session import SessionStore

    store = SessionStore.create(str(cwd), path.parent)
    store.append_model_change("bench", "test-model")
    store.append_thinking_level_change("off")
    written, turn = 2, 0
    body = "".join(f"{n:5d}\tdef function_{n}(value):\n" for n in range(4))
    while written < entries:
        call_id = f"toolu_{turn:08d}"
        for message in (
            UserMessage(content=f"Please look at file_{turn}.py and fix test {turn}."),
            AssistantMessage(
                content=[
                    TextContent(text="I'll read it first."),
                    Call(id=call_id, name="read", arguments={"path": f"file_{turn}.py"}),
                ],  # fmt: skip
                api="anthropic-messages",
                provider="bench",
                model="test-model",
                usage=Usage(input=1000, output=20, total_tokens=1020),
                stop_reason="toolUse",
            ),  # fmt: skip
            ToolResultMessage(tool_call_id=call_id, tool_name="read", content=[TextContent(text=body)]),
        ):
            store.append_message(message)
            written += 1
        turn += 1
    assert store.session_file is not None
    os.replace(store.session_file, path)


Scenario = tuple[Callable[[SSEServer], None], Callable[[Path], list[str]], str]


def scenarios(project: Path, session: Path) -> dict[str, Scenario]:
    def none(server: SSEServer) -> None:
        return None

    def two_turn(server: SSEServer) -> None:
        server.enqueue(
            Turn([ToolCall("read", {"path": "notes.txt"}, id="call_1")], usage={"input": 900, "output": 20}),
            Turn([Text("It says the answer is 42.")], usage={"input": 950, "output": 9}),
        )

    def stream(server: SSEServer) -> None:
        server.enqueue(Turn([Text("word " * 80_000)], delta_chars=8, usage={"input": 900, "output": 100000}))

    def reads(server: SSEServer) -> None:
        calls = [ToolCall("read", {"path": f"f{i}.txt"}, id=f"call_{i}") for i in range(50)]
        server.enqueue(Turn(list(calls), usage={"input": 900, "output": 900}),
                       Turn([Text("Read all fifty.")], usage={"input": 5000, "output": 5}))  # fmt: skip

    def answer(server: SSEServer) -> None:
        server.enqueue(Turn([Text("Resumed and answered.")], usage={"input": 1000, "output": 5}))

    def fresh_session(cwd: Path) -> list[str]:
        copy = cwd.parent / "resume-copy.jsonl"
        shutil.copyfile(session, copy)
        return ["--session", str(copy), "-p", "One more thing?"]

    return {
        "version": (none, lambda cwd: ["--version"], ""),
        "two-turn": (two_turn, lambda cwd: ["--no-session", "-p", "What does notes.txt say?"], "42"),
        "stream": (stream, lambda cwd: ["--no-session", "-p", "Write a lot."], "word word"),
        "reads": (reads, lambda cwd: ["--no-session", "-p", "Read the fifty files."], "fifty"),
        "resume": (answer, fresh_session, "Resumed"),
    }


def first_frame(client: Client, cwd: Path, idle: float) -> tuple[float, float]:
    """(seconds to the first frame, CPU seconds over ``idle`` idle seconds) of the TUI in a pty."""
    import fcntl
    import struct
    import termios

    env = client.env | {"TERM": "xterm-256color"}
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # child
        os.chdir(cwd)
        os.execve(client.argv[0], client.argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen = b""
    frame = float("nan")
    deadline = start + 20
    while time.perf_counter() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
            if client.first_frame in seen:
                frame = time.perf_counter() - start
                break
    settle = time.perf_counter() + 2.0  # let start-up work finish before measuring idle
    while time.perf_counter() < settle:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                os.read(fd, 65536)
            except OSError:
                break
    before = _cpu(pid)
    end = time.perf_counter() + idle
    while time.perf_counter() < end:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                os.read(fd, 65536)
            except OSError:
                break
    used = _cpu(pid) - before
    os.kill(pid, signal.SIGTERM)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                os.read(fd, 65536)
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except OSError:
        pass
    os.close(fd)
    return frame, used


def _cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its children still running (node's workers are threads)."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pi16", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=5.0)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, SSEServer() as server:
        scratch = Path(tmp)
        project = scratch / "project"
        project.mkdir()
        (project / "notes.txt").write_text("The answer is 42.\n", encoding="utf-8")
        for i in range(50):
            (project / f"f{i}.txt").write_text(f"file {i}\n" * 40, encoding="utf-8")
        session = scratch / "sessions" / "five-thousand.jsonl"
        session.parent.mkdir()
        write_session(session, project, 5000)
        clients = [pi_coder_client(scratch, server), pi16_client(scratch, server, args.pi16)]
        table = scenarios(project, session)
        names = [n for n in [*table, "tui"] if not args.only or n in args.only]
        print(f"medians of {args.runs} runs; ratio = pi_coder / Pi 1.6")
        print(f"{'scenario':10} {'pi_coder':>18} {'pi 1.6':>18} {'wall':>7} {'memory':>7}")
        for name in names:
            if name == "tui":
                rows: dict[str, list[tuple[float, float]]] = {c.name: [] for c in clients}
                for _ in range(args.runs):
                    for client in clients:
                        rows[client.name].append(first_frame(client, project, args.idle))
                ours, pis = ([statistics.median(v) for v in zip(*rows[c.name], strict=True)] for c in clients)
                print(f"{'tui frame':10} {ours[0] * 1000:13.0f} ms   {pis[0] * 1000:13.0f} ms   "
                      f"{ours[0] / pis[0]:6.2f}x")  # fmt: skip
                print(
                    f"{'tui idle':10} {ours[1]:14.2f} s   {pis[1]:14.2f} s   (CPU over {args.idle:.0f} s idle)"
                )
                continue
            script, argv_of, expect = table[name]
            results: dict[str, list[tuple[float, float]]] = {c.name: [] for c in clients}
            for run in range(args.runs + 1):  # the first round warms caches and is not counted
                for client in clients:
                    script(server)
                    wall, peak, code, out = run_print(client, argv_of(project), project)
                    if code != 0 or expect not in out:
                        sys.exit(f"{client.name} {name}: exit {code}, output {out[:200]!r}")
                    if run:
                        results[client.name].append((wall, peak))
            (ow, om), (pw, pm) = (
                [statistics.median(v) for v in zip(*results[c.name], strict=True)] for c in clients
            )
            print(f"{name:10} {ow * 1000:7.0f} ms {om:5.0f} MB {pw * 1000:7.0f} ms {pm:5.0f} MB "
                  f"{ow / pw:6.2f}x {om / pm:6.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
