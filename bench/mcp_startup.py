"""Start-up with one configured MCP server vs none, until the first prompt (extensions §6.4).

``python bench/mcp_startup.py [runs]`` runs ``pi -p hi`` (scripted model, throw-away home) and
reports, for no ``mcp.json`` and for one stdio server (the tests' tiny server):

- ``to first prompt``: from interpreter start until ``AgentSession.prompt`` is entered (the
  connection has only been scheduled; the SDK is imported in the background after this);
- ``to first request``: from spawn until the model server sees the request, with
  ``mcp.startup_wait = 0`` so the prompt does not wait for the server.

Medians and minimums; the machine's load shows in the spread.
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


def run_once(home: PiHome, server: SSEServer) -> tuple[float, float]:
    server.requests.clear()
    server.enqueue(Turn(blocks=[Text("hi")]))
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", PROBE], cwd=home.project, env=home.env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not server.requests and proc.poll() is None:
        time.sleep(0.0005)
    request = time.perf_counter() - started
    _, err = proc.communicate(timeout=60)
    prompt = float(err.split("FIRST_PROMPT ", 1)[1].split()[0])
    return prompt, request


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    with SSEServer() as server, tempfile.TemporaryDirectory() as tmp:
        home = PiHome(Path(tmp), server, "anthropic")
        (home.home / "settings.toml").write_text("[mcp]\nstartup_wait = 0\n", encoding="utf-8")
        results: dict[str, list[tuple[float, float]]] = {"none": [], "one server": []}
        run_once(home, server)  # warm the bytecode caches
        for _ in range(runs):
            (home.home / "mcp.json").unlink(missing_ok=True)
            results["none"].append(run_once(home, server))
            write_mcp(home.home / "mcp.json", {"tiny": tiny()})
            results["one server"].append(run_once(home, server))
        for index, label in ((0, "to first prompt"), (1, "to first request")):
            for name, values in results.items():
                column = [v[index] * 1000 for v in values]
                print(f"{label:>16} {name:>10}: median {statistics.median(column):7.1f} ms, min {min(column):7.1f} ms")
        for index, label in ((0, "to first prompt"), (1, "to first request")):
            med = [statistics.median(v[index] for v in results[n]) * 1000 for n in results]
            low = [min(v[index] for v in results[n]) * 1000 for n in results]
            print(f"difference {label}: median {med[1] - med[0]:+.1f} ms, min {low[1] - low[0]:+.1f} ms")


if __name__ == "__main__":
    main()
