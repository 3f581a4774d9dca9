"""Start-up notices of the MCP manager against real servers."""

from __future__ import annotations

from pathlib import Path

from pi_coder.mcp.config import load_servers
from pi_coder.mcp.manager import McpManager
from tests.mcp.conftest import tiny, write_mcp
from tests.mcp.test_mcp_client import Host


async def test_too_many_tools_notice_counts_after_every_server_connected(tmp_path: Path) -> None:
    # seven servers of 8 tools: 56 direct tools; the sixth alone already passes the limit (48)
    write_mcp(tmp_path / "mcp.json", {f"s{i}": tiny(timeout=120) for i in range(7)})
    config = load_servers(str(tmp_path), project_trusted=False, global_path=tmp_path / "mcp.json")
    manager = McpManager(config, str(tmp_path))
    notices: list[str] = []
    manager.attach(Host(), lambda _level, text: notices.append(text))
    manager.start()
    try:
        assert await manager.wait_connecting(240) == []
        many = [n for n in notices if "MCP tools are declared" in n]
        assert many == [many[0]] and many[0].startswith("56 MCP tools are declared"), notices
    finally:
        await manager.close()
