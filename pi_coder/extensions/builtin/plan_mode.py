"""plan-mode (docs/extensions-runtime.md#first-party-extensions): a read-only mode that asks the model for a numbered plan first.

``-e builtin:plan-mode``; toggled by ``/plan``, ``ctrl+alt+p`` or started with ``--plan``. While on:
only read, grep, find, ls and an allowlist of bash commands; ``before_agent_start`` asks for a
``Plan:`` list. When a run ends with a plan, a dialog offers to execute it (tools restored, the
plan sent). ``[DONE:n]`` in later answers ticks the widget's checklist. The state is saved with
``append_entry`` and restored on ``session_start``. A small example to copy, not the full
permission modes.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.extensions import ExtensionAPI

READ_ONLY_TOOLS = ["read", "grep", "find", "ls", "bash"]
SAFE_BASH = ("cat", "head", "tail", "rg", "grep", "ls", "wc", "find", "pwd", "git status", "git log", "git diff", "git show")
PLAN_PROMPT = (
    "\n\nYou are in plan mode: do not change any file. Investigate with the read-only tools, then answer "
    "with a numbered list under a line 'Plan:'."
)
_STEP = re.compile(r"^\s*(\d+)[.)]\s+(.+)$")


def parse_plan(text: str) -> list[str]:
    """The numbered steps after a ``Plan:`` line."""
    _, found, rest = text.partition("Plan:")
    if not found:
        return []
    return [m.group(2).strip() for line in rest.splitlines() if (m := _STEP.match(line))]


def _safe(command: str) -> bool:
    if any(ch in command for ch in ";&|><`$"):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return any(words[: len(s.split())] == s.split() for s in SAFE_BASH)


def extension(pi: ExtensionAPI) -> None:
    state: dict[str, Any] = {"on": False, "steps": [], "done": set(), "saved_tools": None}
    pi.register_flag("plan", "Start in plan mode (read-only until a plan is accepted)")

    def show(ctx: Any) -> None:
        if not state["steps"]:
            ctx.ui.set_widget("plan", None)
            return
        lines = [f"[{'x' if i + 1 in state['done'] else ' '}] {i + 1}. {s}" for i, s in enumerate(state["steps"])]
        ctx.ui.set_widget("plan", lines)

    def set_mode(on: bool, ctx: Any) -> None:
        if on and not state["on"]:
            state["saved_tools"] = pi.get_active_tools()
            pi.set_active_tools([t for t in READ_ONLY_TOOLS if t in {i.name for i in pi.get_all_tools()}])
        elif not on and state["on"]:
            pi.set_active_tools(state["saved_tools"] or pi.get_active_tools())
        state["on"] = on
        pi.append_entry("plan-mode", {"on": on, "steps": state["steps"], "tools": state["saved_tools"]})
        ctx.ui.set_status("plan", "plan mode" if on else None)

    @pi.command("plan", description="Toggle plan mode (read-only, plan first)")
    async def toggle(args: str, ctx: Any) -> None:
        set_mode(not state["on"], ctx)
        ctx.ui.notify("Plan mode on" if state["on"] else "Plan mode off")

    pi.register_shortcut("ctrl+alt+p", lambda ctx: toggle("", ctx), "Toggle plan mode")

    @pi.on("session_start")
    def restore(event: Any, ctx: Any) -> None:
        for entry in ctx.session.branch():
            if getattr(entry, "custom_type", None) == "plan-mode" and isinstance(entry.data, dict):
                state["steps"] = list(entry.data.get("steps") or [])
                state["saved_tools"] = entry.data.get("tools")
                if entry.data.get("on") != state["on"]:
                    state["on"] = not entry.data.get("on")  # so set_mode switches
                    set_mode(bool(entry.data.get("on")), ctx)
        if event.reason == "startup" and pi.get_flag("plan") and not state["on"]:
            set_mode(True, ctx)
        show(ctx)

    @pi.on("tool_call")
    def read_only(event: Any, ctx: Any) -> Any:
        if state["on"] and event.tool_name == "bash" and not _safe(str(event.input.get("command", ""))):
            return {"block": True, "reason": "plan mode: only read-only commands (cat, rg, git status|log|diff, ...)"}
        return None

    @pi.on("before_agent_start")
    def ask_for_plan(event: Any, ctx: Any) -> Any:
        return {"system_prompt": event.system_prompt + PLAN_PROMPT} if state["on"] else None

    @pi.on("agent_end")
    async def offer(event: Any, ctx: Any) -> None:
        text = ""
        for message in event.messages:
            if message.role == "assistant":
                text = "".join(getattr(c, "text", "") for c in message.content)
        for number in re.findall(r"\[DONE:(\d+)\]", text):
            state["done"].add(int(number))
        if not state["on"]:
            show(ctx)
            return
        steps = parse_plan(text)
        if not steps:
            return
        state["steps"], state["done"] = steps, set()
        show(ctx)
        choice = await ctx.ui.select("Execute the plan?", ["Execute the plan", "Stay in plan mode"])
        if choice == "Execute the plan":
            set_mode(False, ctx)
            plan = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(steps))
            pi.send_user_message(f"Execute this plan. Mark each finished step with [DONE:n].\n{plan}")
