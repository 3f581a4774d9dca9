"""Start-up with one configured MCP server vs none (extensions §6.4, issue 16's 30 ms figure).

``python bench/mcp_startup.py [runs]`` runs ``pi -p hi`` (scripted model on 127.0.0.1, throw-away
home) ``runs`` times per case, interleaved, and prints medians and minimums of:

- ``prompt``: from interpreter start until ``AgentSession.prompt`` is entered;
- ``request``: from spawn until the model server has the request;
- ``exit``: from spawn until the process has exited.

Cases: ``none`` (no ``mcp.json``); ``wait`` (one stdio server, the tests' tiny server, taking 1 s
before it answers ``initialize``; default ``startup_wait``, so the first request waits for it, as
§6.4 says); ``nowait`` (the same server with ``mcp.startup_wait = 0``: nothing to wait for, the
request must not be later than with ``none``); ``deferred`` (the same server with
``"exposure": "deferred"``: no direct tools, so nothing waits either).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.mcp.conftest import tiny, write_mcp  # noqa: E402
from tests.modes.pirun import PiHome  # noqa: E402
from tests.support.sse_server import SSEServer, Text, Turn  # noqa: E402

PROBE = """
import time, sys
t0 = time.perf_counter()
from pi_coder.core.agent_session import AgentSession
original = AgentSession.prompt
def prompt(self, *a, **k):
    if not getattr(AgentSession, "_seen", False):
        AgentSession._seen = True
        sys.stderr.write("FIRST_PROMPT %.6f\\n" % (time.perf_counter() - t0))
    return original(self, *a, **k)
AgentSession.prompt = prompt
from pi_coder.cli import main
sys.exit(main(["-p", "hi"]))
"""

CASES = ("none", "wait", "nowait", "deferred")


def prepare(home: PiHome, case: str) -> None:
    settings = home.home / "settings.toml"
    settings.write_text("[mcp]\nstartup_wait = 0\n" if case == "nowait" else "", encoding="utf-8")
    mcp = home.home / "mcp.json"
    if case == "none":
        mcp.unlink(missing_ok=True)
        return
    extra = {"exposure": "deferred"} if case == "deferred" else {}
    write_mcp(mcp, {"tiny": tiny("--init-delay", "1", **extra)})


def run_once(home: PiHome, server: SSEServer) -> tuple[float, float, float]:
    server.requests.clear()
    server.enqueue(Turn(blocks=[Text("hi")]))
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", PROBE],
        cwd=home.project,
        env=home.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    while not server.requests and proc.poll() is None:
        time.sleep(0.0005)
    request = time.perf_counter() - started
    _, err = proc.communicate(timeout=60)
    ended = time.perf_counter() - started
    if proc.returncode != 0 or "FIRST_PROMPT " not in err:
        raise RuntimeError(f"pi -p failed ({proc.returncode}): {err[-500:]}")
    prompt = float(err.split("FIRST_PROMPT ", 1)[1].split()[0])
    return prompt, request, ended


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with SSEServer() as server, tempfile.TemporaryDirectory() as tmp:
        home = PiHome(Path(tmp), server, "anthropic")
        results: dict[str, list[tuple[float, float, float]]] = {c: [] for c in CASES}
        for case in CASES:  # warm the bytecode caches
            prepare(home, case)
            run_once(home, server)
        for _ in range(runs):
            for case in CASES:
                prepare(home, case)
                results[case].append(run_once(home, server))
        print(f"{runs} runs per case; median (min) in ms; difference to 'none' by medians")
        for index, label in enumerate(("prompt", "request", "exit")):
            base = statistics.median(v[index] for v in results["none"]) * 1000
            for case in CASES:
                column = [v[index] * 1000 for v in results[case]]
                med = statistics.median(column)
                diff = "" if case == "none" else f"  {med - base:+7.1f}"
                print(f"{label:>8} {case:>9}: {med:7.1f} ({min(column):6.1f}){diff}")


if __name__ == "__main__":
    main()
