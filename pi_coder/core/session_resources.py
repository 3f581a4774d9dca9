"""What the factory reads for a session besides its conversation: handed to ``AgentSession`` when built.

:class:`SessionResources` bundles the skills, the re-reader ``/reload`` calls and the paths
extensions add, so the session gets them typed at construction instead of as attributes set
afterwards. The MCP servers are not part of it: ``modes/mcp_host`` makes them once the session
exists (they are bound to it) or later on ``/reload``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.resources.skills import Skill, SkillSet

__all__ = ["DiscoveredPaths", "LoadedResources", "SessionResources"]


@dataclasses.dataclass(slots=True)
class DiscoveredPaths:
    """Skill, prompt-template and theme paths extensions add (``resources_discover``, see
    docs/extensions-runtime.md#event-catalogue): skills and templates are read with the other resources
    at start and on ``/reload``, themes join the TUI's theme list."""

    skills: list[str] = dataclasses.field(default_factory=list)
    prompts: list[str] = dataclasses.field(default_factory=list)
    themes: list[str] = dataclasses.field(default_factory=list)
    package_themes: list[str] = dataclasses.field(default_factory=list)
    """The installed packages' themes (``pi_coder.packages``), set with the other resources."""
    packages: list[str] = dataclasses.field(default_factory=list)
    """One line per configured package (name, version, source, what it contributes)."""
    package_roots: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    """``(folder, source spec, scope)`` per installed package (``PackagePaths.roots``)."""
    cli_prompt_paths: list[str] = dataclasses.field(default_factory=list)
    """``--prompt-template`` paths (their templates' ``sourceInfo`` says ``cli``)."""


@dataclasses.dataclass(slots=True)
class LoadedResources:
    """One reading of context files, SYSTEM/APPEND_SYSTEM, templates and skills."""

    build_prompt: Callable[..., str]
    templates: dict[str, Any]
    skills: SkillSet | Sequence[Skill] | None
    context_files: list[str]
    notices: list[str]


@dataclasses.dataclass(slots=True)
class SessionResources:
    """The session's resources, as the factory found them."""

    skills: SkillSet | Sequence[Skill] | None = None
    """For the prompt and ``/skill:name``; None: no skills."""
    loader: Callable[[], LoadedResources] | None = None
    """Re-reads the resources (``/reload``); None: nothing to re-read."""
    discovered_paths: DiscoveredPaths | None = None
    """Paths from ``resources_discover``, filled in when the extensions start."""
