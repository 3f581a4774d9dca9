"""The ``mcp_servers`` section of the system prompt (docs/mcp.md#tools), as Pi 1.6 writes it.

Servers whose tools are not all declared to the model (``deferred``, or Pi's ``codemode``, which
pi_coder serves through ``tool_search`` too) are listed, one line each, with a summary: the
configured ``description``, else, once connected, the first line of the server's ``instructions``.
Without such servers there is no section. The section is brought up to date when a prompt
starts (after the first prompt's wait for servers with direct tools); when it changed, a system
message carrying only the new section is appended to the transcript, so the earlier messages
and the tool declarations stay as they were (and cached).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.mcp.server import McpServer

__all__ = ["SECTION", "servers_section", "summary"]

SECTION = "mcp_servers"
"""The name of the system message section."""

HEADER = (
    "MCP servers whose tools are not declared to you. "
    "Load the tools of `tool_search` servers with `tool_search`."
)


def summary(server: McpServer) -> str:
    """The configured ``description``, else the first non-empty line of the ``instructions`` ("" without)."""
    if server.config.description:
        return " ".join(server.config.description.split())
    for line in server.instructions.splitlines():
        if line.strip():
            return line.strip()
    return ""


def servers_section(servers: Iterable[McpServer]) -> str | None:
    """The section's text for ``servers`` (enabled ones that may defer tools), or None without any."""
    lines: list[str] = []
    for server in sorted(servers, key=lambda s: s.name):
        if not server.config.enabled or not server.config.may_defer():
            continue
        about = summary(server)
        lines.append(f"- mcp__{server.name} (tool_search)" + (f": {about}" if about else ""))
    if not lines:
        return None
    return "\n".join([f"<{SECTION}>", HEADER, *lines, f"</{SECTION}>"])
