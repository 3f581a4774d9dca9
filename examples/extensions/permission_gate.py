"""Asks before dangerous bash commands (``rm -rf``, ``sudo``, ``chmod 777``...); without a UI it
blocks them (port of Pi's permission-gate.ts)."""

from __future__ import annotations

import re
from typing import Any

from pi_coder.extensions import ExtensionAPI, ToolCallResult

DANGEROUS = [re.compile(p, re.IGNORECASE) for p in (r"\brm\s+(-rf?|--recursive)", r"\bsudo\b", r"\b(chmod|chown)\b.*777")]


def extension(pi: ExtensionAPI) -> None:
    @pi.on("tool_call")
    async def gate(event: Any, ctx: Any) -> ToolCallResult | None:
        if event.tool_name != "bash":
            return None
        command = str(event.input.get("command", ""))
        if not any(p.search(command) for p in DANGEROUS):
            return None
        if not ctx.has_ui:
            return ToolCallResult(block=True, reason="Dangerous command blocked (no UI for confirmation)")
        choice = await ctx.ui.select(f"⚠️ Dangerous command:\n\n  {command}\n\nAllow?", ["Yes", "No"])
        if choice != "Yes":
            return ToolCallResult(block=True, reason="Blocked by user")
        return None
