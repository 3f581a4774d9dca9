"""The manager against the real tiny server: result conversion, progress, abort, config rules."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pi_coder.agent import AbortController
from pi_coder.ai.types import ImageContent, TextContent
from pi_coder.mcp.config import ConfigResult, load_servers, parse_entry
from pi_coder.mcp.manager import McpManager
from pi_coder.mcp.tools import tool_name
from tests.mcp.conftest import tiny, write_mcp


class Host:
    """The two things the manager touches on a session: the agent's tool list and the extensions."""

    def __init__(self) -> None:
        self.agent = type("A", (), {"state": type("S", (), {"tools": []})()})()
        self.extensions = None


async def connected(tmp_path: Path, **extra: Any) -> tuple[McpManager, Host, list[str]]:
    write_mcp(tmp_path / "mcp.json", {"tiny": tiny(**extra)})
    config = load_servers(str(tmp_path), project_trusted=False, global_path=tmp_path / "mcp.json")
    manager = McpManager(config, str(tmp_path))
    host, notices = Host(), []
    manager.attach(host, lambda _level, text: notices.append(text))
    manager.start()
    assert await manager.wait_connecting(30) == []
    return manager, host, notices


def _read_and_remove(path: str) -> str:
    text = Path(path).read_text()
    os.unlink(path)
    return text


async def test_text_image_big_and_error_results(tmp_path: Path) -> None:
    manager, host, _ = await connected(tmp_path)
    try:
        picture = await manager.call("tiny", "picture", {}, None, None)
        assert isinstance(picture.content[0], TextContent) and picture.content[0].text == "a dot"
        assert isinstance(picture.content[1], ImageContent) and picture.content[1].mime_type == "image/png"
        big = await manager.call("tiny", "big", {"size": 50000}, None, None)
        text = big.content[0].text
        assert len(text.encode()) <= 21 * 1024 and "chars truncated" in text
        full = big.details["fullOutputPath"]
        assert _read_and_remove(full) == "".join(chr(ord("a") + i % 26) for i in range(50000))
        with pytest.raises(Exception, match="Error executing tool fail"):
            await manager.call("tiny", "fail", {}, None, None)
        assert big.details["server"] == "tiny" and big.details["tool"] == "big"
    finally:
        await manager.close()


async def test_progress_becomes_updates_and_abort_cancels(tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    manager, _, _ = await connected(tmp_path, env={"TINY_CANCEL_MARKER": str(marker)})
    try:
        updates: list[str] = []
        done = await manager.call("tiny", "slow", {"seconds": 0.3}, None, lambda u: updates.append(u.content[0].text))
        assert done.content[0].text == "slept" and updates and "working" in updates[0]
        controller = AbortController()
        call = asyncio.ensure_future(manager.call("tiny", "slow", {"seconds": 30}, controller.signal, None))
        await asyncio.sleep(1.0)
        controller.abort()
        with pytest.raises(RuntimeError, match="Aborted"):
            await asyncio.wait_for(call, 10)
        for _ in range(100):  # notifications/cancelled reached the server: its handler was cancelled
            if marker.exists():
                break
            await asyncio.sleep(0.05)
        assert marker.exists()
        assert (await manager.call("tiny", "add", {"a": 1, "b": 2}, None, None)).content[0].text == "3"
    finally:
        await manager.close()


async def test_tools_join_the_host_and_leave_when_disabled(tmp_path: Path) -> None:
    manager, host, _ = await connected(tmp_path)
    try:
        names = [t.name for t in host.agent.state.tools]
        assert "mcp__tiny__add" in names
        tool = next(t for t in host.agent.state.tools if t.name == "mcp__tiny__add")
        assert tool.label == "tiny/add" and tool.description == "Add two integers."
        await manager.set_enabled("tiny", False)
        assert host.agent.state.tools == []
        assert json.loads((tmp_path / "mcp.json").read_text())["mcpServers"]["tiny"]["enabled"] is False
        assert "tiny: disabled" in manager.lines()[0]
    finally:
        await manager.close()


def test_tool_names() -> None:
    assert tool_name("my-srv", "get.thing") == "mcp__my_srv__get_thing"
    long = tool_name("s" * 30, "t" * 40)
    assert len(long) == 64 and long.startswith("mcp__sss")
    assert tool_name("a", "b", {"mcp__a__b"}) != "mcp__a__b"


def test_config_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN_X", "secret")
    glob = tmp_path / "global.json"
    write_mcp(
        glob,
        {
            "docs": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN_X}", "V": "!echo hi"}},
            "git": {"command": "uvx", "args": ["mcp-server-git"]},
            "old": {"type": "sse", "url": "http://h/sse"},
            "my_srv": {"command": "a"},
            "my-srv": {"command": "b"},
        },
    )
    write_mcp(tmp_path / "proj" / ".pi" / "mcp.json", {"git": {"enabled": False}, "new": {"command": "n"}})
    result = load_servers(str(tmp_path / "proj"), project_trusted=True, global_path=glob)
    assert result.servers["docs"].resolved_headers() == {"Authorization": "Bearer secret", "V": "hi"}
    assert result.servers["git"].enabled is False and result.servers["git"].command == "uvx"
    assert result.servers["new"].source == "project"
    assert any("SSE transport is not supported" in e for e in result.errors)
    assert any("conflicts" in e for e in result.errors)
    untrusted = load_servers(str(tmp_path / "proj"), project_trusted=False, global_path=glob)
    assert "new" not in untrusted.servers and untrusted.ignored_project is not None
    with pytest.raises(ValueError, match="timeout"):
        parse_entry("x", {"command": "a", "timeout": -1}, "global", glob)
    assert ConfigResult().servers == {}
    assert os.environ["TOKEN_X"] == "secret"


def test_tool_search_ranking_and_what_the_first_prompt_waits_for(tmp_path: Path) -> None:
    from pi_coder.agent.types import AgentTool
    from pi_coder.mcp.search import rank
    from pi_coder.mcp.tools import params_model

    def tool(name: str, description: str) -> AgentTool:
        return AgentTool(name=name, label=name, description=description, parameters=params_model({}, name), execute=None)  # type: ignore[arg-type]

    tools = [
        tool("mcp__gh__create_issue", "Open a new issue in a repository."),
        tool("mcp__gh__list_issues", "List the issues of a repository."),
        tool("mcp__gh__get_file", "Read a file from a repository."),
    ]
    assert [t.name for t in rank(tools, "create issue", 5)] == ["mcp__gh__create_issue", "mcp__gh__list_issues"]
    assert [t.name for t in rank(tools, "repository", 2)] == ["mcp__gh__create_issue", "mcp__gh__get_file"]
    assert rank(tools, "weather", 5) == []

    def manager(entry: dict[str, Any], wait: float = 10) -> McpManager:
        write_mcp(tmp_path / "mcp.json", {"s": {"command": "x", **entry}})
        config = load_servers(str(tmp_path), project_trusted=False, global_path=tmp_path / "mcp.json")
        return McpManager(config, str(tmp_path), startup_wait=wait)

    assert manager({}).needs_wait()
    assert not manager({}, wait=0).needs_wait()
    assert not manager({"exposure": "deferred"}).needs_wait()
    assert not manager({"exposure": "codemode"}).needs_wait()
    assert manager({"exposure": "hidden", "toolExposure": {"get_*": "direct"}}).needs_wait()
    assert not manager({"enabled": False}).needs_wait()


async def test_tools_list_changed_during_the_first_listing(tmp_path: Path) -> None:
    """A tools/list_changed that arrives while the first tools/list is answered lists the tools again."""
    import asyncio

    manager, host, _ = await connected(tmp_path, args=[str(Path(__file__).with_name("tiny_server.py")), "--announce-during-list"])
    try:
        for _ in range(100):  # a relist after the handshake would come a little later: give it time to show
            if "mcp__tiny__late" in [t.name for t in host.agent.state.tools]:
                break
            await asyncio.sleep(0.05)
        assert "mcp__tiny__late" in [t.name for t in host.agent.state.tools]
        assert (await manager.call("tiny", "late", {}, None, None)).content[0].text == "late"
    finally:
        await manager.close()
