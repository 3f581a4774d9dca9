"""One child agent of the ``task`` tool: its own session, system prompt, tools and budget.

The child is a full ``AgentSession`` in this process (no subprocess): its session file goes to
the parent's session folder with the parent's file as ``parentSession``, its tool calls pass the
parent's ``before_tool_call`` gate (permission mode, rules, extensions' ``tool_call``), and it
uses only tools the parent has (read-only built-ins aside), so it never has more rights than the
parent. The parent's abort signal aborts it. See ``docs/subagents.md``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_coder.subagents.budget import Budget, Spend, watch
from pi_coder.subagents.definitions import READ_ONLY_TOOLS, AgentDefinition

if TYPE_CHECKING:
    from pi_coder.ai.abort import AbortSignal
    from pi_coder.ai.types import Model
    from pi_coder.core.agent_session import AgentSession

__all__ = ["ChildOutcome", "ChildProgress", "child_tools", "run_child"]

_CLAUDE_ALIASES = ("sonnet", "opus", "haiku")


@dataclass(slots=True)
class ChildProgress:
    """What a running child did so far (the live block, the progress events)."""

    agent: str
    description: str
    started: float = field(default_factory=time.monotonic)
    session_id: str = ""
    session_file: str | None = None
    tool: str | None = None
    tools_used: Counter[str] = field(default_factory=Counter)
    spent: Spend = field(default_factory=Spend)
    first_request_at: float | None = None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


@dataclass(slots=True)
class ChildOutcome:
    text: str
    is_error: bool
    details: dict[str, Any]


def child_tools(parent: AgentSession, agent: AgentDefinition) -> tuple[list[Any], list[str]]:
    """The child's tools and the names it asked for but may not have.

    A tool the parent has active (never ``task``: children do not delegate), or a read-only
    built-in (grep, find, ls) when the parent may read.
    """
    active = {t.name: t for t in parent.agent.state.tools if t.name != "task"}
    wanted = list(active) if agent.tools is None else list(agent.tools)
    chosen: list[Any] = []
    missing: list[str] = []
    extra: list[str] = []
    for name in wanted:
        if name in active:
            chosen.append(active[name])
        elif name in READ_ONLY_TOOLS and "read" in active:
            extra.append(name)
        else:
            missing.append(name)
    if extra:
        from pi_coder.core.factory import tool_settings_from
        from pi_coder.tools import create_tools

        chosen.extend(create_tools(parent.cwd, extra, tool_settings_from(parent.settings)).values())
    return chosen, missing


def _model(parent: AgentSession, agent: AgentDefinition, notes: list[str]) -> Model | None:
    if agent.model is None or parent.model is None:
        return parent.model
    from pi_coder.core.model_resolver import resolve_model_pattern

    pattern = agent.model
    provider = parent.model.provider if pattern in _CLAUDE_ALIASES else None
    try:
        model, _level = resolve_model_pattern(parent.models, pattern, provider)
    except Exception:
        notes.append(f'model "{pattern}" not found; used {parent.model.provider}/{parent.model.id}')
        return parent.model
    if not parent.models.has_key(model.provider):
        notes.append(f'no API key for {model.provider}; used {parent.model.provider}/{parent.model.id}')
        return parent.model
    return model


def _store(parent: AgentSession) -> Any:
    from pi_coder.session.store import SessionStore

    directory = parent.store.session_dir
    if directory is None:
        return SessionStore.in_memory(parent.cwd)
    parent_file = parent.store.session_file
    return SessionStore.create(parent.cwd, directory, parent_session=None if parent_file is None else str(parent_file))


async def run_child(
    parent: AgentSession,
    agent: AgentDefinition,
    prompt: str,
    progress: ChildProgress,
    *,
    budget: Budget,
    signal: AbortSignal | None,
    on_change: Callable[[], Any],
    on_start: Callable[[], Any] | None = None,
) -> ChildOutcome:
    """Run ``agent`` on ``prompt`` to the end; never raises for the child's own failures."""
    from pi_coder.core.factory import create_agent_session, plan_for

    notes: list[str] = []
    tools, missing = child_tools(parent, agent)
    if missing:
        notes.append(f"tools not available to the parent, left out: {', '.join(missing)}")
    model = _model(parent, agent, notes)
    store = _store(parent)
    plan = plan_for(
        parent.cwd,
        settings=parent.loaded_settings or parent.settings,
        models=parent.models,
        store=store,
        model=model,
        thinking_level=agent.thinking or parent.thinking_level,
        tools=tools,
        system_prompt=agent.prompt or None,
        skills=[],
        scoped_models=[],
        project_trust=parent.project_trust,
    )
    child = create_agent_session(plan)
    child.agent.before_tool_call = parent.agent.before_tool_call  # the parent's gate decides
    inner_stream = child.agent.stream_fn

    def stream(*args: Any, **kwargs: Any) -> Any:
        if progress.first_request_at is None:
            progress.first_request_at = time.monotonic()
        return inner_stream(*args, **kwargs)

    child.agent.stream_fn = stream
    watch(child.agent, budget)
    progress.session_id = child.session_id
    progress.session_file = None if store.session_file is None else str(store.session_file)
    child.set_session_name(f"{agent.name}: {progress.description}"[:80])

    def listen(event: Any) -> None:
        kind = event.type
        if kind == "tool_execution_start":
            progress.tool = event.tool_name
            progress.tools_used[event.tool_name] += 1
        elif kind == "tool_execution_end":
            progress.tool = None
        elif kind == "message_end" and event.message.role == "assistant":
            progress.spent.add(event.message)
        else:
            return
        on_change()

    child.subscribe(listen)
    if on_start is not None:
        started = on_start()
        if started is not None:
            await started

    def abort() -> None:
        child.abort()

    if signal is not None:
        signal.add_listener(abort)
    try:
        if signal is None or not signal.aborted:
            await child.prompt(prompt)
    finally:
        if signal is not None:
            signal.remove_listener(abort)
        await child.close()
    return _outcome(child, agent, progress, budget, notes, aborted=signal is not None and signal.aborted)


def _outcome(
    child: AgentSession, agent: AgentDefinition, progress: ChildProgress, budget: Budget, notes: list[str], *, aborted: bool
) -> ChildOutcome:
    from pi_coder.ai.types import AssistantMessage

    last = next((m for m in reversed(child.messages) if isinstance(m, AssistantMessage)), None)
    text = child.last_assistant_text() or ""
    stopped: str | None = budget.stopped
    if stopped is None and (aborted or (last is not None and last.stop_reason == "aborted")):
        stopped = "aborted"
    elif stopped is None and last is not None and last.stop_reason == "error":
        stopped = f"error: {last.error_message or 'the request failed'}"
    elif stopped is None and last is None:
        stopped = "error: the child made no request"
    details = summary_details(agent, progress, child, stopped, notes)
    line = summary_line(agent, progress)
    if stopped is None:
        return ChildOutcome(f"{text}\n\n[{line}]" if text else f"(no answer)\n\n[{line}]", False, details)
    partial = f"\nPartial answer:\n{text}" if text and stopped != "aborted" else ""
    return ChildOutcome(f"Subagent {agent.name} stopped: {stopped}.{partial}\n\n[{line}]", True, details)


def summary_line(agent: AgentDefinition, progress: ChildProgress) -> str:
    used = ", ".join(f"{name} x{count}" for name, count in progress.tools_used.most_common()) or "none"
    spent = progress.spent
    return (
        f"{agent.name}: {spent.turns} turns, tools {used}, {spent.tokens} tokens, "
        f"${spent.cost:.4f}, {progress.elapsed:.1f}s"
    )


def summary_details(
    agent: AgentDefinition, progress: ChildProgress, child: AgentSession, stopped: str | None, notes: list[str]
) -> dict[str, Any]:
    """The tool result's ``details``: the link to the child session and what it spent."""
    model = child.model
    first = progress.first_request_at
    return {
        "agent": agent.name,
        "description": progress.description,
        "sessionId": progress.session_id,
        "sessionFile": progress.session_file if child.store.session_file is not None and child.store.is_persisted else None,
        "model": None if model is None else f"{model.provider}/{model.id}",
        "turns": progress.spent.turns,
        "tools": dict(progress.tools_used),
        "usage": progress.spent.to_json(),
        "elapsedMs": int(progress.elapsed * 1000),
        "firstRequestMs": None if first is None else round((first - progress.started) * 1000, 2),
        "stopped": stopped,
        "notes": notes,
    }
