"""Start-up of subagents and run budgets, called by the modes' set-up (``docs/subagents.md``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.settings import LoadedSettings

__all__ = ["SPEC", "enabled", "install_budget", "load_agent_definitions", "wanted_extension"]

SPEC = "pi_coder.subagents.extension"


def enabled(loaded: LoadedSettings, *, disabled: bool) -> bool:
    """Whether the ``task`` tool is on (``subagents.enabled``, not ``--no-subagents``)."""
    return not disabled and loaded.settings.subagents.enabled


def load_agent_definitions(cwd: str, *, trusted: bool) -> None:
    """Read the agent definitions for the next loaded subagents extension."""
    from pi_coder.paths import config_dir
    from pi_coder.subagents.definitions import load_agents
    from pi_coder.subagents.extension import configure

    configure(load_agents(cwd, config_dir(), project_trusted=trusted))


def wanted_extension(cwd: str, loaded: LoadedSettings, *, disabled: bool, trusted: bool) -> str | None:
    """The extension spec to load (after handing it the agent definitions), or None when off."""
    if not enabled(loaded, disabled=disabled):
        return None
    load_agent_definitions(cwd, trusted=trusted)
    return SPEC


def install_budget(session: AgentSession, max_turns: int | None, max_usd: float | None) -> None:
    """``--max-turns``/``--max-budget-usd`` for the whole run (parent and children)."""
    from pi_coder.subagents.budget import set_run_budget

    set_run_budget(session, max_turns, max_usd)
