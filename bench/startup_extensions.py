"""Start-up cost of extensions (extensions §1.4): ``pi -p`` on the faux provider, with 10 trivial
extensions (each a handler, a command and a tool) against none. Prints medians of 10 runs.

Budget: at most 50 ms slower. Run: ``.venv/bin/python bench/startup_extensions.py``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PI = str(Path(sys.executable).with_name("pi"))
EXT = """
from pydantic import BaseModel
from pi_coder.extensions import AgentToolResult, TextContent, ToolDefinition

class P{i}(BaseModel):
    text: str = ""

async def run(tool_call_id, params, signal, on_update, ctx):
    return AgentToolResult(content=[TextContent(text=params.text)])

def extension(pi):
    pi.on("turn_end", lambda event, ctx: None)
    pi.register_command("cmd{i}", lambda args, ctx: None, description="command {i}")
    pi.register_tool(ToolDefinition(name="tool{i}", label="Tool {i}", description="tool {i}", parameters=P{i},
                                    execute=run))
"""


def median_ms(args: list[str], env: dict[str, str], cwd: str, runs: int = 10) -> float:
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run([PI, *args], env=env, cwd=cwd, capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times[1:])  # the first run warms the caches


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp, "home")
        home.mkdir()
        env = {**os.environ, "PI_CODER_HOME": str(home)}
        base = ["-p", "--no-session", "--provider", "faux", "hi"]
        none = median_ms(base, env, tmp)
        folder = home / "extensions"
        folder.mkdir()
        for i in range(10):
            (folder / f"ext{i}.py").write_text(EXT.format(i=i))
        ten = median_ms(base, env, tmp)
    print(f"pi -p, no extension:      {none:7.1f} ms (median of 10)")
    print(f"pi -p, 10 extensions:     {ten:7.1f} ms (median of 10)")
    print(f"overhead:                 {ten - none:7.1f} ms (budget 50 ms)")


if __name__ == "__main__":
    main()
