"""A minimal custom tool: ``hello`` greets someone (port of Pi's hello.ts)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from pi_coder.extensions import AgentToolResult, ExtensionAPI, TextContent, ToolDefinition


class HelloParams(BaseModel):
    name: str = Field(description="Name to greet")


async def execute(tool_call_id: str, params: HelloParams, signal: Any, on_update: Any, ctx: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=f"Hello, {params.name}!")], details={"greeted": params.name})


def extension(pi: ExtensionAPI) -> None:
    pi.register_tool(
        ToolDefinition(
            name="hello",
            label="Hello",
            description="A simple greeting tool",
            parameters=HelloParams,
            execute=execute,
        )
    )
