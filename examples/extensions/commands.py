"""``/commands [source]`` lists every slash command (``pi.get_commands()``): extension commands,
prompt templates and skills, in a ``select`` dialog (port of Pi's commands.ts)."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import Completion, ExtensionAPI

SOURCES = (("extension", "Extensions"), ("prompt", "Prompts"), ("skill", "Skills"))


def extension(pi: ExtensionAPI) -> None:
    def sources(prefix: str) -> list[Completion] | None:
        found = [Completion(value=key, label=key) for key, _ in SOURCES if key.startswith(prefix)]
        return found or None

    @pi.command("commands", "List available slash commands", get_argument_completions=sources)
    async def list_commands(args: str, ctx: Any) -> None:
        commands = pi.get_commands()
        wanted = args.strip()
        shown = [c for c in commands if not wanted or c["source"] == wanted]
        if not shown:
            ctx.ui.notify(f"No {wanted} commands found" if wanted else "No commands found")
            return
        items: list[str] = []
        for key, label in SOURCES:
            group = [c for c in shown if c["source"] == key]
            if group:
                items.append(f"--- {label} ---")
                items += [f"/{c['name']}" + (f" - {c['description']}" if c["description"] else "") for c in group]
        if not ctx.has_ui:  # print mode: the list itself
            ctx.ui.notify("\n".join(items))
            return
        selected = await ctx.ui.select("Available Commands", items)
        if selected and not selected.startswith("---"):
            name = selected.split(" - ")[0][1:]
            command = next((c for c in commands if c["name"] == name), None)
            path = command["sourceInfo"]["path"] if command else ""
            if path and await ctx.ui.confirm(name, f"View source path?\n{path}"):
                ctx.ui.notify(path)
