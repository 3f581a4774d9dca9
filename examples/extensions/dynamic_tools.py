"""Tools registered while pi runs (port of Pi's dynamic-tools.ts): ``echo_session`` at
``session_start``, ``/add-echo-tool <name>`` adds more; each joins the active tools at once."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from pi_coder.extensions import AgentToolResult, ExtensionAPI, TextContent, ToolDefinition


class EchoParams(BaseModel):
    message: str = Field(description="Message to echo")


def extension(pi: ExtensionAPI) -> None:
    registered: set[str] = set()

    def register_echo(name: str, label: str, prefix: str) -> bool:
        if name in registered:
            return False
        registered.add(name)

        async def execute(tool_call_id: str, params: EchoParams, signal: Any, on_update: Any, ctx: Any) -> AgentToolResult:
            return AgentToolResult(
                content=[TextContent(text=f"{prefix}{params.message}")], details={"tool": name, "prefix": prefix}
            )

        pi.register_tool(
            ToolDefinition(
                name=name,
                label=label,
                description=f"Echo a message with prefix: {prefix}",
                prompt_snippet=f"Echo back user-provided text with {prefix.strip()} prefix",
                prompt_guidelines=["Use echo_session when the user asks for exact echo output."],
                parameters=EchoParams,
                execute=execute,
            )
        )
        return True

    @pi.on("session_start")
    def start(event: Any, ctx: Any) -> None:
        register_echo("echo_session", "Echo Session", "[session] ")
        ctx.ui.notify("Registered dynamic tool: echo_session")

    @pi.command("add-echo-tool", "Register a new echo tool dynamically: /add-echo-tool <tool_name>")
    def add(args: str, ctx: Any) -> None:
        name = args.strip().lower()
        if not re.fullmatch(r"[a-z0-9_]+", name):
            ctx.ui.notify("Usage: /add-echo-tool <tool_name> (lowercase, numbers, underscores)", "warning")
            return
        if not register_echo(name, f"Echo {name}", f"[{name}] "):
            ctx.ui.notify(f"Tool already registered: {name}", "warning")
            return
        ctx.ui.notify(f"Registered dynamic tool: {name}")
