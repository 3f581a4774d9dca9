"""The ``get_commands`` records of prompt templates and skills (Pi's shape), for RPC's
``get_commands`` and the extensions' ``pi.get_commands()`` (docs/extensions-runtime.md#commands).

Each record's ``sourceInfo`` is ``{path, source, scope, origin}`` plus ``baseDir`` for a
package's resource (``pi_coder.resources.source_info``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession

__all__ = ["prompt_records", "skill_records", "source_info_finder"]


def source_info_finder(session: AgentSession) -> Callable[[str], dict[str, str]]:
    """``path -> sourceInfo`` for the session's resource files."""
    from pi_coder.paths import config_dir
    from pi_coder.resources.source_info import PackageRoot, for_path

    found = session.discovered_paths
    roots = [
        PackageRoot(root, spec, cast(Literal["user", "project"], scope))
        for root, spec, scope in (found.package_roots if found is not None else ())
    ]
    cli = list(found.cli_prompt_paths) if found is not None else []
    folder = config_dir()
    return lambda path: for_path(path, cwd=session.cwd, config_dir=folder, packages=roots, cli_paths=cli)


def prompt_records(session: AgentSession) -> list[dict[str, Any]]:
    """One record per prompt template, in the session's order."""
    info = source_info_finder(session)
    return [
        {
            "name": template.name,
            "description": getattr(template, "description", "") or "",
            "source": "prompt",
            "sourceInfo": info(str(template.path)),
        }
        for template in session.prompt_templates
    ]


def skill_records(session: AgentSession) -> list[dict[str, Any]]:
    """``skill:<name>`` records, when skill commands are on."""
    from pi_coder.resources.skills import SkillSet
    from pi_coder.resources.source_info import make

    if not session.settings.enable_skill_commands:
        return []
    skills = session.skills.skills if isinstance(session.skills, SkillSet) else session.skills or ()
    info = source_info_finder(session)
    return [
        {
            "name": f"skill:{skill.name}",
            "description": skill.description,
            "source": "skill",
            "sourceInfo": make(skill.file_path, "cli", "temporary") if skill.source == "cli" else info(skill.file_path),
        }
        for skill in skills
    ]
