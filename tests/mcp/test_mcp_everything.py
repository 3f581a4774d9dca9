"""pi_coder's MCP client against npm ``server-everything`` (stdio and Streamable HTTP)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_coder.mcp.config import load_servers
from pi_coder.mcp.manager import McpManager
from tests.mcp.conftest import write_mcp
from tests.mcp.everything import EverythingHttp, everything_http, everything_stdio  # noqa: F401 - fixture
from tests.mcp.test_mcp_client import Host


async def start_manager(tmp_path: Path, servers: dict[str, Any]) -> tuple[McpManager, Host, list[str]]:
    write_mcp(tmp_path / "mcp.json", servers)
    config = load_servers(str(tmp_path), project_trusted=False, global_path=tmp_path / "mcp.json")
    manager = McpManager(config, str(tmp_path))
    host, notices = Host(), []
    manager.attach(host, lambda _level, text: notices.append(text))
    manager.start()
    assert await manager.wait_connecting(90) == []
    return manager, host, notices


async def test_http_server_restarted_answers_400_and_pi_reinitializes(
    tmp_path: Path, everything_http: EverythingHttp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """server-everything answers a forgotten session with 400 (not 404): re-initialize once, retry."""
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path / "home"))
    manager, _, notices = await start_manager(tmp_path, {"every": {"url": everything_http.url, "timeout": 60}})
    try:
        first = await manager.call("every", "echo", {"message": "one"}, None, None)
        assert "one" in first.content[0].text
        everything_http.stop()
        everything_http.start()
        second = await manager.call("every", "echo", {"message": "two"}, None, None)
        assert "two" in second.content[0].text
        assert manager.servers["every"].state == "connected"
        assert not any("failed" in n for n in notices), notices
    finally:
        await manager.close()
