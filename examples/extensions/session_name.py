"""``/session-name [name]`` shows or sets the session's name (port of Pi's session-name.ts)."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    @pi.command("session-name", "Set or show session name (usage: /session-name [new name])")
    def name(args: str, ctx: Any) -> None:
        wanted = args.strip()
        if wanted:
            pi.set_session_name(wanted)
            ctx.ui.notify(f"Session named: {wanted}")
        else:
            current = pi.get_session_name()
            ctx.ui.notify(f"Session: {current}" if current else "No session name set")
