"""The write tool: create or overwrite a file, creating parent directories."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field

from pi_coder.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.types import TextContent
from pi_coder.errors import ToolError
from pi_coder.tools._files import refuse_special, write_file_atomic
from pi_coder.tools._locks import file_mutation_lock
from pi_coder.tools._paths import lexical_path, pinned
from pi_coder.tools._schema import ToolParams
from pi_coder.tools._settings import ToolSettings

__all__ = ["WriteParams", "create_write_tool"]

DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
    "Automatically creates parent directories."
)


class WriteParams(ToolParams):
    path: str = Field(description="Path to the file to write (relative or absolute)")
    content: str = Field(description="Content to write to the file")


def _write_sync(file: Path, content: str, shown: str, spelled: str) -> None:
    refuse_special(spelled, shown, "write only replaces regular files")
    write_file_atomic(file, content.encode("utf-8", "surrogatepass"), shown)


def create_write_tool(cwd: str | os.PathLike[str], settings: ToolSettings | None = None) -> AgentTool[WriteParams]:
    """The ``write`` tool bound to ``cwd``."""

    async def execute(
        tool_call_id: str, args: WriteParams, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        file = pinned(tool_call_id, args.path, cwd)
        async with file_mutation_lock(file):
            if signal is not None and signal.aborted:
                raise ToolError("Operation aborted")
            await asyncio.to_thread(_write_sync, file, args.content, args.path, lexical_path(args.path, cwd))
        text = f"Successfully wrote {len(args.content)} bytes to {args.path}"
        return AgentToolResult(content=[TextContent(text=text)], details=None)

    return AgentTool(name="write", label="write", description=DESCRIPTION, parameters=WriteParams, execute=execute)
