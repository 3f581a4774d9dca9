"""What the tool set, the prompt commands and the resource tools see of the manager and the tool
set: Protocols, so none of them imports the module that owns it (no import cycle in the package,
type-level imports included)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pi_coder.mcp.client import Connection
    from pi_coder.mcp.server import McpServer

__all__ = ["RESOURCE_TOOLS", "ServerHost", "ToolsetView"]

RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")
"""The names of :mod:`pi_coder.mcp.resources`' tools (that module is imported only once some server offers resources)."""


class ToolsetView(Protocol):
    """The tool set as the resource tools and prompt commands use it."""

    @property
    def manager(self) -> ServerHost: ...

    async def request(self, server_name: str, op: Callable[[Connection], Awaitable[dict[str, Any]]]) -> dict[str, Any]: ...


class ServerHost(Protocol):
    """The manager (``McpManager``) as its tool set, prompts and resources see it."""

    servers: dict[str, McpServer]
    session: Any  # the AgentSession (core is above mcp: never imported here)
    tool_filter: list[str] | None
    tool_exclude: list[str]

    @property
    def closed(self) -> bool: ...

    @property
    def toolset(self) -> ToolsetView: ...

    def start(self) -> None: ...

    async def wait_connecting(self, timeout: float) -> list[str]: ...

    async def reconnect(self, name: str, *, wait: bool = False) -> None: ...

    def notify(self, level: str, text: str) -> None: ...
