"""``/pirate`` toggles pirate mode: ``before_agent_start`` appends to the system prompt (port of
Pi's pirate.ts)."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import ExtensionAPI

PIRATE = """

IMPORTANT: You are now in PIRATE MODE. You must:
- Speak like a stereotypical pirate in all responses
- Use phrases like "Arrr!", "Ahoy!", "Shiver me timbers!"
- Refer to the user as "matey"
- Still complete the actual task correctly, just in pirate speak
"""


def extension(pi: ExtensionAPI) -> None:
    state = {"on": False}

    @pi.command("pirate", "Toggle pirate mode (the agent speaks like a pirate)")
    def toggle(args: str, ctx: Any) -> None:
        state["on"] = not state["on"]
        ctx.ui.notify("Arrr! Pirate mode enabled!" if state["on"] else "Pirate mode disabled")

    @pi.on("before_agent_start")
    def prompt(event: Any, ctx: Any) -> dict[str, str] | None:
        if state["on"]:
            return {"system_prompt": event.system_prompt + PIRATE}
        return None
