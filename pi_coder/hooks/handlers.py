"""The hook events on pi's extension events (README "Hooks"); ``register(pi)`` is the factory of
``builtin:hooks``.

==================  =============================  ============================================
Claude Code event   extension event                what its answer can do
==================  =============================  ============================================
PreToolUse          ``tool_call``                  block (exit 2 / deny), ask, rewrite the input
PostToolUse         ``tool_result``                add feedback for the model to the result
UserPromptSubmit    ``input``                      block the prompt, add context to the run
Stop                ``agent_before_settle``        make the agent continue with a reason
SessionStart        ``session_start``              add context to the next prompt
SessionEnd          ``session_shutdown``           (observe only)
PreCompact          ``session_before_compact``     (observe only)
Notification        ``agent_settled``, ask dialog  (observe only)
SubagentStop        ``subagent_end``               (observe only: the child has ended)
==================  =============================  ============================================

``continue: false`` ends the run (PreToolUse blocks the call and stops after it; PostToolUse
aborts; UserPromptSubmit drops the prompt; Stop does not continue), ``stopReason`` goes to the
user. Exit code 2 on an observe-only event shows stderr to the user.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

from pi_coder.hooks.engine import HookEngine
from pi_coder.hooks.process import HookRun
from pi_coder.hooks.tools import to_claude, to_pi, tool_response

if TYPE_CHECKING:
    from pi_coder.hooks.host import HookAPI, HookContext

__all__ = ["CONTEXT_TYPE", "STOP_TYPE", "configure", "register"]

CONTEXT_TYPE = "hook_context"
"""``custom_type`` of the context UserPromptSubmit and SessionStart hooks add (hidden in the TUI)."""
STOP_TYPE = "hook_stop"
"""``custom_type`` of a Stop hook's reason to continue."""

ALLOW = "Allow once"
DENY = "Deny"

_engine: HookEngine | None = None


def configure(engine: HookEngine | None) -> None:
    """The engine the next loaded ``builtin:hooks`` uses (set at start-up)."""
    global _engine
    _engine = engine


def _stderr(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"pi: {text}", file=sys.stderr, flush=True)


class _Answer:
    """The combined answer of one event's hooks."""

    def __init__(self, runs: list[HookRun]) -> None:
        self.block: list[str] = []
        """Reasons to block (exit 2 stderr, ``decision: "block"``, ``permissionDecision: "deny"``)."""
        self.ask: list[str] = []
        self.allow = False
        self.context: list[str] = []
        """``additionalContext`` and (where the event takes it) plain stdout."""
        self.plain: list[str] = []
        self.stop: str | None = None
        """Set when a hook said ``continue: false`` (its ``stopReason``, maybe empty)."""
        self.updated: dict[str, Any] | None = None
        for run in runs:
            if run.exit_code == 2:
                self.block.append(run.stderr.strip() or f'blocked by hook "{run.hook.command}"')
                continue
            if run.exit_code != 0:
                continue
            data = run.json()
            if data is None:
                if run.stdout.strip():
                    self.plain.append(run.stdout.strip())
                continue
            self._read(data)

    def _read(self, data: dict[str, Any]) -> None:
        if data.get("continue") is False:
            reason = data.get("stopReason")
            self.stop = reason if isinstance(reason, str) else (self.stop or "")
        reason = data.get("reason")
        reason_text = reason if isinstance(reason, str) and reason.strip() else "blocked by a hook"
        decision = data.get("decision")
        if decision == "block":
            self.block.append(reason_text)
        elif decision == "approve":
            self.allow = True
        specific = data.get("hookSpecificOutput")
        if not isinstance(specific, dict):
            return
        permission = specific.get("permissionDecision")
        why = specific.get("permissionDecisionReason")
        why_text = why if isinstance(why, str) and why.strip() else ""
        if permission == "deny":
            self.block.append(why_text or "denied by a hook")
        elif permission == "ask":
            self.ask.append(why_text)
        elif permission == "allow":
            self.allow = True
        updated = specific.get("updatedInput")
        if isinstance(updated, dict):
            self.updated = {**(self.updated or {}), **updated}
        extra = specific.get("additionalContext")
        if isinstance(extra, str) and extra.strip():
            self.context.append(extra.strip())


def register(pi: HookAPI) -> None:
    """Subscribe the hook runner to the extension events (nothing when no engine is configured)."""
    engine = _engine
    if engine is None:
        return
    state: dict[str, Any] = {"context": [], "stop_active": False}

    def tell_stop(answer: _Answer, ctx: HookContext) -> None:
        if answer.stop:
            ctx.ui.notify(answer.stop, "warning")

    async def on_tool_call(event: Any, ctx: HookContext) -> Any:
        name, tool_input = to_claude(event.tool_name, event.input, engine.cwd)
        hooks = engine.hooks("PreToolUse", name)
        if not hooks:
            return None
        fields = {"tool_name": name, "tool_input": tool_input, "tool_use_id": event.tool_call_id}
        answer = _Answer(await engine.run("PreToolUse", fields, ctx, hooks=hooks))
        if answer.stop is not None:
            tell_stop(answer, ctx)
            return {"block": True, "reason": answer.stop or "Stopped by a hook.", "terminate": True}
        if answer.block:
            return {"block": True, "reason": "\n".join(answer.block)}
        if answer.updated is not None:
            fresh = to_pi(event.tool_name, answer.updated, event.input, engine.cwd)
            event.input.clear()
            event.input.update(fresh)
        if answer.ask:
            return await ask(name, tool_input, answer.ask, ctx)
        return None

    async def ask(name: str, tool_input: dict[str, Any], reasons: list[str], ctx: HookContext) -> Any:
        """``permissionDecision: "ask"``: pi's permission dialog; with no UI, refused like the permission layer."""
        what = name + (f": {tool_input.get('command') or tool_input.get('file_path') or ''}".rstrip(": "))
        why = "; ".join(r for r in reasons if r)
        if not ctx.has_ui:
            _stderr(f"refused {what}: a hook asks for approval and there is no one to ask")
            return {"block": True, "reason": f"Permission needed and no one could approve it: {what}"}
        await notification(f"Pi needs your permission to use {name}", "permission_prompt", ctx)
        title = f"Allow {what}?" + (f" (hook: {why})" if why else "")
        choice = await ctx.ui.select(title, [ALLOW, DENY], signal=ctx.signal)
        if choice == ALLOW:
            return None
        return {"block": True, "reason": "The user denied this tool call." + (f" Hook: {why}" if why else "")}

    async def on_tool_result(event: Any, ctx: HookContext) -> Any:
        name, tool_input = to_claude(event.tool_name, event.input, engine.cwd)
        hooks = engine.hooks("PostToolUse", name)
        if not hooks:
            return None
        text = "".join(getattr(block, "text", "") for block in event.content)
        fields = {
            "tool_name": name,
            "tool_input": tool_input,
            "tool_response": tool_response(event.tool_name, event.input, text, event.is_error, engine.cwd),
            "tool_use_id": event.tool_call_id,
        }
        answer = _Answer(await engine.run("PostToolUse", fields, ctx, hooks=hooks))
        if answer.stop is not None:
            tell_stop(answer, ctx)
            ctx.abort()
        feedback = [*answer.block, *answer.context]
        if not feedback:
            return None
        from pi_coder.ai.types import TextContent

        note = TextContent(text="\n\nPostToolUse hook feedback:\n" + "\n".join(feedback))
        return {"content": [*event.content, note]}

    async def on_input(event: Any, ctx: HookContext) -> Any:
        state["context"] = []
        state["stop_active"] = False
        if event.source == "extension" or not engine.hooks("UserPromptSubmit"):
            return None
        answer = _Answer(await engine.run("UserPromptSubmit", {"prompt": event.text}, ctx))
        if answer.stop is not None or answer.block:
            reason = answer.stop if answer.stop else "\n".join(answer.block)
            ctx.ui.notify(
                f"Prompt blocked by a hook: {reason}" if reason else "Prompt blocked by a hook", "error"
            )
            return {"action": "handled"}
        state["context"] = [*answer.plain, *answer.context]
        return None

    async def on_before_agent_start(event: Any, ctx: HookContext) -> Any:
        context, state["context"] = state["context"], []
        if not context:
            return None
        return {"message": {"custom_type": CONTEXT_TYPE, "content": "\n\n".join(context), "display": False}}

    async def on_before_settle(event: Any, ctx: HookContext) -> Any:
        if not engine.hooks("Stop"):
            return None
        runs = await engine.run("Stop", {"stop_hook_active": state["stop_active"]}, ctx)
        answer = _Answer(runs)
        if answer.stop is not None or not answer.block:
            tell_stop(answer, ctx)
            state["stop_active"] = False
            return None
        state["stop_active"] = True
        draft = {
            "type": "custom_message",
            "custom_type": STOP_TYPE,
            "content": "Stop hook feedback:\n" + "\n".join(answer.block),
            "display": True,
        }
        return {"entries": [*event.entries, draft], "continue": True}

    async def on_settled(event: Any, ctx: HookContext) -> None:
        state["stop_active"] = False
        if not event.aborted and ctx.has_ui:
            await notification("Pi is waiting for your input", "idle_prompt", ctx)

    async def notification(message: str, kind: str, ctx: HookContext) -> None:
        if engine.hooks("Notification", kind):
            fields = {"message": message, "title": "pi", "notification_type": kind}
            observe(await engine.run("Notification", fields, ctx, match=kind), ctx)

    def observe(runs: list[HookRun], ctx: HookContext) -> None:
        """An observe-only event: exit 2's stderr is shown to the user."""
        for run in runs:
            if run.exit_code == 2 and run.stderr.strip():
                ctx.ui.notify(run.stderr.strip(), "warning")

    sources = {
        "startup": "startup",
        "reload": "startup",
        "new": "clear",
        "resume": "resume",
        "fork": "resume",
    }

    async def session_start(source: str, ctx: HookContext) -> None:
        if not engine.hooks("SessionStart", source):
            return
        runs = await engine.run("SessionStart", {"source": source}, ctx, match=source)
        observe(runs, ctx)
        answer = _Answer(runs)
        context = [*answer.plain, *answer.context]
        if context:
            message = {"custom_type": CONTEXT_TYPE, "content": "\n\n".join(context), "display": False}
            pi.send_message(message, deliver_as="next_turn")

    async def on_session_start(event: Any, ctx: HookContext) -> None:
        source = sources.get(event.reason, "startup")
        if source == "startup" and any(getattr(e, "type", None) == "message" for e in ctx.session.entries()):
            source = "resume"  # -c, -r, --session: a session with messages goes on
        await session_start(source, ctx)

    async def on_compacted(event: Any, ctx: HookContext) -> None:
        await session_start("compact", ctx)

    async def on_shutdown(event: Any, ctx: HookContext) -> None:
        if engine.hooks("SessionEnd"):
            reason = {"new": "clear", "quit": "prompt_input_exit" if ctx.has_ui else "other"}.get(
                event.reason, "other"
            )
            observe(await engine.run("SessionEnd", {"reason": reason}, ctx), ctx)

    async def on_before_compact(event: Any, ctx: HookContext) -> None:
        trigger = "manual" if event.reason == "manual" else "auto"
        if engine.hooks("PreCompact", trigger):
            fields = {"trigger": trigger, "custom_instructions": event.custom_instructions or ""}
            observe(await engine.run("PreCompact", fields, ctx, match=trigger), ctx)

    async def on_subagent_end(event: Any, ctx: HookContext) -> None:
        """SubagentStop, once the ``task`` tool's child agent has ended: observed only (the child
        cannot be made to continue; a blocking answer is shown to the user)."""
        agent = str(getattr(event, "agent", ""))
        if not engine.hooks("SubagentStop"):
            return
        fields = {
            "stop_hook_active": False,
            "agent_type": agent,
            "agent_id": str(getattr(event, "session_id", "")),
            "agent_transcript_path": getattr(event, "session_file", None) or "",
        }
        answer = _Answer(await engine.run("SubagentStop", fields, ctx))
        if answer.block:
            ctx.ui.notify(f"SubagentStop hook ({agent}): " + "\n".join(answer.block), "warning")

    def list_hooks(args: str, ctx: Any) -> None:
        ctx.ui.notify(describe(engine))

    pi.on("tool_call", on_tool_call)
    pi.on("tool_result", on_tool_result)
    pi.on("input", on_input)
    pi.on("before_agent_start", on_before_agent_start)
    pi.on("agent_before_settle", on_before_settle)
    pi.on("agent_settled", on_settled)
    pi.on("session_start", on_session_start)
    pi.on("session_compact", on_compacted)
    pi.on("session_shutdown", on_shutdown)
    pi.on("session_before_compact", on_before_compact)
    pi.on("subagent_end", on_subagent_end)
    pi.register_command(
        "hooks", list_hooks, "List the configured hooks (Claude Code format) and where they come from"
    )


def describe(engine: HookEngine) -> str:
    """``/hooks``: every configured hook by event, with its matcher, timeout and source."""
    config = engine.config
    if not config.hooks:
        return "No hooks configured." + (
            f" (all turned off by {config.disabled_by})" if config.disabled_by else ""
        )
    lines = ["Hooks (Claude Code format):"]
    for event in dict.fromkeys(h.event for h in config.hooks):
        lines.append(f"{event}:")
        for hook in config.hooks:
            if hook.event == event:
                matcher = f"[{hook.matcher}] " if hook.matcher else ""
                lines.append(f"  {matcher}{hook.command}  (timeout {hook.timeout:g} s, {hook.source})")
    return "\n".join(lines)
