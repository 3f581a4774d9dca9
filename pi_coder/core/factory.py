"""``create_agent_session``: assemble the AgentSession a :class:`~pi_coder.core.startup.StartupPlan` describes."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, overload

from pi_coder.ai.models import Models
from pi_coder.ai.types import Model
from pi_coder.core.agent_session import AgentSession
from pi_coder.core.session_resources import DiscoveredPaths, LoadedResources, SessionResources
from pi_coder.core.shell_env import SessionMarkers, secret_env_names
from pi_coder.core.startup import PlanOptions, StartupPlan, plan_startup
from pi_coder.session.store import SessionStore
from pi_coder.settings import LoadedSettings, Settings
from pi_coder.tools import ALL_TOOL_NAMES, DEFAULT_TOOL_NAMES

if TYPE_CHECKING:
    from pi_coder.permissions.trust import TrustDecision

__all__ = ["DEFAULT_TOOL_NAMES", "DiscoveredPaths", "create_agent_session", "plan_for", "tool_settings_from"]


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


def plan_for(
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
) -> StartupPlan:
    """A plan without a command line (tests, embedding): loads what is not given, then plans.

    Args:
        cwd: The working directory of the session and its tools.
        settings: Loaded settings or a ``Settings``; default ``load_settings(cwd)``.
        models: The model collection; default ``create_models()``.
        store: The session store; default a new session for ``cwd`` (in memory with ``no_session``).
        no_session: Keep everything in memory (``--no-session``).
        session_dir: Folder of new session files, else the setting.
        model: The model; None: chosen by ``pick_start_model`` (the session's, the default...).
        thinking_level: The thinking level; None: the session's or the default (clamped).
        tool_names: Built-in tools to enable (default read, bash, edit, write; ``[]`` for none).
        tools: Ready tools to use instead of building ``tool_names``.
        system_prompt: ``--system-prompt`` text or file.
        append_system_prompt: ``--append-system-prompt`` text or file.
        context_files: False skips AGENTS.md/CLAUDE.md.
        skills: Skills for the prompt and ``/skill:`` (a ``SkillSet``, a list, or a callable).
        scoped_models: The Ctrl+P cycle; None: the ``enabled_models`` setting.
        stream_fn: The agent's stream function; default ``models.stream_simple``.
        project_trust: The trust decision for ``cwd``; untrusted skips ``.pi`` SYSTEM files and
            templates (and, when ``settings`` is not given, the gated project settings).
    """
    cwd = os.fspath(cwd)
    if settings is None:
        from pi_coder.settings import load_settings

        settings = load_settings(cwd, project_trusted=project_trust is None or project_trust.trusted)
    if models is None:
        from pi_coder.ai.models import create_models

        models = create_models()
    plain = settings.settings if isinstance(settings, LoadedSettings) else settings
    directory = session_dir or plain.session_dir
    if store is None:
        store = SessionStore.in_memory(cwd) if no_session else SessionStore.create(cwd, directory)
    options = PlanOptions(
        thinking=thinking_level,
        tools=None if tool_names is None else list(tool_names),
        system_prompt=system_prompt,
        append_system_prompt=[] if append_system_prompt is None else [append_system_prompt],
        no_context_files=not context_files,
    )
    plan = plan_startup(
        options,
        cwd=cwd,
        settings=settings,
        models=models,
        store=store,
        session_dir=directory,
        cli_model=None if model is None else (model, None),
        scoped_models=scoped_models,
        project_trust=project_trust,
        skills=skills,
        stream_fn=stream_fn,
        tools=tools,
    )
    return plan


@overload
def create_agent_session(plan: StartupPlan) -> AgentSession: ...
@overload
def create_agent_session(plan: str | os.PathLike[str], **legacy: Any) -> AgentSession: ...
def create_agent_session(plan: StartupPlan | str | os.PathLike[str], **legacy: Any) -> AgentSession:
    """Assemble the AgentSession ``plan`` describes (synchronous and cheap).

    It reads only the resources the plan names (context files, SYSTEM files, templates, skills).
    ``create_agent_session(cwd, **keywords)`` is short for ``create_agent_session(plan_for(cwd,
    **keywords))``.
    """
    if not isinstance(plan, StartupPlan):
        return create_agent_session(plan_for(plan, **legacy))
    from pi_coder.agent import Agent

    cwd = plan.cwd
    loaded = plan.settings
    plain: Settings = loaded.settings if isinstance(loaded, LoadedSettings) else loaded
    models = plan.models
    _apply_run_overrides(plan, plain)
    notices = list(plan.notices)
    trusted = plan.project_trust is None or plan.project_trust.trusted
    markers = SessionMarkers()
    tools: Sequence[Any] | None = plan.tools
    make_tool: Callable[[str], Any] | None = None
    if tools is None:
        extra = {"env_extra": markers, "secret_env_names": secret_env_names(models)}
        builtin = [name for name in plan.tool_names if name in ALL_TOOL_NAMES]  # extensions add theirs on bind
        settings_for_tools = tool_settings_from(plain, **extra)
        tools = _build_tools(cwd, builtin, settings_for_tools) if builtin else []

        def make_tool(name: str) -> Any:
            return _build_tools(cwd, [name], settings_for_tools)[0]

    discovered = DiscoveredPaths()

    def resources() -> LoadedResources:
        return _load_resources(cwd, plain, plan, trusted=trusted, discovered=discovered)

    res = resources()
    notices.extend(res.notices)
    from pi_coder.core.convert import make_convert_to_llm

    agent = Agent(
        initial_state={"model": plan.model, "tools": list(tools), "messages": []},
        stream_fn=plan.stream_fn or models.stream_simple,
        convert_to_llm=make_convert_to_llm(lambda: plain.images.block_images),
        thinking_budgets=plain.thinking_budgets.model_dump(),
        max_retry_delay_ms=plain.retry.max_delay_ms or None,
    )
    session = AgentSession(
        cwd=cwd,
        agent=agent,
        store=plan.store,
        models=models,
        settings=loaded,
        model=plan.model,
        thinking_level=plan.thinking_level,
        build_system_prompt=res.build_prompt,
        templates=res.templates,
        scoped_models=plan.scoped_models,
        context_files=res.context_files,
        startup_notices=notices,
        session_dir=plan.session_dir,
        resources=SessionResources(skills=res.skills, loader=resources, discovered_paths=discovered),
    )
    session.project_trust = plan.project_trust
    session.theme_paths, session.discover_themes = plan.theme_paths, plan.discover_themes
    session.make_builtin_tool = make_tool
    markers.session = session
    if plan.session_name is not None and plan.store.name != plan.session_name:
        session.set_session_name(plan.session_name)
    return session


def _apply_run_overrides(plan: StartupPlan, plain: Settings) -> None:
    """This run's ``--use-theme``/``--theme``/``--verbose`` on the in-memory settings (never saved)."""
    if plan.theme is not None:
        plain.theme = plan.theme
    if plan.theme_paths is not None:
        plain.themes = list(plan.theme_paths)
    if plan.verbose:
        plain.quiet_startup = False


def _load_resources(
    cwd: str, plain: Settings, plan: StartupPlan, *, trusted: bool, discovered: DiscoveredPaths | None = None
) -> LoadedResources:
    """Context files, SYSTEM/APPEND_SYSTEM, templates and skills: read at start and on ``/reload``."""
    from pi_coder.resources.context_files import load_project_context, read_prompt_argument
    from pi_coder.resources.system_prompt import PromptBuilder
    from pi_coder.resources.templates import load_templates

    notices: list[str] = []
    snippets = _tool_snippets()
    project = load_project_context(cwd, context_files=plan.context_files, project_trusted=trusted)
    notices.extend(project.warnings)
    system_prompt = plan.system_prompt
    custom = read_prompt_argument(system_prompt, cwd) if system_prompt is not None else None
    if custom is None and project.system is not None:
        custom = project.system.content
    appended = [read_prompt_argument(text, cwd) for text in plan.append_system_prompts]
    append = "\n\n".join(appended) if plan.append_system_prompts else None
    if append is None and project.append_system is not None:
        append = project.append_system.content
    skills = plan.skills
    extra = discovered or DiscoveredPaths()
    packaged = plan.packages() if plan.packages is not None else None
    package_skills, package_prompts = (packaged.skills, packaged.prompts) if packaged else ((), ())
    extra.package_themes[:] = packaged.themes if packaged else ()
    extra.packages[:] = packaged.summary if packaged else ()
    extra.package_roots[:] = packaged.roots if packaged else ()
    extra.cli_prompt_paths[:] = plan.prompt_template_paths
    if packaged is not None:
        notices.extend(packaged.notices)
    if callable(skills):
        more = [*package_skills, *extra.skills]
        found = skills(extra_paths=more) if more else skills()
    else:
        found = skills
    notices.extend(getattr(found, "warnings", ()))
    listed = found.skills if hasattr(found, "skills") else found

    build_prompt = PromptBuilder(
        cwd=cwd,
        tool_snippets=snippets,
        context_files=list(project.context_files),
        custom_prompt=custom,
        append_prompt=append,
        skills=listed,
    )

    configured = plain.prompts if plan.discover_prompt_templates else []
    templates = load_templates(
        cwd,
        extra_paths=[*configured, *package_prompts, *extra.prompts, *plan.prompt_template_paths],
        warnings=notices,
        project_trusted=trusted,
        discover=plan.discover_prompt_templates,
    )
    return LoadedResources(build_prompt, templates, found, [str(f.path) for f in project.context_files], notices)


def _build_tools(cwd: str, names: list[str], tool_settings: Any) -> list[Any]:
    from pi_coder.tools import create_tools

    return list(create_tools(cwd, names, tool_settings).values())


TASK_SNIPPET = "Delegate a self-contained task to a subagent with its own context"
"""The ``task`` tool's line in the system prompt (the subagents extension's tool, and the stand-in
``pi_coder.subagents.lazy`` declares without the extension framework)."""


def _tool_snippets() -> dict[str, str]:
    from pi_coder.tools import TOOL_PROMPT_SNIPPETS

    return {**TOOL_PROMPT_SNIPPETS, "task": TASK_SNIPPET}
