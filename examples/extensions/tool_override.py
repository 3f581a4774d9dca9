"""Replaces the built-in ``read`` with an audited one (port of Pi's tool-override.ts): sensitive
paths (``.env``, secrets, credentials, ``~/.ssh``...) are refused, every access is logged to
``read-access.log`` in pi's config folder, the rest is delegated to the built-in tool."""

from __future__ import annotations

import os
import re
import time
from typing import Any

from pydantic import BaseModel, Field

from pi_coder.extensions import AgentToolResult, ExtensionAPI, TextContent, ToolDefinition

BLOCKED = [
    re.compile(p, re.IGNORECASE)
    for p in (r"\.env$", r"\.env\..+$", r"secrets?\.(json|ya?ml|toml)$", r"credentials?\.(json|ya?ml|toml)$", r"/\.(ssh|aws|gnupg)/")
]


class ReadParams(BaseModel):
    path: str = Field(description="Path to the file to read (relative or absolute)")
    offset: int | None = Field(default=None, description="Line number to start reading from (1-indexed)")
    limit: int | None = Field(default=None, description="Maximum number of lines to read")


def _log(path: str, allowed: bool, reason: str = "") -> None:
    from pi_coder.paths import config_dir

    line = f"[{time.strftime('%Y-%m-%dT%H:%M:%S')}] {'ALLOWED' if allowed else 'BLOCKED'}: {path}"
    try:
        with open(config_dir() / "read-access.log", "a", encoding="utf-8") as log:
            log.write(line + (f" ({reason})" if reason else "") + "\n")
    except OSError:
        pass


def _absolute(cwd: str, path: str) -> str:
    return os.path.abspath(os.path.join(cwd, os.path.expanduser(path)))


def extension(pi: ExtensionAPI) -> None:
    async def execute(tool_call_id: str, params: ReadParams, signal: Any, on_update: Any, ctx: Any) -> AgentToolResult:
        absolute = _absolute(ctx.cwd, params.path)
        if any(p.search(absolute) for p in BLOCKED):
            _log(absolute, False, "matches blocked pattern")
            text = f'Access denied: "{params.path}" matches a blocked pattern (sensitive file).'
            return AgentToolResult(content=[TextContent(text=text)], details={"blocked": True})
        _log(absolute, True)
        from pi_coder.tools import create_tool

        builtin = create_tool("read", ctx.cwd)
        args = builtin.parameters.model_validate(params.model_dump(exclude_none=True))
        return await builtin.execute(tool_call_id, args, signal, on_update)

    pi.register_tool(
        ToolDefinition(
            name="read",  # a built-in's name: this replaces it
            label="read (audited)",
            description="Read the contents of a file with access logging. Sensitive paths (.env, secrets, credentials) are blocked.",
            parameters=ReadParams,
            execute=execute,
            read_only=True,
        )
    )
