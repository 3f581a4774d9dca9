"""The ``task`` tool and ``/agents``, registered on the extension surface (spec ``pi_coder.subagents.extension``).

pi loads it by default (``subagents.enabled``; ``--no-subagents`` leaves it out). The host calls
``configure`` first with the agent definitions for the folder (project ones only when trusted).
Each ``task`` call runs a child (``pi_coder.subagents.child``); calls of one turn run in
parallel, at most ``subagents.max_parallel`` at once. While children run, a widget shows one line
per child and the tool's partial result carries its progress; the session emits
``SubagentEvent``s (``subagent_start``/``_update``/``_end``, written by JSON and RPC modes) and
extensions get ``subagent_start``/``subagent_end`` events. See ``docs/subagents.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from pi_coder.subagents.definitions import AgentDefinition, AgentSet

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.extensions.api import ExtensionAPI
    from pi_coder.subagents.child import ChildProgress

__all__ = ["TaskParams", "configure", "describe_agents", "extension"]

WIDGET = "subagents"
_configured: dict[str, AgentSet] = {}


def configure(agents: AgentSet) -> None:
    """The agent definitions the next loaded subagents extension offers."""
    _configured["agents"] = agents


class TaskParams(BaseModel):
    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(description="The task for the agent to perform, with everything it needs to know")
    subagent_type: str | None = Field(default=None, description="The agent to use (default: general-purpose)")


def describe_agents(agents: AgentSet) -> str:
    lines = [
        "Launch a subagent to handle a task on its own: it has its own context, system prompt and tools, "
        "and returns its final answer (plus a one-line summary of what it did). Give it a complete, "
        "self-contained prompt: it does not see this conversation. Several task calls in one reply run "
        "in parallel. Available agents (subagent_type):",
    ]
    for agent in agents.agents:
        tools = "all tools" if agent.tools is None else ", ".join(agent.tools) or "no tools"
        lines.append(f"- {agent.name}: {agent.description or '(no description)'} (tools: {tools})")
    return "\n".join(lines)


def _session(ctx: Any) -> AgentSession:
    """The parent session behind ``ctx`` (first-party: the permission gate reads it the same way)."""
    session: AgentSession = ctx._live().session
    return session


def extension(pi: ExtensionAPI) -> None:
    agents = _configured.get("agents") or AgentSet([], [])
    if agents.get("general-purpose") is None:
        from pi_coder.subagents.definitions import GENERAL_PURPOSE

        agents.agents.append(GENERAL_PURPOSE)
    running: dict[str, ChildProgress] = {}
    limits: dict[str, asyncio.Semaphore] = {}

    def show(ctx: Any) -> None:
        lines = [_live_line(p) for p in running.values()]
        with contextlib.suppress(Exception):
            ctx.ui.set_widget(WIDGET, lines or None)

    async def run(tool_call_id: str, params: TaskParams, signal: Any, on_update: Any, ctx: Any) -> Any:
        from pi_coder.agent.types import AgentToolResult
        from pi_coder.ai.types import TextContent
        from pi_coder.core.events import SubagentEvent
        from pi_coder.subagents.budget import run_budget
        from pi_coder.subagents.child import ChildProgress, run_child

        parent = _session(ctx)
        name = params.subagent_type or "general-purpose"
        agent = agents.get(name)
        if agent is None:
            known = ", ".join(a.name for a in agents.agents)
            raise ValueError(f'unknown subagent_type "{name}"; available: {known}')
        _check_mode(agent)
        settings = parent.settings.subagents
        run_wide = run_budget(parent)
        if (reason := run_wide.exceeded()) is not None:
            raise ValueError(f"not started: {reason}")
        budget = run_wide.child(
            f"subagent {agent.name}",
            agent.max_turns or settings.max_turns or None,
            agent.max_budget_usd or settings.max_budget_usd or None,
        )
        progress = ChildProgress(agent=agent.name, description=params.description)

        def event(kind: Any, stopped: str | None = None) -> SubagentEvent:
            return SubagentEvent(
                type=kind,
                tool_call_id=tool_call_id,
                agent=agent.name,
                description=params.description,
                session_id=progress.session_id,
                session_file=progress.session_file,
                tool=progress.tool,
                turns=progress.spent.turns,
                usage=progress.spent.to_json(),
                elapsed_ms=int(progress.elapsed * 1000),
                stopped=stopped,
            )

        def changed() -> None:
            parent.emit_nowait(event("subagent_update"))
            show(ctx)
            if on_update is not None:
                partial = AgentToolResult(
                    content=[TextContent(text=_live_line(progress))], details={"sessionFile": progress.session_file}
                )
                with contextlib.suppress(Exception):
                    on_update(partial)

        loop_id = str(id(asyncio.get_running_loop()))
        limit = limits.setdefault(loop_id, asyncio.Semaphore(settings.max_parallel))
        async with limit:
            progress.started = time.monotonic()
            running[tool_call_id] = progress
            ticker = asyncio.create_task(_tick(lambda: show(ctx)))
            try:
                outcome = await run_child(
                    parent,
                    agent,
                    params.prompt,
                    progress,
                    budget=budget,
                    signal=signal,
                    on_change=changed,
                    on_start=lambda: _started(parent, ctx, event("subagent_start")),
                )
            finally:
                ticker.cancel()
                running.pop(tool_call_id, None)
                show(ctx)
        end = event("subagent_end", outcome.details.get("stopped"))
        await parent.emit(end)
        await ctx._live().notify("subagent_end", end)
        if outcome.is_error:  # an error result keeps no details: the text names the child session
            where = outcome.details.get("sessionFile") or outcome.details.get("sessionId")
            raise ValueError(f"{outcome.text}\nChild session: {where}")
        return AgentToolResult(content=[TextContent(text=outcome.text)], details=outcome.details)

    from pi_coder.core.factory import TASK_SNIPPET
    from pi_coder.extensions.types import ToolDefinition

    pi.register_tool(
        ToolDefinition(
            name="task",
            label="Task",
            description=describe_agents(agents),
            parameters=TaskParams,
            execute=run,
            execution_mode="parallel",
            prompt_snippet=TASK_SNIPPET,
            render_result=render_result,
            # The call itself changes nothing: the permission gate lets it through (plan mode
            # too, for read-only agents) and judges each of the child's own tool calls instead.
            read_only=True,
        )
    )

    @pi.command("agents", description="List the subagents the task tool can start")
    async def list_agents(args: str, ctx: Any) -> None:
        lines = [f"{a.name} ({_source(a)}): {a.description}" for a in agents.agents]
        lines += [f"warning: {w}" for w in agents.warnings]
        ctx.ui.notify("\n".join(lines))


def _started(parent: AgentSession, ctx: Any, event: Any) -> Any:
    parent.emit_nowait(event)
    return ctx._live().notify("subagent_start", event)


def _check_mode(agent: AgentDefinition) -> None:
    """Plan mode delegates only to read-only agents (tools among read, grep, find, ls)."""
    from pi_coder.permissions.gate import current_policy

    policy = current_policy()
    if policy is not None and policy.mode == "plan" and not agent.read_only:
        raise ValueError(
            f'plan mode: agent "{agent.name}" may change files; only read-only agents '
            "(tools among read, grep, find, ls) can run while planning"
        )


def _source(agent: AgentDefinition) -> str:
    return "built-in" if agent.path is None else f"{agent.source}: {agent.path}"


def _live_line(progress: ChildProgress) -> str:
    spent = progress.spent
    doing = progress.tool or ("starting" if spent.turns == 0 and progress.tool is None else "thinking")
    return (
        f"{progress.agent} · {progress.description} · {doing} · {progress.elapsed:.0f}s · "
        f"{spent.tokens} tokens · ${spent.cost:.4f}"
    )


async def _tick(refresh: Any) -> None:
    while True:
        await asyncio.sleep(1.0)
        refresh()


def render_result(result: Any, *, expanded: bool, partial: bool, theme: Any = None) -> str | None:
    """Expanded (Ctrl+O): the child's transcript, read from its session file, under the summary."""
    if not expanded:
        return None
    from pi_coder.subagents.transcript import child_transcript

    details = getattr(result, "details", None)
    path = details.get("sessionFile") if isinstance(details, dict) else None
    text = "".join(getattr(b, "text", "") for b in getattr(result, "content", None) or [])
    if not isinstance(path, str):
        return None
    return f"{text}\n\n{child_transcript(path)}".strip()
