"""``/bookmark [label]`` labels the last assistant message (shown in ``/tree``); ``/unbookmark``
removes the latest label (port of Pi's bookmark.ts)."""

from __future__ import annotations

import time
from typing import Any

from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    @pi.command("bookmark", "Bookmark last message (usage: /bookmark [label])")
    def bookmark(args: str, ctx: Any) -> None:
        label = args.strip() or f"bookmark-{int(time.time() * 1000)}"
        for entry in reversed(ctx.session.entries()):
            if entry.type == "message" and getattr(entry.message, "role", None) == "assistant":
                pi.set_label(entry.id, label)
                ctx.ui.notify(f"Bookmarked as: {label}")
                return
        ctx.ui.notify("No assistant message to bookmark", "warning")

    @pi.command("unbookmark", "Remove bookmark from last labeled entry")
    def unbookmark(args: str, ctx: Any) -> None:
        for entry in reversed(ctx.session.entries()):
            label = ctx.session.get_label(entry.id)
            if label:
                pi.set_label(entry.id, None)
                ctx.ui.notify(f"Removed bookmark: {label}")
                return
        ctx.ui.notify("No bookmarked entry found", "warning")
