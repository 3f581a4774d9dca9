"""The MCP resource tools (docs/mcp.md#resources), as Pi 1.6 names them.

``list_mcp_resources`` and ``list_mcp_resource_templates`` answer JSON (``{server?, resources |
resourceTemplates: [{server, uri, name, ...}], nextCursor?}``): with ``server`` one page
(``cursor`` continues), without it every page of every server. ``read_mcp_resource`` reads one
``uri`` of one ``server``: text (and ``text/*`` blobs) as text, images as images, other binary
contents saved to a temporary file whose path the model gets.

The tools exist while some connected, enabled server whose exposure is not ``hidden`` offers
resources; their exposure is the widest among those servers (``direct``, else ``deferred``:
``tool_search`` finds them). Resources of MCP Apps (``ui://`` URIs, ``text/html;profile=mcp-app``)
and icons are left out. Each call first waits for servers still connecting (within their timeouts).
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from pi_coder.mcp.seams import RESOURCE_TOOLS

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentTool
    from pi_coder.mcp.client import Connection
    from pi_coder.mcp.seams import ToolsetView
    from pi_coder.mcp.server import McpServer

__all__ = ["RESOURCE_TOOLS", "resource_exposure", "resource_tools", "serves_resources"]

LIST, TEMPLATES, READ = RESOURCE_TOOLS


def _exposure(server: McpServer) -> str:
    value = server.config.exposure
    return "deferred" if value == "codemode" else value


def serves_resources(server: McpServer) -> bool:
    """Whether ``server`` is connected, enabled, not ``hidden`` and offers resources."""
    return (
        server.state == "connected"
        and server.config.enabled
        and "resources" in server.capabilities
        and _exposure(server) != "hidden"
    )


def resource_exposure(servers: list[McpServer]) -> str | None:
    """``direct``, ``deferred`` or None (no server offers resources): the widest among them."""
    found = [_exposure(s) for s in servers if serves_resources(s)]
    if not found:
        return None
    return "direct" if "direct" in found else "deferred"


class ListParams(BaseModel):
    server: str | None = Field(default=None, description="One server's resources (one page); omit for every server's")
    cursor: str | None = Field(default=None, description="nextCursor of the previous page (with server)")


class ReadParams(BaseModel):
    server: str = Field(description="The MCP server offering the resource")
    uri: str = Field(description="The resource URI (from list_mcp_resources or a resource link)")


def _shown(item: dict[str, Any]) -> bool:
    """MCP Apps' resources are left out (pi does not render them)."""
    uri = str(item.get("uri") or item.get("uriTemplate") or "")
    mime = str(item.get("mimeType") or "").replace(" ", "").lower()
    return not uri.startswith("ui://") and "profile=mcp-app" not in mime


def _text_blob(part: dict[str, Any]) -> str | None:
    """A ``text/*`` blob decoded as UTF-8, or None when it is not valid UTF-8."""
    try:
        return base64.b64decode(part.get("blob", "") or b"").decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def _entry(server: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"server": server, **{k: v for k, v in item.items() if k != "icons"}}


def _page(
    fetch: Callable[[Connection, str | None], Awaitable[dict[str, Any]]], cursor: str | None, connection: Connection
) -> Awaitable[dict[str, Any]]:
    return fetch(connection, cursor)


def resource_tools(toolset: ToolsetView) -> list[AgentTool]:
    """The three tools, bound to ``toolset`` (its manager's servers)."""
    from pi_coder.agent.types import AgentTool, AgentToolResult
    from pi_coder.ai.types import TextContent

    manager = toolset.manager

    async def ready() -> list[str]:
        """Wait for servers still connecting; the names of those offering resources."""
        manager.start()
        waiting = [s for s in manager.servers.values() if s.state == "connecting" and s.config.enabled]
        if waiting:
            await manager.wait_connecting(max(s.config.timeout for s in waiting))
        return [s.name for s in manager.servers.values() if serves_resources(s)]

    def pick(names: list[str], server: str) -> str:
        if server in names:
            return server
        offered = ", ".join(names) or "none"
        raise ValueError(f'No connected MCP server "{server}" offers resources. Servers with resources: {offered}')

    def listing(key: str, fetch: Callable[[Connection, str | None], Awaitable[dict[str, Any]]]) -> Any:
        async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            names = await ready()
            out: dict[str, Any] = {}
            items: list[dict[str, Any]] = []
            if params.server is not None:
                name = pick(names, params.server)
                page = await toolset.request(name, lambda c: fetch(c, params.cursor))
                items = [_entry(name, i) for i in page.get(key) or [] if _shown(i)]
                out = {"server": name, key: items}
                if page.get("nextCursor"):
                    out["nextCursor"] = page["nextCursor"]
            else:
                errors: list[str] = []
                for name in names:
                    cursor: str | None = None
                    try:
                        for _ in range(1000):  # a server that never stops paging is cut off
                            page = await toolset.request(name, functools.partial(_page, fetch, cursor))
                            items.extend(_entry(name, i) for i in page.get(key) or [] if _shown(i))
                            cursor = page.get("nextCursor")
                            if not cursor:
                                break
                    except Exception as exc:  # noqa: BLE001 - one server's failure is reported, the rest listed
                        errors.append(f"{name}: {exc}")
                out = {key: items}
                if errors:
                    out["errors"] = errors
            text = json.dumps(out, ensure_ascii=False, separators=(",", ":"))  # compact, as Pi's
            return AgentToolResult(content=[TextContent(text=text)], details=out)

        return execute

    async def read(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        from pi_coder.ai.types import ImageContent
        from pi_coder.mcp.tools import save_blob

        name = pick(await ready(), params.server)
        result = await toolset.request(name, lambda c: c.read_resource(params.uri))
        content: list[Any] = []
        for part in result.get("contents") or []:
            mime = str(part.get("mimeType") or "application/octet-stream")
            if "text" in part:
                content.append(TextContent(text=str(part["text"])))
            elif mime.startswith("text/") and (decoded := _text_blob(part)) is not None:
                content.append(TextContent(text=decoded))  # a text blob reads as text, as in Pi
            elif mime.startswith("image/"):
                content.append(ImageContent(data=str(part.get("blob", "")), mime_type=mime))
            else:
                raw = base64.b64decode(part.get("blob", "") or b"")
                path = save_blob(raw)
                content.append(TextContent(text=f"[Binary resource {part.get('uri')} ({mime}, {len(raw)} bytes) saved to {path}]"))
        if not content:
            content.append(TextContent(text=f"Resource {params.uri} of {name} has no contents."))
        return AgentToolResult(content=content, details={"server": name, "uri": params.uri})

    def tool(name: str, description: str, params: type[BaseModel], execute: Any) -> AgentTool:
        return AgentTool(name=name, label=name, description=description, parameters=params, execute=execute, read_only=True)

    return [
        tool(
            LIST,
            "List the resources of the connected MCP servers as JSON ({server, uri, name, ...}). "
            "With server: one page (pass nextCursor as cursor for the next); without: every server's.",
            ListParams,
            listing("resources", lambda c, cursor: c.list_resources(cursor)),
        ),
        tool(
            TEMPLATES,
            "List the resource URI templates of the connected MCP servers as JSON (resources they do not list "
            "directly; fill a template in and read it with read_mcp_resource).",
            ListParams,
            listing("resourceTemplates", lambda c, cursor: c.list_resource_templates(cursor)),
        ),
        tool(
            READ,
            "Read one resource of an MCP server by server and uri: text comes back as text, images as images, "
            "other binary contents as a saved file's path.",
            ReadParams,
            read,
        ),
    ]
