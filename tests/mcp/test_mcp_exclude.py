"""``-xt/--exclude-tools`` removes MCP tools too, by exact name or ``*`` pattern (as Pi 1.6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.conftest import tiny, write_mcp
from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer, Text, Turn


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server, "anthropic")
    (home.home / "settings.toml").write_text("[mcp]\nstartup_wait = 90\n", encoding="utf-8")
    write_mcp(home.home / "mcp.json", {"tiny": tiny()})
    return home


def declared(pi: PiHome, sse_server: SSEServer, *args: str) -> list[str]:
    sse_server.requests.clear()
    sse_server.enqueue(Turn(blocks=[Text("ok")]))
    done = pi.run(*args, "-p", "hi")
    assert done.returncode == 0, done.stderr
    return [t["name"] for t in sse_server.requests[0].json.get("tools", [])]


def test_exclude_tools_drops_mcp_tools_by_name_and_pattern(pi: PiHome, sse_server: SSEServer) -> None:
    every = declared(pi, sse_server)
    assert "mcp__tiny__echo" in every and "mcp__tiny__add" in every and "read" in every
    one = declared(pi, sse_server, "-xt", "mcp__tiny__echo")
    assert "mcp__tiny__echo" not in one and "mcp__tiny__add" in one and "read" in one
    none = declared(pi, sse_server, "--exclude-tools", "mcp__*")
    assert [n for n in none if n.startswith("mcp__")] == [] and "read" in none
