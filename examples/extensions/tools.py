"""``/tools`` (or Ctrl+Alt+T) turns tools on and off in a ``select`` dialog (port of Pi's
tools.ts). The choice is saved as a ``tools-config`` entry and restored on start."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    def restore(ctx: Any) -> None:
        saved = None
        for entry in ctx.session.branch():
            if entry.type == "custom" and entry.custom_type == "tools-config":
                saved = entry.data
        if saved:
            known = {t.name for t in pi.get_all_tools()}
            pi.set_active_tools([name for name in saved.get("enabled", []) if name in known])

    async def choose(ctx: Any) -> None:
        while True:
            active = set(pi.get_active_tools())
            items = [f"[{'x' if t.name in active else ' '}] {t.name}" for t in pi.get_all_tools()]
            picked = await ctx.ui.select("Tools (pick one to toggle, Esc to finish)", items)
            if picked is None:
                return
            name = picked[4:]
            enabled = [n for n in pi.get_active_tools() if n != name] if name in active else [*pi.get_active_tools(), name]
            pi.set_active_tools(enabled)
            pi.append_entry("tools-config", {"enabled": enabled})

    @pi.on("session_start")
    def start(event: Any, ctx: Any) -> None:
        restore(ctx)

    @pi.on("session_tree")
    def moved(event: Any, ctx: Any) -> None:
        restore(ctx)

    @pi.command("tools", "Enable or disable tools")
    async def tools(args: str, ctx: Any) -> None:
        await choose(ctx)

    pi.register_shortcut("ctrl+alt+t", choose, "Enable or disable tools")
