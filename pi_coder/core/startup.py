"""The start-up plan: everything a new AgentSession starts with, decided in one pure function.

:func:`plan_startup` turns what the command line asked for (:class:`StartupOptions`, which
``modes.options.CliOptions`` satisfies), the loaded settings, the model registry and the opened
session store into a frozen :class:`StartupPlan`: the start model and thinking level, the tool
selection, the system-prompt inputs, which resources are discovered, the session name, the theme
for this run and the notices for the user. It reads nothing from disk or the network itself;
:func:`pi_coder.core.factory.create_agent_session` then only assembles the session the plan
describes.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_coder.core.startup_options import StartupOptions
from pi_coder.errors import UserError
from pi_coder.settings import LoadedSettings, Settings
from pi_coder.tools import ALL_TOOL_NAMES, DEFAULT_TOOL_NAMES

if TYPE_CHECKING:
    from pi_coder.ai.models import Models
    from pi_coder.ai.types import Model
    from pi_coder.packages.active import PackagePaths
    from pi_coder.permissions.trust import TrustDecision
    from pi_coder.session.store import SessionStore

__all__ = ["PlanOptions", "StartupOptions", "StartupPlan", "plan_startup", "select_tools"]


PlanOptions = StartupOptions
"""The options of a plan without a command line (tests, embedding): the same class as ``CliOptions``' base."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StartupPlan:
    """What the session starts with. The values are decided; the collaborators are only held.

    ``settings``, ``models`` and ``store`` are the already loaded settings, the model registry
    and the opened session store; ``skills``, ``stream_fn`` and ``tools`` are optional ready
    parts handed through unchanged.
    """

    cwd: str
    settings: LoadedSettings | Settings
    models: Models
    store: SessionStore
    session_dir: str | None
    """Folder for new session files (``--session-dir``, the environment, else the setting)."""
    model: Model | None
    thinking_level: str | None
    scoped_models: tuple[tuple[Model, str | None], ...] = ()
    tool_names: tuple[str, ...] = DEFAULT_TOOL_NAMES
    """Built-in tools to build, in order."""
    system_prompt: str | None = None
    """``--system-prompt`` text or file (replaces SYSTEM.md and the default prompt)."""
    append_system_prompts: tuple[str, ...] = ()
    """``--append-system-prompt`` texts or files, in order (replace APPEND_SYSTEM.md)."""
    context_files: bool = True
    """False: no AGENTS.md/CLAUDE.md (``-nc``)."""
    prompt_template_paths: tuple[str, ...] = ()
    """``--prompt-template`` files or folders (after the ``prompts`` setting; they win on a clash)."""
    discover_prompt_templates: bool = True
    """False (``-np``): only ``prompt_template_paths``; no discovered or configured templates."""
    theme: str | None = None
    """The theme for this run (``--use-theme``), not saved; None: the ``theme`` setting."""
    theme_paths: tuple[str, ...] | None = None
    """Theme files or folders for this run; None: the ``themes`` setting."""
    discover_themes: bool = True
    """False (``--no-themes``): only the built-in themes and ``theme_paths``; no config or
    ``.pi/themes`` folder, no ``themes`` setting."""
    session_name: str | None = None
    """``-n/--name``: recorded as a ``session_info`` entry unless the session already has it."""
    project_trust: TrustDecision | None = None
    verbose: bool = False
    notices: tuple[str, ...] = ()
    """Warnings for the user: settings problems, tool selection, model fallbacks."""
    skills: Any = None
    stream_fn: Callable[..., Any] | None = None
    tools: tuple[Any, ...] | None = None
    """Ready tools to use instead of building ``tool_names``."""
    packages: Callable[[], PackagePaths | None] | None = None
    """The installed packages' skills, templates and themes (read at start and on ``/reload``)."""


def plan_startup(
    options: StartupOptions,
    *,
    cwd: str,
    settings: LoadedSettings | Settings,
    models: Models,
    store: SessionStore,
    session_dir: str | None = None,
    cli_model: tuple[Model, str | None] | None = None,
    scoped_models: Sequence[tuple[Model, str | None]] | None = None,
    project_trust: TrustDecision | None = None,
    skills: Any = None,
    stream_fn: Callable[..., Any] | None = None,
    tools: Sequence[Any] | None = None,
    extension_tools: Sequence[str] = (),
    extension_defaults: Sequence[str] | None = None,
    packages: Callable[[], PackagePaths | None] | None = None,
) -> StartupPlan:
    """The plan for ``options``; reads only its arguments (no files, no network).

    Args:
        options: The command-line choices.
        cwd: The working directory.
        settings: The loaded settings.
        models: The model registry (keys already set).
        store: The opened session store; a store with entries is resumed (its model and level).
        session_dir: ``--session-dir`` or the environment's folder; None: the ``session_dir`` setting.
        cli_model: What ``--model``/``--provider`` resolved to.
        scoped_models: The ``--models`` scope; None: the ``enabled_models`` setting.
        project_trust: The trust decision for ``cwd``.
        skills: A ``SkillSet``, a list, or a callable giving one (called again on ``/reload``).
        stream_fn: The agent's stream function; default ``models.stream_simple``.
        tools: Ready tools (instead of the built-in ones).
        extension_tools: Names of the tools loaded extensions registered: ``--tools`` patterns and
            names match them too, and ``tool_names`` lists those to activate.
        extension_defaults: Those of ``extension_tools`` active by default (None: all).
        packages: The installed packages' resource paths (``pi_coder.packages``), called at start
            and on ``/reload``.

    Raises:
        UserError: ``--tools`` mixes plain names with ``+name``/``-name`` entries.
    """
    from pi_coder.core.model_resolver import pick_start_model, resolve_scoped_models

    plain = settings.settings if isinstance(settings, LoadedSettings) else settings
    notices: list[str] = list(settings.warnings) if isinstance(settings, LoadedSettings) else []
    if scoped_models is None:
        scoped_models = resolve_scoped_models(models, plain.enabled_models, warnings=notices) if plain.enabled_models else []
    start = pick_start_model(
        models, plain, store, cli_model, cli_thinking=options.thinking, scoped_models=scoped_models
    )
    notices.extend(start.notices)
    tool_names = select_tools(
        options.tools,
        no_tools=options.no_tools,
        no_builtin_tools=options.no_builtin_tools,
        exclude=options.exclude_tools,
        warnings=notices,
        extension_tools=extension_tools,
        extension_defaults=extension_defaults,
    )
    theme_paths = None
    if options.themes or options.no_themes:
        theme_paths = (*(() if options.no_themes else plain.themes), *options.themes)
    return StartupPlan(
        cwd=cwd,
        settings=settings,
        models=models,
        store=store,
        session_dir=session_dir or plain.session_dir,
        model=start.model,
        thinking_level=start.thinking_level,
        scoped_models=tuple(scoped_models),
        tool_names=tool_names,
        system_prompt=options.system_prompt,
        append_system_prompts=tuple(options.append_system_prompt),
        context_files=not options.no_context_files,
        prompt_template_paths=tuple(options.prompt_templates),
        discover_prompt_templates=not options.no_prompt_templates,
        theme=options.use_theme,
        theme_paths=theme_paths,
        discover_themes=not options.no_themes,
        session_name=options.name.strip() if options.name and options.name.strip() else None,
        project_trust=project_trust,
        verbose=options.verbose,
        notices=tuple(notices),
        skills=skills,
        stream_fn=stream_fn,
        tools=None if tools is None else tuple(tools),
        packages=packages,
    )


def select_tools(
    entries: Sequence[str] | None,
    *,
    no_tools: bool = False,
    no_builtin_tools: bool = False,
    exclude: Sequence[str] = (),
    default: Sequence[str] = DEFAULT_TOOL_NAMES,
    warnings: list[str] | None = None,
    extension_tools: Sequence[str] = (),
    extension_defaults: Sequence[str] | None = None,
) -> tuple[str, ...]:
    """The tools to enable, by Pi's rules: built-in ones and ``extension_tools`` (extensions'
    tools; ``extension_defaults`` of them, all when None, are active by default: ``no_builtin_tools``
    keeps those, ``no_tools`` drops them too).

    ``entries`` (``-t/--tools``) is an allowlist of names and ``*`` patterns, or, when every
    entry is ``+name`` or ``-name``, a change to the default set. ``mcp__`` entries are for MCP
    and leave the built-ins alone. ``no_tools``/``no_builtin_tools`` empty the default set (an
    allowlist adds tools back); ``exclude`` (names or patterns) is applied last.

    Raises:
        UserError: Plain names mixed with ``+name``/``-name`` entries.
    """
    sink = warnings if warnings is not None else []
    known = [*ALL_TOOL_NAMES, *(name for name in extension_tools if name not in ALL_TOOL_NAMES)]
    base = [] if no_tools or no_builtin_tools else list(default)
    if not no_tools:
        defaults = extension_tools if extension_defaults is None else extension_defaults
        base.extend(name for name in defaults if name not in base)
    builtin = [entry for entry in entries or () if not entry.startswith("mcp__")]
    relative = [entry for entry in builtin if entry[:1] in ("+", "-")]
    if relative and len(relative) != len(builtin):
        raise UserError("--tools cannot mix plain names with +name/-name entries; use one form")
    if entries is not None and not builtin and entries:
        selected = base  # only MCP tools named: the built-ins stay as they are
    elif relative:
        selected = base
        for entry in relative:
            name = entry[1:]
            if name not in known:
                sink.append(_unknown_tool(name, known))
            elif entry[0] == "+" and name not in selected:
                selected.append(name)
            elif entry[0] == "-" and name in selected:
                selected.remove(name)
    elif entries is not None:
        selected = []
        for entry in builtin:
            matches = _matching(entry, known)
            if not matches:
                sink.append(_unknown_tool(entry, known))
            selected.extend(name for name in matches if name not in selected)
    else:
        selected = base
    return tuple(name for name in selected if not any(_matching(pattern, (name,)) for pattern in exclude))


def _matching(pattern: str, names: Sequence[str]) -> list[str]:
    if "*" in pattern:
        return [name for name in names if fnmatch.fnmatchcase(name, pattern)]
    return [pattern] if pattern in names else []


def _unknown_tool(name: str, known: Sequence[str] = ALL_TOOL_NAMES) -> str:
    return f'Unknown tool "{name}". Valid tools: {", ".join(known)}'
