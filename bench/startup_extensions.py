"""Start-up cost of the extension framework and of extensions: ``pi -p`` on the faux provider.

Four cases side by side in one run, interleaved, each the median CPU time (user + system) of the
``pi`` process over ``--runs`` runs (default 10):

- ``baseline``: ``--no-subagents``, no extension: the framework is not imported;
- ``framework``: one extension that registers nothing: the framework's own import and set-up;
- ``10 extensions``: 10 trivial extensions (each a handler, a command and a tool);
- ``default``: what a plain ``pi -p`` loads (the built-in ``task`` tool).

Budgets (issue 26): framework at most 15 ms over baseline, 10 extensions at most 50 ms.
Run: ``nice .venv/bin/python bench/startup_extensions.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
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
EMPTY = "def extension(pi):\n    pass\n"


def cpu_ms(args: list[str], env: dict[str, str]) -> float:
    """CPU time (user + system) of one ``pi`` run, from the kernel's accounting of the child."""
    pid = os.posix_spawn(PI, [PI, *args], env, file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"pi {' '.join(args)} failed")
    return (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp, "home")
        home.mkdir()
        ten = Path(tmp, "ten")
        ten.mkdir()
        for i in range(10):
            (ten / f"ext{i}.py").write_text(EXT.format(i=i))
        (Path(tmp) / "empty.py").write_text(EMPTY)
        env = {**os.environ, "PI_CODER_HOME": str(home)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on a user's machine: extensions keep their bytecode
        base = ["-p", "--no-session", "--provider", "faux", "hi"]
        cases = {
            "baseline": [*base, "--no-subagents"],
            "framework": [*base, "--no-subagents", "-e", str(Path(tmp) / "empty.py")],
            "10 extensions": [*base, "--no-subagents", "-e", str(ten)],
            "default": base,
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for args in cases.values():  # warm the caches (bytecode, page cache)
            cpu_ms(args, env)
        for _ in range(runs):
            for name, args in cases.items():
                times[name].append(cpu_ms(args, env))
    medians = {name: statistics.median(values) for name, values in times.items()}
    base_ms = medians["baseline"]
    budgets = {"framework": 15.0, "10 extensions": 50.0}
    print(f"pi -p, CPU time, medians of {runs} interleaved runs")
    for name, value in medians.items():
        extra = "" if name == "baseline" else f"  (+{value - base_ms:5.1f} ms over baseline"
        if name in budgets:
            extra += f", budget {budgets[name]:.0f} ms"
        print(f"  {name:14s} {value:7.1f} ms{extra}{')' if extra else ''}")


if __name__ == "__main__":
    main()
