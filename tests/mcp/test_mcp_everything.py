"""pi_coder's MCP client against npm ``server-everything`` (stdio and Streamable HTTP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_coder.mcp.config import load_servers
from pi_coder.mcp.manager import McpManager
from tests.mcp.conftest import write_mcp
from tests.mcp.everything import EverythingHttp, everything_stdio
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


def _bytes_and_remove(path: str) -> bytes:
    data = Path(path).read_bytes()
    Path(path).unlink()
    return data


def _tools(host: Host) -> dict[str, Any]:
    return {t.name: t for t in host.agent.state.tools}


async def _run(host: Host, name: str, args: dict[str, Any]) -> Any:
    tool = _tools(host)[name]
    return await tool.execute("call-1", tool.parameters.model_validate(args), None, None)


async def test_resource_tools_list_read_and_links(tmp_path: Path) -> None:
    from pi_coder.ai.types import ImageContent, TextContent
    from tests.mcp.conftest import tiny

    manager, host, _ = await start_manager(tmp_path, {"every": everything_stdio(), "tiny": tiny()})
    try:
        tools = _tools(host)
        for name in ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"):
            assert tools[name].read_only, name
        everything = json.loads((await _run(host, "list_mcp_resources", {})).content[0].text)
        servers = {r["server"] for r in everything["resources"]}
        assert servers == {"every", "tiny"}
        uris = [r["uri"] for r in everything["resources"]]
        assert "tiny://dot.png" in uris and not any(u.startswith("ui://") for u in uris)  # MCP Apps left out
        doc = next(r for r in everything["resources"] if r["server"] == "every")
        one = json.loads((await _run(host, "list_mcp_resources", {"server": "every"})).content[0].text)
        assert one["server"] == "every" and doc in one["resources"]
        templates = json.loads((await _run(host, "list_mcp_resource_templates", {"server": "every"})).content[0].text)
        assert any("{resourceId}" in t["uriTemplate"] for t in templates["resourceTemplates"])

        text = await _run(host, "read_mcp_resource", {"server": "every", "uri": doc["uri"]})
        assert isinstance(text.content[0], TextContent) and len(text.content[0].text) > 20
        text_blob = await _run(host, "read_mcp_resource", {"server": "every", "uri": "demo://resource/dynamic/blob/1"})
        assert text_blob.content[0].text.startswith("Resource 1: This is a base64 blob")  # text/plain: as text, as Pi
        blob = await _run(host, "read_mcp_resource", {"server": "tiny", "uri": "tiny://data.bin"})
        saved = blob.content[0].text
        assert saved.startswith("[Binary resource tiny://data.bin (application/octet-stream, 4 bytes) saved to ")
        assert _bytes_and_remove(saved.rsplit("saved to ", 1)[1].rstrip("]")) == bytes([0, 1, 2, 255])
        image = await _run(host, "read_mcp_resource", {"server": "tiny", "uri": "tiny://dot.png"})
        assert isinstance(image.content[0], ImageContent) and image.content[0].mime_type == "image/png"
        with pytest.raises(ValueError, match='No connected MCP server "nope" offers resources'):
            await _run(host, "read_mcp_resource", {"server": "nope", "uri": "x"})

        links = await manager.call("every", "get-resource-links", {"count": 2}, None, None)
        joined = "\n".join(b.text for b in links.content if isinstance(b, TextContent))
        assert '(text/plain): Resource 1: plaintext resource. Read it with read_mcp_resource (server "every")]' in joined
    finally:
        await manager.close()


async def test_resource_tools_follow_exposure_and_exclusion(tmp_path: Path) -> None:
    from tests.mcp.conftest import tiny

    manager, host, _ = await start_manager(tmp_path, {"tiny": tiny(exposure="deferred")})
    try:
        names = set(_tools(host))
        assert "read_mcp_resource" not in names and "tool_search" in names  # deferred: tool_search finds them
        assert "read_mcp_resource" in [t.name for t in manager.deferred_tools()]
        manager.declare(["read_mcp_resource"])
        assert "read_mcp_resource" in _tools(host)
    finally:
        await manager.close()
    write_mcp(tmp_path / "mcp.json", {"tiny": tiny()})
    config = load_servers(str(tmp_path), project_trusted=False, global_path=tmp_path / "mcp.json")
    manager = McpManager(config, str(tmp_path), tool_exclude=["mcp__*"])
    host = Host()
    manager.attach(host, lambda _level, _text: None)
    manager.start()
    try:
        assert await manager.wait_connecting(60) == []
        assert _tools(host) == {}  # the resource tools count as MCP tools
    finally:
        await manager.close()


def _system_text(request: dict[str, Any]) -> str:
    system = request.get("system")
    return system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system or [])


def test_mcp_servers_section_of_the_system_prompt(tmp_path: Path) -> None:
    """Servers whose tools are not all direct are listed with their description or instructions' first line."""
    from tests.mcp.conftest import tiny
    from tests.modes.pirun import PiHome
    from tests.support.sse_server import SSEServer, Text, Turn

    with SSEServer() as sse_server:
        pi = PiHome(tmp_path, sse_server, "anthropic")
        (pi.home / "settings.toml").write_text("[mcp]\nstartup_wait = 90\n", encoding="utf-8")
        write_mcp(
            pi.home / "mcp.json",
            {
                "every": everything_stdio(exposure="deferred"),
                "tiny": tiny(exposure="deferred", description="Adds numbers\n and echoes text"),
                "direct": tiny(),
            },
        )
        sse_server.enqueue(Turn(blocks=[Text("ok")]))
        done = pi.run("-p", "/mcp", "hello")
        assert done.returncode == 0, done.stderr
        system = _system_text(sse_server.requests[0].json)
        assert (
            "<mcp_servers>\nMCP servers whose tools are not declared to you. Load the tools of `tool_search` "
            "servers with `tool_search`.\n"
            "- mcp__every (tool_search): # Everything Server – Server Instructions\n"
            "- mcp__tiny (tool_search): Adds numbers and echoes text\n"
            "</mcp_servers>"
        ) in system, system


async def test_tools_list_changed_during_the_first_listing_is_honoured(tmp_path: Path) -> None:
    """server-everything registers its client-dependent tools once initialized and announces them
    with tools/list_changed, often while pi's first tools/list is on its way."""
    import asyncio

    manager, host, _ = await start_manager(tmp_path, {"every": everything_stdio()})
    try:
        for _ in range(200):  # the announcement may also come just after the first listing
            if "mcp__every__get-roots-list".replace("-", "_") in _tools(host):
                break
            await asyncio.sleep(0.05)
        assert "mcp__every__get_roots_list" in _tools(host), sorted(_tools(host))
        assert "get-roots-list" in [t["name"] for t in manager.servers["every"].tools]
    finally:
        await manager.close()


def test_mcp_prompts_as_slash_commands(tmp_path: Path) -> None:
    """``/mcp__every__args_prompt Paris`` sends server-everything's prompt text; mistakes are one line."""
    from tests.modes.pirun import PiHome, RpcClient
    from tests.support.sse_server import SSEServer, Text, Turn

    with SSEServer() as sse_server:
        pi = PiHome(tmp_path, sse_server, "anthropic")
        (pi.home / "settings.toml").write_text("[mcp]\nstartup_wait = 90\n", encoding="utf-8")
        write_mcp(pi.home / "mcp.json", {"every": everything_stdio()})
        sse_server.enqueue(Turn(blocks=[Text("sunny")]), Turn(blocks=[Text("simple")]))
        done = pi.run("-p", "/mcp__every__args_prompt Paris 'Ile de France'", "/mcp__every__simple_prompt")
        assert done.returncode == 0, done.stderr
        asked = sse_server.requests[0].json["messages"][-1]["content"][0]["text"]
        assert asked == "What's weather in Paris, Ile de France?", asked
        simple = sse_server.requests[1].json["messages"][-1]["content"][0]["text"]
        assert simple == "This is a simple prompt without arguments."
        bad = pi.run("-p", "/mcp__every__args_prompt")
        assert "/mcp__every__args_prompt needs city (usage: /mcp__every__args_prompt <city> [state])" in bad.stderr
        assert len(sse_server.requests) == 2  # nothing sent for the mistake

        rpc = RpcClient(pi)
        try:
            rpc.call({"type": "prompt", "message": "/mcp"})  # waits for the servers
            rpc.wait_for(lambda line: line.get("type") == "extension_ui_request", timeout=90)
            commands = rpc.call({"type": "get_commands"})["data"]["commands"]
            prompt = next(c for c in commands if c["name"] == "mcp__every__args_prompt")
            assert prompt["source"] == "mcp" and prompt["usage"] == "/mcp__every__args_prompt <city> [state]"
        finally:
            rpc.close()
