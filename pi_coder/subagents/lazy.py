"""The ``task`` tool declared without the extension framework (``pi -p``, ``--mode json``).

Loading the subagents extension at start imports the whole extension framework, which a run that
never delegates pays for nothing (about 15-20 ms of CPU per ``pi -p``). In print and json mode,
when no other extension loads, the set-up declares this stand-in instead: a plain tool with the
same name, parameters and description. The model's first ``task`` call loads the extension (the
framework, then the real tool, which replaces the stand-in) and hands the call over.

The description needs the agents' names and descriptions, so agent files are read here when an
agent folder exists; with none (the usual case) nothing is read and only ``general-purpose`` is
offered, as the extension would. See docs/subagents.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentTool
    from pi_coder.core.agent_session import AgentSession

__all__ = ["declare"]


def _description(cwd: str, config_dir: Path, *, trusted: bool) -> str:
    from pi_coder.subagents.definitions import GENERAL_PURPOSE, AgentSet, load_agents
    from pi_coder.subagents.extension import describe_agents

    root = Path(cwd)
    folders = [config_dir / "agents"]
    if trusted:
        folders += [root / ".pi" / "agents", root / ".claude" / "agents"]
    if any(folder.is_dir() for folder in folders):
        return describe_agents(load_agents(cwd, config_dir, project_trusted=trusted))
    return describe_agents(AgentSet([GENERAL_PURPOSE], []))


def declare(
    session: AgentSession, cwd: str, config_dir: Path, *, trusted: bool, load: Callable[[], Awaitable[None]]
) -> AgentTool[Any]:
    """Add the stand-in ``task`` tool to ``session``'s active tools and return it.

    ``load`` loads the subagents extension into the session (the modes' glue: it binds a runner
    and starts it in the session's mode); the first call awaits it once.
    """
    from pi_coder.agent.types import AgentTool
    from pi_coder.subagents.extension import TaskParams

    lock = asyncio.Lock()

    async def execute(tool_call_id: str, params: TaskParams, signal: Any, on_update: Any) -> Any:
        async with lock:  # parallel task calls of one reply: the first loads, the others wait
            if _real(session, stand_in) is None:
                await load()
        real = _real(session, stand_in)
        if real is None:
            raise ValueError("the subagents extension did not load (see the error above)")
        return await real.execute(tool_call_id, params, signal, on_update)

    stand_in: AgentTool[Any] = AgentTool(
        name="task",
        label="Task",
        description=_description(cwd, config_dir, trusted=trusted),
        parameters=TaskParams,
        execute=execute,
        execution_mode="parallel",
        read_only=True,  # as the real tool: the gate judges the child's own calls
    )
    session.agent.state.tools = [*session.agent.state.tools, stand_in]
    session.refresh_system_prompt()
    return stand_in


def _real(session: AgentSession, stand_in: Any) -> Any:
    return next((t for t in session.agent.state.tools if t.name == "task" and t is not stand_in), None)
