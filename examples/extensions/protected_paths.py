"""Blocks ``write`` and ``edit`` on protected paths (``.env``, ``.git/``, ``node_modules/``) (port
of Pi's protected-paths.ts)."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import ExtensionAPI, ToolCallResult

PROTECTED = (".env", ".git/", "node_modules/")


def extension(pi: ExtensionAPI) -> None:
    @pi.on("tool_call")
    def guard(event: Any, ctx: Any) -> ToolCallResult | None:
        if event.tool_name not in ("write", "edit"):
            return None
        path = str(event.input.get("path", ""))
        if any(part in path for part in PROTECTED):
            if ctx.has_ui:
                ctx.ui.notify(f"Blocked write to protected path: {path}", "warning")
            return ToolCallResult(block=True, reason=f'Path "{path}" is protected')
        return None
