"""The ``get_commands`` records of prompt templates, MCP prompts and skills (Pi's shape), for RPC's
``get_commands`` and the extensions' ``pi.get_commands()`` (docs/extensions-runtime.md#commands)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession

__all__ = ["mcp_prompt_records", "prompt_records", "skill_records"]


def prompt_records(session: AgentSession) -> list[dict[str, Any]]:
    """One record per prompt template, in the session's order."""
    return [
        {
            "name": template.name,
            "description": getattr(template, "description", "") or "",
            "source": "prompt",
            "sourceInfo": {"path": str(template.path), "scope": template.source},
        }
        for template in session.prompt_templates
    ]


def skill_records(session: AgentSession) -> list[dict[str, Any]]:
    """``skill:<name>`` records, when skill commands are on."""
    from pi_coder.resources.skills import SkillSet

    if not session.settings.enable_skill_commands:
        return []
    skills = session.skills.skills if isinstance(session.skills, SkillSet) else session.skills or ()
    return [
        {
            "name": f"skill:{skill.name}",
            "description": skill.description,
            "source": "skill",
            "sourceInfo": {"path": skill.file_path, "scope": skill.source},
        }
        for skill in skills
    ]


def mcp_prompt_records(session: AgentSession) -> list[dict[str, Any]]:
    """``mcp__<server>__<prompt>`` records of the connected MCP servers' prompts (docs/mcp.md#prompts)."""
    if session.mcp is None:
        return []
    from pi_coder.mcp.prompts import records

    return records(session.mcp)
