"""``create_agent_session``: build an AgentSession from settings, models, tools and a session store."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pi_coder.ai.models import Models
from pi_coder.ai.types import Model
from pi_coder.core.agent_session import AgentSession
from pi_coder.core.shell_env import SessionMarkers, secret_env_names
from pi_coder.session.store import SessionStore
from pi_coder.settings import LoadedSettings, Settings
from pi_coder.tools import DEFAULT_TOOL_NAMES

if TYPE_CHECKING:
    from pi_coder.core.trust import TrustDecision

__all__ = ["DEFAULT_TOOL_NAMES", "create_agent_session", "tool_settings_from"]


def tool_settings_from(settings: Settings, **extra: Any) -> Any:
    """The tools' ``ToolSettings`` for the user's settings (``extra``: more ``ToolSettings`` fields)."""
    from pi_coder.tools import ToolSettings

    return ToolSettings(
        shell_path=settings.shell_path,
        shell_command_prefix=settings.shell_command_prefix,
        bash_default_timeout=float(settings.bash.default_timeout),
        bash_max_timeout=float(settings.bash.max_timeout),
        image_auto_resize=settings.images.auto_resize,
        env_allow=tuple(settings.bash.env_allow),
        keep_background=settings.bash.keep_background,
        output_file_max_bytes=int(settings.bash.max_output_file_mb * 1024 * 1024),
        **extra,
    )


def create_agent_session(
    cwd: str | os.PathLike[str],
    *,
    settings: LoadedSettings | Settings | None = None,
    models: Models | None = None,
    store: SessionStore | None = None,
    no_session: bool = False,
    session_dir: str | None = None,
    model: Model | None = None,
    thinking_level: str | None = None,
    tool_names: Sequence[str] | None = None,
    tools: Sequence[Any] | None = None,
    system_prompt: str | None = None,
    append_system_prompt: str | None = None,
    context_files: bool = True,
    skills: Sequence[Any] | str | None = None,
    scoped_models: Sequence[tuple[Model, str | None]] | None = None,
    stream_fn: Callable[..., Any] | None = None,
    project_trust: TrustDecision | None = None,
) -> AgentSession:
    """Build an AgentSession (synchronous and cheap: reads settings, context files, templates).

    Args:
        cwd: The working directory of the session and its tools.
        settings: Loaded settings (preferred: changes are saved through them) or a ``Settings``;
            default ``load_settings(cwd)``.
        models: The model collection; default ``create_models()``.
        store: The session store; default a new session for ``cwd`` (or in memory with
            ``no_session``). A store with entries is resumed.
        no_session: Keep everything in memory (``--no-session``).
        session_dir: Folder of new session files (``--session-dir``, else the setting).
        model: The model to use; None: the session's (when resuming), the settings default,
            else the first available (``pick_start_model``).
        thinking_level: The thinking level; None: the session's or the default (clamped).
        tool_names: Built-in tools to enable (default read, bash, edit, write; ``[]`` for none).
        tools: Ready tools to use instead of building ``tool_names``.
        system_prompt: ``--system-prompt`` text or file (replaces SYSTEM.md and the default).
        append_system_prompt: ``--append-system-prompt`` text or file.
        context_files: False skips AGENTS.md/CLAUDE.md.
        skills: Skills for the prompt and ``/skill:`` (a ``SkillSet``, a list, or a callable giving
            one, called again on ``/reload``).
        scoped_models: The Ctrl+P cycle (``--models`` / ``enabled_models``).
        stream_fn: The agent's stream function; default ``models.stream_simple``.
        project_trust: The trust decision for ``cwd`` (``pi_coder.core.trust``); untrusted skips
            ``.pi/SYSTEM.md``, ``.pi/APPEND_SYSTEM.md``, ``.pi/prompts`` and (when ``settings`` is
            not given) the gated project settings. None: not checked, the project is used.
    """
    from pi_coder.agent import Agent
    from pi_coder.core.model_resolver import pick_start_model, resolve_scoped_models

    cwd = os.fspath(cwd)
    trusted = project_trust is None or project_trust.trusted
    loaded: LoadedSettings | Settings
    if settings is None:
        from pi_coder.settings import load_settings

        loaded = load_settings(cwd, project_trusted=trusted)
    else:
        loaded = settings
    plain: Settings = loaded.settings if isinstance(loaded, LoadedSettings) else loaded
    notices: list[str] = list(loaded.warnings) if isinstance(loaded, LoadedSettings) else []
    if models is None:
        from pi_coder.ai.models import create_models

        models = create_models()
    directory = session_dir or plain.session_dir
    if store is None:
        store = SessionStore.in_memory(cwd) if no_session else SessionStore.create(cwd, directory)
    if scoped_models is None:
        scoped_models = resolve_scoped_models(models, plain.enabled_models, warnings=notices) if plain.enabled_models else []
    if model is None:
        start = pick_start_model(models, plain, store, None, cli_thinking=thinking_level, scoped_models=scoped_models)
        model, thinking_level = start.model, start.thinking_level
        notices.extend(start.notices)

    markers = SessionMarkers()
    if tools is None:
        names = list(DEFAULT_TOOL_NAMES if tool_names is None else tool_names)
        extra = {"env_extra": markers, "secret_env_names": secret_env_names(models)}
        tools = _build_tools(cwd, names, tool_settings_from(plain, **extra)) if names else []
    discovered = DiscoveredPaths()

    def resources() -> _Resources:
        return _load_resources(
            cwd,
            plain,
            trusted=trusted,
            system_prompt=system_prompt,
            append_system_prompt=append_system_prompt,
            context_files=context_files,
            skills=skills,
            discovered=discovered,
        )

    res = resources()
    notices.extend(res.notices)
    from pi_coder.core.convert import make_convert_to_llm

    agent = Agent(
        initial_state={"model": model, "tools": list(tools), "messages": []},
        stream_fn=stream_fn or models.stream_simple,
        convert_to_llm=make_convert_to_llm(lambda: plain.images.block_images),
        thinking_budgets=plain.thinking_budgets.model_dump(),
        max_retry_delay_ms=plain.retry.max_delay_ms or None,
    )
    session = AgentSession(
        cwd=cwd,
        agent=agent,
        store=store,
        models=models,
        settings=loaded,
        model=model,
        thinking_level=thinking_level,
        build_system_prompt=res.build_prompt,
        templates=res.templates,
        scoped_models=scoped_models,
        context_files=res.context_files,
        startup_notices=notices,
        session_dir=directory,
    )
    session.project_trust = project_trust
    session.skills = res.skills
    session.resource_loader = resources
    session.discovered_paths = discovered
    markers.session = session
    return session


@dataclasses.dataclass(slots=True)
class DiscoveredPaths:
    """Skill and prompt-template paths extensions add (``resources_discover``, extensions §2.3),
    read with the other resources at start and on ``/reload``."""

    skills: list[str] = dataclasses.field(default_factory=list)
    prompts: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(slots=True)
class _Resources:
    build_prompt: Callable[..., str]
    templates: dict[str, Any]
    skills: Any
    context_files: list[str]
    notices: list[str]


def _load_resources(
    cwd: str,
    plain: Settings,
    *,
    trusted: bool,
    system_prompt: str | None,
    append_system_prompt: str | None,
    context_files: bool,
    skills: Any,
    discovered: DiscoveredPaths | None = None,
) -> _Resources:
    """Context files, SYSTEM/APPEND_SYSTEM, templates and skills: read at start and on ``/reload``."""
    from pi_coder.core.context_files import load_project_context, read_prompt_argument
    from pi_coder.core.system_prompt import ToolSpec, build_system_prompt
    from pi_coder.core.templates import load_templates

    notices: list[str] = []
    snippets = _tool_snippets()
    project = load_project_context(cwd, context_files=context_files, project_trusted=trusted)
    notices.extend(project.warnings)
    custom = read_prompt_argument(system_prompt, cwd) if system_prompt is not None else None
    if custom is None and project.system is not None:
        custom = project.system.content
    append = read_prompt_argument(append_system_prompt, cwd) if append_system_prompt is not None else None
    if append is None and project.append_system is not None:
        append = project.append_system.content
    extra = discovered or DiscoveredPaths()
    if callable(skills):
        found = skills(extra_paths=list(extra.skills)) if extra.skills else skills()
    else:
        found = skills
    notices.extend(getattr(found, "warnings", ()))
    listed = found.skills if hasattr(found, "skills") else found

    def build_prompt(active: Sequence[ToolSpec], guidelines: Sequence[str] = ()) -> str:
        return build_system_prompt(
            cwd=cwd,
            tools=active,
            tool_snippets=snippets,
            guidelines=guidelines,
            context_files=project.context_files,
            custom_prompt=custom,
            append_prompt=append,
            skills=listed,
        )

    prompt_paths = [*plain.prompts, *extra.prompts]
    templates = load_templates(cwd, extra_paths=prompt_paths, warnings=notices, project_trusted=trusted)
    return _Resources(build_prompt, templates, found, [str(f.path) for f in project.context_files], notices)


def _build_tools(cwd: str, names: list[str], tool_settings: Any) -> list[Any]:
    from pi_coder.tools import create_tools

    return list(create_tools(cwd, names, tool_settings).values())


def _tool_snippets() -> dict[str, str]:
    from pi_coder.tools import TOOL_PROMPT_SNIPPETS

    return dict(TOOL_PROMPT_SNIPPETS)
