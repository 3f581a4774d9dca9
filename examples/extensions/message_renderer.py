"""``/report <text>`` sends a custom message the model sees, drawn by a message renderer (port of
Pi's message-renderer.ts). The render function shows the lazy import of ``rich``: a module-level
import would cost every start-up, in every mode, even when nothing is drawn."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import CustomMessageSpec, ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    def draw(message: Any, *, expanded: bool, theme: Any) -> Any:
        from rich.panel import Panel  # only the TUI draws: import here, not at the top

        body = message.content if isinstance(message.content, str) else "".join(b.text for b in message.content)
        details = f"\n{message.details}" if expanded and message.details else ""
        return Panel(body + details, title=theme.fg("accent", "report"), expand=False)

    pi.register_message_renderer("report", draw)

    @pi.command("report", "Send a status report the agent sees")
    def report(args: str, ctx: Any) -> None:
        pi.send_message(
            CustomMessageSpec(custom_type="report", content=args.strip() or "(empty)", details={"cwd": ctx.cwd})
        )
