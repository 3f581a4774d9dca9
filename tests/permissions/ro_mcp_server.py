"""A stdio MCP server with one read-only tool (``readOnlyHint``) and one that writes a file."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("ro")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def look(path: str) -> str:
    """Read a file."""
    return Path(path).read_text()


@server.tool()
def poke(path: str) -> str:
    """Write a file."""
    Path(path).write_text("poked\n")
    return "poked"


if __name__ == "__main__":
    server.run("stdio")
