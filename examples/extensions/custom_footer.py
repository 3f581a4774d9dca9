"""Lines under the editor with the model and the session's token use (port of Pi's
custom-footer.ts, which replaces the whole footer; pi_coder adds lines above its own)."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    def draw(ctx: Any) -> None:
        theme = ctx.ui.theme
        usage = ctx.get_context_usage()
        tokens = getattr(usage, "tokens", None) or 0
        model = ctx.model.id if ctx.model is not None else "no model"
        ctx.ui.set_footer([theme.fg("accent", model) + theme.fg("dim", f" · {tokens} tokens")])

    @pi.on("session_start")
    def start(event: Any, ctx: Any) -> None:
        draw(ctx)

    @pi.on("turn_end")
    def turn(event: Any, ctx: Any) -> None:
        draw(ctx)

    @pi.command("footer-off", "Remove the custom footer lines")
    def off(args: str, ctx: Any) -> None:
        ctx.ui.set_footer(None)
