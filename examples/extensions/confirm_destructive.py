"""Confirms before ``/new`` clears the session or a fork leaves the branch (port of Pi's
confirm-destructive.ts). Without a UI nothing is asked."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import CancelResult, ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    @pi.on("session_before_switch")
    async def switch(event: Any, ctx: Any) -> CancelResult | None:
        if not ctx.has_ui:
            return None
        if event.reason == "new":
            if not await ctx.ui.confirm("Clear session?", "This deletes all messages in the current session."):
                ctx.ui.notify("Clear cancelled", "info")
                return CancelResult(cancel=True)
            return None
        has_messages = any(e.type == "message" for e in ctx.session.entries())
        if has_messages and not await ctx.ui.confirm("Switch session?", "You have messages in the current session."):
            ctx.ui.notify("Switch cancelled", "info")
            return CancelResult(cancel=True)
        return None

    @pi.on("session_before_fork")
    async def fork(event: Any, ctx: Any) -> CancelResult | None:
        if not ctx.has_ui:
            return None
        choice = await ctx.ui.select(
            f"Fork from entry {event.entry_id[:8]}?", ["Yes, create fork", "No, stay in current session"]
        )
        if choice != "Yes, create fork":
            ctx.ui.notify("Fork cancelled", "info")
            return CancelResult(cancel=True)
        return None
