"""The permission gate as a first-party extension (``builtin:permissions``, docs/extensions-runtime.md#dispatch ``tool_call``).

``pi_coder.modes.extension_host`` loads it (last, so it sees the input other extensions edited)
whenever a permission mode other than ``auto`` or any rule is configured; ``configure`` hands it
the policy first. It registers:

- ``tool_call``: the policy's decision (a tool marked ``read_only`` counts like ``read``);
- ``user_bash``: the same decision for ``!``/``!!`` commands, as if the bash tool ran them; a
  refused command is not run and its message says why; "ask" opens a dialog through ``ctx.ui`` (TUI dialog, RPC
  ``extension_ui_request``); with no UI (print, json) the call is refused with one stderr line;
- ``before_agent_start``: in plan mode, the planning instructions appended to the system prompt;
- ``agent_end``: in plan mode with a UI, once the run is idle, "execute the plan" or keep planning;
- ``/permissions [mode]`` and the ``alt+m`` key (cycle the modes); the footer status shows the
  mode when it is not ``auto`` (the TUI footer's status line).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from pi_coder.permissions.policy import MODES, Decision, Policy
from pi_coder.tools import lexical_path, pin

__all__ = ["CYCLE_KEY", "PLAN_PROMPT", "configure", "current_policy", "register"]

CYCLE_KEY = "alt+m"
STATUS_KEY = "permissions"

PLAN_PROMPT = """

# Plan mode
You are planning, not changing anything. Only read-only tools work now (read, grep, find, ls and
bash commands that only read); any other call is refused. Study the code, then end your answer
with a numbered plan of the changes you would make. The user will approve it or ask for changes."""

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow this session"
ALLOW_ALWAYS = "Always allow (save a rule)"
DENY = "Deny"
ASK_OPTIONS = (ALLOW_ONCE, ALLOW_SESSION, ALLOW_ALWAYS, DENY)

KEEP_PLANNING = "Keep planning"
EXECUTE_PREFIX = "Execute the plan in mode "
EXECUTE_MESSAGE = "Execute the plan."

_policy: Policy | None = None


def configure(policy: Policy | None) -> None:
    """The policy the next loaded ``builtin:permissions`` enforces."""
    global _policy
    _policy = policy


def current_policy() -> Policy | None:
    """The policy ``configure`` set (None: none)."""
    return _policy


def _describe(tool_name: str, args: dict[str, Any]) -> str:
    if tool_name == "bash":
        return f"bash: {str(args.get('command', '')).strip()}"
    path = args.get("path")
    if isinstance(path, str):
        return f"{tool_name}: {path}"
    return tool_name


def _tool_read_only(ctx: Any, name: str) -> bool:
    """The ``read_only`` flag of the active tool ``name`` (extension or MCP tool)."""
    try:
        tools = ctx._live().session.agent.state.tools
    except Exception:
        return False
    return any(getattr(t, "name", None) == name and getattr(t, "read_only", False) for t in tools)


def _stderr(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"pi: {text}", file=sys.stderr, flush=True)


def _status(ctx: Any, policy: Policy) -> None:
    with contextlib.suppress(Exception):
        ctx.ui.set_status(STATUS_KEY, None if policy.mode == "auto" else f"mode: {policy.mode}")


def _save_rules(rules: list[str]) -> None:
    from pi_coder.settings import load_settings, save_global_setting

    current = list(
        load_settings(None, project_trusted=False).global_data.get("permissions", {}).get("allow", []) or []
    )
    for rule in rules:
        if rule not in current:
            current.append(rule)
    save_global_setting("permissions.allow", current)


_parser_only_said = False


def _confine(command: str, ctx: Any) -> None:
    """Run ``command`` in the read-only sandbox; without bubblewrap, say once that it cannot."""
    global _parser_only_said
    from pi_coder.permissions import sandbox
    from pi_coder.tools import confine

    confine(command)
    problem = sandbox.confinement_problem()
    if problem is None or _parser_only_said:
        return
    _parser_only_said = True
    line = "bubblewrap is not available: commands allowed as read-only rely on the parser alone (install bubblewrap to confine them)"
    if ctx.has_ui:
        with contextlib.suppress(Exception):
            ctx.ui.notify(line, "warning")
            return
    _stderr(line)


def set_mode(policy: Policy, mode: str, ctx: Any) -> None:
    policy.mode = mode
    _status(ctx, policy)


def register(pi: Any) -> None:
    """The extension factory (``pi`` is its ``ExtensionAPI``). Handlers answer with plain dicts of
    the result fields, so this package does not import the extension system (no import cycle)."""
    policy = _policy
    if policy is None:
        return

    def allowed(decision: Decision, call_id: str | None) -> None:
        # The tool writes exactly the real path judged here (tools._paths.pin), never a path a
        # symlink swapped in since.
        if call_id is not None and decision.target is not None:
            pin(call_id, decision.target)

    async def judge(
        tool_name: str,
        args: dict[str, Any],
        read_only: bool,
        what: str,
        ctx: Any,
        ask_reason: bool = True,
        call_id: str | None = None,
    ) -> str | None:
        """None when the call may run, else the reason it may not (asking the user when needed)."""
        decision = policy.decide(tool_name, args, tool_read_only=read_only)
        if decision.action == "allow":
            allowed(decision, call_id)
            if decision.confine:
                _confine(str(args.get("command", "")), ctx)
            return None
        if decision.action == "deny":
            if not ctx.has_ui:
                _stderr(f"refused {what} ({decision.reason})")
            return decision.reason
        if not ctx.has_ui:
            _stderr(
                f"refused {what}: it needs approval and there is no one to ask (permission mode {policy.mode})"
            )
            return f"Permission needed and no one could approve it: {what}"
        spelled = args.get("path")
        if (
            decision.target is not None
            and isinstance(spelled, str)
            and (spelled.startswith(("@", "~")) or lexical_path(spelled, policy.cwd) != str(decision.target))
        ):
            what += f" (that is {decision.target})"  # the file itself, whatever the spelling
        title = f"Allow {what}?" + (f" ({decision.reason})" if decision.reason else "")
        options = [o for o in ASK_OPTIONS if o != ALLOW_ALWAYS or (decision.saveable and decision.rules)]
        choice = await ctx.ui.select(title, options, signal=ctx.signal)
        if choice == ALLOW_ONCE:
            allowed(decision, call_id)
            return None
        if choice in (ALLOW_SESSION, ALLOW_ALWAYS):
            allowed(decision, call_id)
            for rule in decision.rules:
                policy.session_rules.add_allow(rule)
            if choice == ALLOW_ALWAYS and decision.rules:
                try:
                    _save_rules(decision.rules)
                except Exception as exc:
                    ctx.ui.notify(f"Could not save the rule: {exc}", "warning")
            return None
        if choice is None:
            return "No one approved this call in time (the question was cancelled or timed out), so it was refused."
        reason = None
        if choice == DENY and ask_reason:
            reason = await ctx.ui.input("Reason for the model (optional)", "", signal=ctx.signal)
        text = "The user denied this tool call."
        if reason:
            text += f" Reason: {reason.strip()}"
        return text

    async def on_tool_call(event: Any, ctx: Any) -> Any:
        what = _describe(event.tool_name, event.input)
        reason = await judge(
            event.tool_name, event.input, _tool_read_only(ctx, event.tool_name), what, ctx, call_id=event.tool_call_id
        )
        return None if reason is None else {"block": True, "reason": reason}

    async def on_user_bash(event: Any, ctx: Any) -> Any:
        """``!cmd``: the bash rules and the mode decide, as for the bash tool (``!`` in the dialog)."""
        command = event.command
        prefix = "!!" if event.exclude_from_context else "!"
        reason = await judge("bash", {"command": command}, False, f"{prefix}{command.strip()}", ctx, ask_reason=False)
        if reason is None:
            return None
        return {"result": {"output": f"Not run: {reason}", "exit_code": None, "cancelled": True}}

    async def on_before_agent_start(event: Any, ctx: Any) -> Any:
        if policy.mode != "plan":
            return None
        return {"system_prompt": (event.system_prompt or "") + PLAN_PROMPT}

    async def approve_plan(ctx: Any) -> None:
        runner = ctx._live()
        await runner.session.wait_for_idle()
        if policy.mode != "plan":
            return
        options = [f"{EXECUTE_PREFIX}{m}" for m in ("auto", "accept-edits", "ask")] + [KEEP_PLANNING]
        choice = await ctx.ui.select("The plan is ready. Execute it?", options)
        if choice is None or not choice.startswith(EXECUTE_PREFIX):
            return
        set_mode(policy, choice[len(EXECUTE_PREFIX) :], ctx)
        pi.send_user_message(EXECUTE_MESSAGE)

    async def on_agent_end(event: Any, ctx: Any) -> None:
        if policy.mode != "plan" or not ctx.has_ui:
            return
        signal = ctx.signal
        if signal is not None and signal.aborted:
            return
        ctx._live().spawn(approve_plan(ctx))

    async def on_session_start(event: Any, ctx: Any) -> None:
        _status(ctx, policy)

    async def command(args: str, ctx: Any) -> None:
        wanted = args.strip()
        if not wanted and ctx.has_ui:
            wanted = await ctx.ui.select(f"Permission mode (now {policy.mode})", list(MODES)) or ""
        if not wanted:
            ctx.ui.notify(f"Permission mode: {policy.mode}. Modes: {', '.join(MODES)}")
            return
        if wanted not in MODES:
            ctx.ui.notify(f'Unknown permission mode "{wanted}": use one of {", ".join(MODES)}', "error")
            return
        set_mode(policy, wanted, ctx)
        ctx.ui.notify(f"Permission mode: {wanted}")

    async def cycle(ctx: Any) -> None:
        order = [m for m in MODES if m != "deny"]
        index = order.index(policy.mode) if policy.mode in order else -1
        set_mode(policy, order[(index + 1) % len(order)], ctx)
        ctx.ui.notify(f"Permission mode: {policy.mode}")

    pi.on("tool_call", on_tool_call)
    pi.on("user_bash", on_user_bash)
    pi.on("before_agent_start", on_before_agent_start)
    pi.on("agent_end", on_agent_end)
    pi.on("session_start", on_session_start)
    pi.register_command(
        "permissions", command, "Show or switch the permission mode (auto, ask, accept-edits, plan, deny)"
    )
    pi.register_shortcut(CYCLE_KEY, cycle, "Cycle the permission mode")
