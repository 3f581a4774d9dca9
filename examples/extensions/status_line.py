"""Turn progress in the footer with ``ctx.ui.set_status`` and theme colours (port of Pi's
status-line.ts)."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    turns = {"count": 0}

    @pi.on("session_start")
    def ready(event: Any, ctx: Any) -> None:
        ctx.ui.set_status("status-demo", ctx.ui.theme.fg("dim", "Ready"))

    @pi.on("turn_start")
    def started(event: Any, ctx: Any) -> None:
        turns["count"] += 1
        theme = ctx.ui.theme
        ctx.ui.set_status("status-demo", theme.fg("accent", "●") + theme.fg("dim", f" Turn {turns['count']}..."))

    @pi.on("turn_end")
    def ended(event: Any, ctx: Any) -> None:
        theme = ctx.ui.theme
        ctx.ui.set_status("status-demo", theme.fg("success", "✓") + theme.fg("dim", f" Turn {turns['count']} complete"))
