"""The ls tool: list a directory, sorted case-insensitively, directories marked with ``/``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field

from pi_coder.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from pi_coder.ai.abort import AbortSignal
from pi_coder.errors import ToolError
from pi_coder.tools._listing import existing_dir, listing_result, text_result
from pi_coder.tools._paths import resolve_path
from pi_coder.tools._schema import ToolParams
from pi_coder.tools._settings import ToolSettings
from pi_coder.tools._truncate import DEFAULT_MAX_BYTES

__all__ = ["LsParams", "create_ls_tool"]

DEFAULT_LIMIT = 500
DESCRIPTION = (
    "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "
    f"Includes dotfiles. Output is truncated to {DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)


class LsParams(ToolParams):
    path: str | None = Field(default=None, description="Directory to list (default: current directory)")
    limit: int | None = Field(default=None, description="Maximum number of entries to return (default: 500)")


def _list(directory: Path) -> list[str]:
    existing_dir(directory)
    try:
        names = os.listdir(directory)
    except OSError as exc:
        raise ToolError(f"Cannot read directory: {exc}") from exc
    names.sort(key=lambda n: (n.casefold(), n))
    entries = []
    for name in names:
        try:
            is_dir = (directory / name).is_dir()
        except OSError:
            is_dir = False
        entries.append(name + "/" if is_dir else name)
    return entries


def create_ls_tool(cwd: str | os.PathLike[str], settings: ToolSettings | None = None) -> AgentTool[LsParams]:
    """The ``ls`` tool bound to ``cwd``."""

    async def execute(
        tool_call_id: str, args: LsParams, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        directory = resolve_path(args.path or ".", cwd)
        limit = max(1, args.limit or DEFAULT_LIMIT)
        entries = await asyncio.to_thread(_list, directory)
        if not entries:
            return text_result("(empty directory)")
        return listing_result(
            entries[:limit], limit=limit, limit_reached=len(entries) > limit, unit="entries",
            limit_key="entryLimitReached", refine=False,
        )  # fmt: skip

    return AgentTool(name="ls", label="ls", description=DESCRIPTION, parameters=LsParams, execute=execute)
