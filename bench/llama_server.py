"""First token and CPU per short answer against a real llama.cpp server, pi_coder and Pi 1.6.

Usage: ``python bench/llama_server.py [--runs N] [--wire openai|anthropic] [--base URL] [--pi16 DIR]``

Without ``--base`` it starts ``llama-server`` from ``PI_TEST_LLAMA_SERVER`` / ``PI_TEST_LLAMA_MODEL``
/ ``PI_TEST_LLAMA_TEMPLATES`` (the output of ``.ci/llama-server.sh``) as the tests do. Each run is a
fresh ``pi --mode json --no-tools --no-session`` process with the same short prompt and system
prompt; the figures are the time from spawning the process to its first ``text_delta`` line on
stdout, the wall time to exit, and the process's own user+system CPU time (``os.wait4``), whose
figure is the steadier one on a loaded machine. With ``--pi16 DIR`` (a folder where
``npm install node@22 @earendil-works/pi-coding-agent@1.6.0`` was run) Pi 1.6 runs the same
prompt in turns with pi_coder (``HOME`` is a scratch folder whose ``~/.pi/agent/models.json``
points at the server, ``PI_OFFLINE=1``), and the medians are printed side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.modes.pirun import PI, clean_env  # noqa: E402
from tests.real_server.llama import MODEL_ID, TOOLS_TEMPLATE, LlamaServer, llama_paths  # noqa: E402

SYSTEM = "You are a helpful assistant. Answer in one short sentence."
PROMPT = "What is the capital of France?"
WIRES = {"openai": "openai-completions", "anthropic": "anthropic-messages"}


def measure(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float | None, float, float, int, int]:
    """(first text delta s, wall s, CPU s, output tokens, exit code) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    first: float | None = None
    output_tokens = 0
    assert proc.stdout is not None
    for raw in proc.stdout:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        kind = event.get("type")
        if first is None and kind == "message_update":
            if (event.get("assistantMessageEvent") or {}).get("type") == "text_delta":
                first = time.perf_counter() - start
        if kind == "message_end" and (event.get("message") or {}).get("role") == "assistant":
            output_tokens = int(((event["message"].get("usage") or {}).get("output")) or 0)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return first, wall, usage.ru_utime + usage.ru_stime, output_tokens, proc.returncode


def pi_coder_setup(scratch: Path, base: str, wire: str) -> tuple[list[str], dict[str, str]]:
    home = scratch / "pi-coder-home"
    home.mkdir()
    url = base + "/v1" if wire == "openai" else base
    (home / "models.toml").write_text(
        f'[providers.llama]\napi = "{WIRES[wire]}"\nbase_url = "{url}"\napi_key = "none"\n'
        f'models = [{{ id = "{MODEL_ID}", context_window = 2048, max_tokens = 128 }}]\n',
        encoding="utf-8",
    )
    argv = [*PI, "--provider", "llama", "--model", MODEL_ID, "--mode", "json", "--no-tools", "--no-session",
            "--system-prompt", SYSTEM, PROMPT]  # fmt: skip
    return argv, clean_env(home)


def pi16_setup(scratch: Path, pi16: Path, base: str, wire: str) -> tuple[list[str], dict[str, str]]:
    home = scratch / "pi16-home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    url = base + "/v1" if wire == "openai" else base
    models = {"providers": {"llama": {"baseUrl": url, "api": WIRES[wire], "apiKey": "none",
              "models": [{"id": MODEL_ID, "contextWindow": 2048, "maxTokens": 128}]}}}  # fmt: skip
    (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
    node = pi16 / "node_modules" / ".bin" / "node"
    cli = pi16 / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js"
    argv = [str(node), str(cli), "--provider", "llama", "--model", MODEL_ID, "--mode", "json", "--no-tools",
            "--no-session", "--system-prompt", SYSTEM, PROMPT]  # fmt: skip
    env = {k: v for k, v in clean_env(home).items() if k != "PI_CODER_HOME"}
    env.update(HOME=str(home), PI_OFFLINE="1")
    return argv, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--wire", choices=sorted(WIRES), default="openai")
    parser.add_argument("--base", help="a running llama-server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--pi16", type=Path, help="folder with Pi 1.6 installed by npm")
    args = parser.parse_args()
    server = None
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        base = args.base
        if base is None:
            paths, why = llama_paths()
            if paths is None:
                sys.exit(f"no llama-server: {why}")
            server = LlamaServer(paths, TOOLS_TEMPLATE, scratch / "server.log")
            server.wait_healthy()
            base = server.url
        try:
            clients = {"pi_coder": pi_coder_setup(scratch, base, args.wire)}
            if args.pi16:
                clients["pi 1.6"] = pi16_setup(scratch, args.pi16, base, args.wire)
            results: dict[str, list[tuple[float | None, float, float, int, int]]] = {
                name: [] for name in clients
            }
            for argv, env in clients.values():  # warm-up: bytecode caches, the server's prompt cache
                measure(argv, env, scratch)
            for _ in range(args.runs):
                for name, (argv, env) in clients.items():
                    results[name].append(measure(argv, env, scratch))
        finally:
            if server is not None:
                server.stop()
    print(f"{args.runs} runs, wire {args.wire}, prompt {PROMPT!r}; medians")
    print(f"{'client':10} {'first text':>11} {'wall':>8} {'CPU':>8} {'out tok':>8} {'failed':>7}")
    medians = {}
    for name, rows in results.items():
        firsts = [r[0] for r in rows if r[0] is not None]
        first = statistics.median(firsts) if firsts else float("nan")
        wall = statistics.median(r[1] for r in rows)
        cpu = statistics.median(r[2] for r in rows)
        medians[name] = (first, wall, cpu)
        failed = sum(1 for r in rows if r[4] != 0 or r[0] is None)
        tokens = statistics.median(r[3] for r in rows)
        print(f"{name:10} {first:10.3f}s {wall:7.3f}s {cpu:7.3f}s {tokens:8.0f} {failed:7d}")
    if "pi 1.6" in medians:
        ours, theirs = medians["pi_coder"], medians["pi 1.6"]
        print(f"pi 1.6 / pi_coder: first text {theirs[0] / ours[0]:.2f}x, CPU {theirs[2] / ours[2]:.2f}x")


if __name__ == "__main__":
    main()
