"""``pi.register_mcp_server`` / ``unregister_mcp_server`` / ``get_mcp_servers``: servers from extensions, with real MCP servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.extensions.conftest import write_ext
from tests.mcp.conftest import tiny, write_mcp
from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server, "anthropic")
    (home.home / "settings.toml").write_text("[mcp]\nstartup_wait = 90\n", encoding="utf-8")
    return home


def _ext(pi: PiHome, config: dict) -> Path:
    return write_ext(
        pi.project,
        "mcpreg",
        f"""
        import json

        CONFIG = json.loads({json.dumps(json.dumps(config))})

        def extension(pi):
            pi.register_mcp_server("tiny", CONFIG)

            @pi.command("drop")
            async def drop(args, ctx):
                pi.unregister_mcp_server("tiny")
                ctx.ui.notify("servers " + json.dumps([(s["name"], s["source"]) for s in pi.get_mcp_servers()]))

            @pi.command("servers")
            async def servers(args, ctx):
                ctx.ui.notify("servers " + json.dumps([(s["name"], s["source"]) for s in pi.get_mcp_servers()]))
        """,
    )


def test_a_registered_server_connects_without_mcp_json(pi: PiHome, sse_server: SSEServer) -> None:
    ext = _ext(pi, tiny())
    done = pi.run("-e", str(ext), "-p", "/mcp")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("tiny: connected, 8 tools (direct, extension) stdio: "), done.stdout
    assert "  mcp__tiny__add" in lines
    assert sse_server.requests == []


def test_mcp_json_wins_a_shared_name(pi: PiHome) -> None:
    write_mcp(pi.home / "mcp.json", {"tiny": tiny()})
    ext = _ext(pi, tiny())
    done = pi.run("-e", str(ext), "-p", "/mcp")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("tiny: connected, 8 tools (direct, global)")


def test_invalid_config_fails_the_load(pi: PiHome) -> None:
    ext = _ext(pi, {"url": "ftp://nowhere"})
    done = pi.run("-e", str(ext), "-p", "/mcp")
    assert done.returncode == 1
    assert "needs a url starting http" in done.stderr


def test_unregister_stops_the_server_and_lists_the_rest(pi: PiHome) -> None:
    ext = _ext(pi, tiny())
    client = RpcClient(pi, "-e", str(ext))
    try:
        client.call({"type": "prompt", "message": "/mcp"})
        table = client.wait_for(lambda line: line.get("method") == "notify" and "tiny:" in line.get("message", ""), timeout=90)
        assert "tiny: connected" in table["message"]
        client.call({"type": "prompt", "message": "/servers"})
        listed = client.wait_for(lambda line: line.get("method") == "notify" and line["message"].startswith("servers"))
        assert listed["message"] == 'servers [["tiny", "extension"]]'
        client.call({"type": "prompt", "message": "/drop"})
        dropped = client.wait_for(lambda line: line.get("method") == "notify" and line["message"].startswith("servers"))
        assert dropped["message"] == "servers []"
        state = client.call({"type": "get_state"})
        assert state["success"]
    finally:
        client.close()
