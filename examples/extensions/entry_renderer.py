"""``/status-card <text>`` appends a durable entry the model never sees, drawn by an entry
renderer (port of Pi's entry-renderer.ts); Ctrl+O shows its time too."""

from __future__ import annotations

import time
from typing import Any

from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    def draw(entry: Any, *, expanded: bool, theme: Any) -> str:
        data = entry.data or {"message": "No data", "timestamp": time.time()}
        text = f"{theme.fg('accent', '[status]')} {data['message']}"
        if expanded:
            text += "\n" + theme.fg("dim", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(data["timestamp"])))
        return text

    pi.register_entry_renderer("status-card", draw)

    @pi.command("status-card", "Render a durable status card that is not sent to the LLM")
    def card(args: str, ctx: Any) -> None:
        pi.append_entry("status-card", {"message": args.strip() or "Status card", "timestamp": time.time()})
