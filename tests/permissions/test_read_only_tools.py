"""Extension tools (``read_only=True``) and MCP tools (``readOnlyHint``) marked read-only.

They are allowed in plan mode and take no checkpoint snapshot; the unmarked ones are refused in
plan mode and are snapshotted before they run. Real ``pi -p`` processes, a real MCP server.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.mcp.conftest import write_mcp
from tests.modes.pirun import PiHome, all_text
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

SERVER = str(Path(__file__).with_name("ro_mcp_server.py"))

EXT = """
from pathlib import Path
from pydantic import BaseModel
from pi_coder.extensions import AgentToolResult, ToolDefinition
from pi_coder.ai.types import TextContent

class P(BaseModel):
    path: str

async def peek(call_id, params, signal, on_update, ctx):
    return AgentToolResult(content=[TextContent(text="peeked " + Path(params.path).read_text())])

async def stamp(call_id, params, signal, on_update, ctx):
    Path(params.path).write_text("stamped\\n")
    return AgentToolResult(content=[TextContent(text="stamped")])

def extension(pi):
    pi.register_tool(ToolDefinition(name="peek", label="peek", description="Read a file", parameters=P,
                                    execute=peek, read_only=True))
    pi.register_tool(ToolDefinition(name="stamp", label="stamp", description="Write a file", parameters=P,
                                    execute=stamp))
"""


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server)
    (home.project / "data.txt").write_text("original\n")
    (tmp_path / "ext.py").write_text(textwrap.dedent(EXT))
    write_mcp(home.home / "mcp.json", {"ro": {"command": sys.executable, "args": [SERVER], "timeout": 30}})
    # The first prompt waits for the server (returning as soon as it is up); the default 10 s is
    # not enough for a Python MCP server to start on a machine loaded to 15+ on 2 cores.
    (home.home / "settings.toml").write_text("[mcp]\nstartup_wait = 60\n")
    return home


def _checkpoints(pi: PiHome) -> list[dict]:
    entries = [json.loads(line) for f in pi.session_files() for line in f.read_text().splitlines()]
    return [e for e in entries if e["type"] == "checkpoint"]


TOOLS = [("peek", "stamp"), ("mcp__ro__look", "mcp__ro__poke")]


@pytest.mark.parametrize(("read_only", "writer"), TOOLS, ids=["extension", "mcp"])
def test_plan_mode_allows_only_the_read_only_tool(pi: PiHome, tmp_path: Path, read_only: str, writer: str) -> None:
    target = str(pi.project / "data.txt")
    pi.server.enqueue(
        Turn([ToolCall(read_only, {"path": target}, id="c1")]),
        Turn([ToolCall(writer, {"path": target}, id="c2")]),
        Turn([Text("1. Write data.txt")]),
    )
    run = pi.run("-e", str(tmp_path / "ext.py"), "-p", "--permission-mode", "plan", "plan it")
    assert run.returncode == 0, run.stderr
    assert "original" in all_text(pi.server.requests[1].json)  # the read-only tool ran
    assert "Plan mode: only read-only tools may run" in all_text(pi.server.requests[2].json)
    assert (pi.project / "data.txt").read_text() == "original\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")
@pytest.mark.parametrize(("read_only", "writer"), TOOLS, ids=["extension", "mcp"])
def test_only_the_unmarked_tool_is_snapshotted(pi: PiHome, tmp_path: Path, read_only: str, writer: str) -> None:
    target = str(pi.project / "data.txt")
    pi.server.enqueue(Turn([ToolCall(read_only, {"path": target}, id="c1")]), Turn([Text("Read.")]))
    run = pi.run("-e", str(tmp_path / "ext.py"), "-p", "read it")
    assert run.returncode == 0, run.stderr
    # No undo point for a run of read-only tools. (The store itself may exist: a prompt's first
    # snapshot starts beside the model request and is dropped when no tool changed anything.)
    assert _checkpoints(pi) == []

    pi.server.enqueue(Turn([ToolCall(writer, {"path": target}, id="c2")]), Turn([Text("Written.")]))
    run = pi.run("-e", str(tmp_path / "ext.py"), "-c", "-p", "write it")
    assert run.returncode == 0, run.stderr
    assert (pi.project / "data.txt").read_text() in ("stamped\n", "poked\n")
    (checkpoint,) = _checkpoints(pi)
    assert checkpoint["files"] == ["data.txt"]
    undo = pi.run("-c", "--undo")
    assert undo.returncode == 0, undo.stderr
    assert (pi.project / "data.txt").read_text() == "original\n"
