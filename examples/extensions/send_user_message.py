"""``/ask``, ``/steer`` and ``/followup`` send user messages (port of Pi's send-user-message.ts):
idle, a message starts a turn; while the agent works it is steered or queued (``deliver_as``)."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    @pi.command("ask", "Send a user message to the agent")
    def ask(args: str, ctx: Any) -> None:
        if not args.strip():
            ctx.ui.notify("Usage: /ask <message>", "warning")
            return
        if not ctx.is_idle():
            ctx.ui.notify("Agent is busy. Use /steer or /followup instead.", "warning")
            return
        pi.send_user_message(args)

    @pi.command("steer", "Send a steering message (interrupts current processing)")
    def steer(args: str, ctx: Any) -> None:
        if not args.strip():
            ctx.ui.notify("Usage: /steer <message>", "warning")
            return
        pi.send_user_message(args, deliver_as=None if ctx.is_idle() else "steer")

    @pi.command("followup", "Queue a follow-up message (waits for current processing)")
    def followup(args: str, ctx: Any) -> None:
        if not args.strip():
            ctx.ui.notify("Usage: /followup <message>", "warning")
            return
        pi.send_user_message(args, deliver_as=None if ctx.is_idle() else "follow_up")
