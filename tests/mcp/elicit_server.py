"""A stdio MCP server (the SDK's ``MCPServer``, formerly FastMCP) whose tool asks the user through elicitation.

``book`` sends ``elicitation/create`` with a form (guest name, nights 1-14, breakfast yes/no, a
room choice) and reports what came back: ``booked <json>``, ``declined`` or ``cancelled``.
"""

from __future__ import annotations

import json
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

server = MCPServer("booking")


class Booking(BaseModel):
    guest: str = Field(title="Guest name", description="as on the passport")
    nights: int = Field(title="Nights", ge=1, le=14)
    breakfast: bool = Field(title="Breakfast")
    room: Literal["single", "double", "suite"] = Field(title="Room")


@server.tool()
async def book(ctx: Context) -> str:
    """Book a room (asks the user for the details)."""
    answer = await ctx.elicit("Details for the booking", Booking)
    if answer.action == "accept":
        return "booked " + json.dumps(answer.data.model_dump(), sort_keys=True)
    return "declined" if answer.action == "decline" else "cancelled"


if __name__ == "__main__":
    server.run("stdio")
