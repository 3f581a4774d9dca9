"""``/mcp`` outside the TUI (extensions §6.6): print mode prints the table, RPC sends it as a notify
and lists the command in ``get_commands``; ``--no-mcp`` leaves ``/mcp`` an ordinary prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.conftest import tiny, write_mcp
from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, Turn


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server, "anthropic")
    (home.home / "settings.toml").write_text("[mcp]\nstartup_wait = 90\n", encoding="utf-8")
    write_mcp(home.home / "mcp.json", {"tiny": tiny(), "off": tiny(enabled=False)})
    return home


def test_print_mode_prints_the_server_table(pi: PiHome, sse_server: SSEServer) -> None:
    done = pi.run("-p", "/mcp")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("tiny: connected, 8 tools (direct, global) stdio: ")
    assert "  mcp__tiny__add" in lines
    assert any(line.startswith("off: disabled (direct, global)") for line in lines)
    assert sse_server.requests == []  # no model call


def test_print_mode_reconnect_then_prompt(pi: PiHome, sse_server: SSEServer) -> None:
    sse_server.enqueue(Turn(blocks=[Text("answer")]))
    done = pi.run("-p", "/mcp reconnect tiny", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("tiny: connected, 8 tools")
    assert done.stdout.strip().endswith("answer")
    assert len(sse_server.requests) == 1
    bad = pi.run("-p", "/mcp reconnect nope")
    assert bad.stdout.startswith('No MCP server "nope". Servers: tiny, off')


def test_no_mcp_leaves_the_text_to_the_model(pi: PiHome, sse_server: SSEServer) -> None:
    sse_server.enqueue(Turn(blocks=[Text("plain")]))
    done = pi.run("--no-mcp", "-p", "/mcp")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "plain" and len(sse_server.requests) == 1


def test_rpc_get_commands_and_mcp_prompt(pi: PiHome, sse_server: SSEServer) -> None:
    rpc = RpcClient(pi)
    try:
        commands = rpc.call({"type": "get_commands"})["data"]["commands"]
        mcp = next(c for c in commands if c["name"] == "mcp")
        assert mcp["source"] == "extension" and mcp["sourceInfo"]["path"] == "builtin:mcp"
        answer = rpc.call({"type": "prompt", "message": "/mcp"})
        assert answer["success"] and answer["data"] == {"disposition": "handled"}
        note = rpc.wait_for(lambda line: line.get("type") == "extension_ui_request", timeout=90)
        assert note["method"] == "notify" and note["notifyType"] == "info"
        assert note["message"].startswith("tiny: connected, 8 tools (direct, global)")
        assert sse_server.requests == []
    finally:
        assert rpc.close() == 0
