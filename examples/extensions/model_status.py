"""The model in a footer status, updated on ``model_select`` (port of Pi's model-status.ts)."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    @pi.on("model_select")
    def selected(event: Any, ctx: Any) -> None:
        previous = f"{event.previous_model.provider}/{event.previous_model.id}" if event.previous_model else "none"
        now = f"{event.model.provider}/{event.model.id}"
        if event.source != "restore":
            ctx.ui.notify(f"Model: {previous} -> {now} ({event.source})")
        ctx.ui.set_status("model", f"🤖 {event.model.id}")
