"""``/reload`` and the MCP servers (extensions §6.8): changed ones reconnect, removed ones stop,
new ones connect, unchanged ones keep their process; a session's reload hook drives it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pi_coder.mcp.config import load_servers
from pi_coder.mcp.manager import McpManager
from pi_coder.modes import mcp_host
from tests.mcp.conftest import alive, tiny, wait_dead, write_mcp
from tests.mcp.test_mcp_client import Host
from tests.tui.conftest import make_session, project  # noqa: F401 (fixtures)


async def wait_for(condition, what: str, timeout: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_reload_applies_only_what_changed(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    write_mcp(path, {"keep": tiny(), "change": tiny(), "drop": tiny(), "off": tiny()})
    manager = McpManager(load_servers(str(tmp_path), project_trusted=False, global_path=path), str(tmp_path))
    host, notices = Host(), []
    manager.attach(host, lambda _level, text: notices.append(text))
    manager.start()
    try:
        assert await manager.wait_connecting(60) == []
        pids = {name: s.pid for name, s in manager.servers.items()}
        assert all(pids.values())
        write_mcp(
            path,
            {
                "keep": tiny(toolExposure={"echo": "hidden"}),  # exposure only: no reconnect
                "change": tiny("--garbage"),
                "off": tiny(enabled=False),
                "fresh": tiny(),
                "bad": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
            },
        )
        errors = manager.reload(load_servers(str(tmp_path), project_trusted=False, global_path=path))
        assert len(errors) == 1 and "SSE transport is not supported" in errors[0]
        await manager.wait_reloaded()
        assert await manager.wait_connecting(60) == []
        servers = manager.servers
        assert set(servers) == {"keep", "change", "off", "fresh"}
        assert servers["keep"].pid == pids["keep"] and alive(pids["keep"])
        assert servers["change"].state == "connected" and servers["change"].pid != pids["change"]
        assert wait_dead(pids["change"]) and wait_dead(pids["drop"]) and wait_dead(pids["off"])
        assert servers["off"].state == "disabled" and servers["fresh"].state == "connected"
        names = {t.name for t in host.agent.state.tools}
        assert "mcp__keep__add" in names and "mcp__keep__echo" not in names
        assert "mcp__change__add" in names and "mcp__fresh__add" in names
        assert not any(n.startswith(("mcp__drop__", "mcp__off__")) for n in names)
        assert not any("disconnected" in n or "failed" in n for n in notices)
        # The same files again: nothing moves.
        before = {name: s.pid for name, s in servers.items()}
        assert manager.reload(load_servers(str(tmp_path), project_trusted=False, global_path=path)) == []
        await manager.wait_reloaded()
        assert {name: s.pid for name, s in manager.servers.items()} == before
    finally:
        await manager.close()


async def test_session_reload_hook_starts_servers_added_after_start(
    make_session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("PI_CODER_HOME", str(home))
    session, _ = make_session([])
    options = type("Options", (), {"no_mcp": False, "tools": None})()
    assert mcp_host.setup(options, session, project_trusted=False) is None  # no mcp.json yet
    write_mcp(home / "mcp.json", {"tiny": tiny()})
    session.reload_resources()
    manager = session.mcp
    assert manager is not None
    try:
        await wait_for(lambda: "mcp__tiny__add" in session.tool_names, "the tools")
        pid = manager.servers["tiny"].pid
        (home / "mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")
        session.reload_resources()
        await manager.wait_reloaded()
        assert not any(n.startswith("mcp__") for n in session.tool_names)
        assert pid is not None and wait_dead(pid)
    finally:
        await manager.close()
