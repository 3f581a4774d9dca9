"""Widgets above and below the editor (port of Pi's widget-placement.ts)."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    @pi.on("session_start")
    def place(event: Any, ctx: Any) -> None:
        if not ctx.has_ui:
            return
        ctx.ui.set_widget("widget-above", ["Above editor widget"])
        ctx.ui.set_widget("widget-below", ["Below editor widget"], placement="below_editor")
