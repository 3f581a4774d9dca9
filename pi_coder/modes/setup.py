"""Start-up shared by every mode: settings, models, the session store, the start model, prompts.

``prepare(options, mode=..., cwd=..., stdin_text=...)`` turns the parsed command line into an
:class:`~pi_coder.core.AgentSession` plus the prompts to send. User mistakes raise
:class:`~pi_coder.errors.UserError` (one line for the user); a declined fork raises
:class:`StartupExit`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pi_coder.errors import SessionNotFoundError, UserError
from pi_coder.modes.options import StartupExit
from pi_coder.paths import session_dir_from_env

if TYPE_CHECKING:
    from pi_coder.ai.models import Models
    from pi_coder.ai.types import ImageContent, Model
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.modes.options import CliOptions, RunMode
    from pi_coder.packages.active import PackagePaths
    from pi_coder.permissions.trust import TrustChoice, TrustDecision, TrustHandler
    from pi_coder.resources.skills import SkillSet
    from pi_coder.session.store import SessionStore
    from pi_coder.settings import LoadedSettings

__all__ = [
    "Startup",
    "StartupExit",
    "TrustAsker",
    "build_prompts",
    "prepare",
    "read_piped_stdin",
]

TrustAsker = Callable[[Path, list[str]], "TrustChoice | None"]
"""``ask(folder, resources) -> choice``: the TUI's trust dialog (None = Esc, nothing saved)."""


@dataclass(slots=True, kw_only=True)
class Startup:
    """What a mode needs to run."""

    session: AgentSession
    prompts: list[str] = field(default_factory=list)
    """Prompts to send one after another; the first carries @file text and piped stdin."""
    images: list[ImageContent] = field(default_factory=list)
    """Images from @file arguments, attached to the first prompt."""
    notices: list[str] = field(default_factory=list)
    """Warnings for the user (invalid settings, unknown tools, model fallbacks, missing key)."""
    news: list[str] = field(default_factory=list)
    """Plain information, not warnings (a local server was found): said once, without "Warning:"."""
    trust: TrustDecision | None = None
    """How trust in the project folder was decided (``source == "undecided"``: nobody was asked)."""


def read_piped_stdin() -> str | None:
    """The whole of stdin, stripped, when it is not a terminal and holds text; else None."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return None
    try:
        if stream.isatty():
            return None
        data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode()
    except (OSError, ValueError):
        return None
    text = data.decode("utf-8", errors="replace").strip()
    return text or None


def build_prompts(messages: list[str], file_text: str, stdin_text: str | None) -> list[str]:
    """The prompts to send: @file text, then piped stdin, then the first message form prompt one."""
    head = file_text + (stdin_text + "\n\n" if stdin_text and messages else stdin_text or "")
    prompts = [head + messages[0], *messages[1:]] if messages else [head] if head else []
    return [_valid_unicode(prompt) for prompt in prompts]


def _valid_unicode(text: str) -> str:
    """``text`` with lone surrogates (bytes of argv or file names that are not UTF-8) as U+FFFD.

    They cannot be encoded as UTF-8, so JSON output and provider requests would fail on them.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")  # the original bytes: one U+FFFD per bad byte
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "surrogatepass")
        return raw.decode("utf-8", "replace")
    return text


def prepare(
    options: CliOptions,
    *,
    mode: RunMode,
    cwd: str,
    stdin_text: str | None = None,
    ask_trust: TrustAsker | None = None,
    trust_handlers: Sequence[TrustHandler] = (),
    settings_overrides: Mapping[str, object] | None = None,
) -> Startup:
    """Build the session and prompts for ``options``.

    Trust in the project folder is decided first (docs/permissions.md#deciding-trust), before anything the folder
    controls is read or the session store is created: ``ask_trust`` is called in interactive mode
    when nothing else decides; ``trust_handlers`` come before the extensions' ``project_trust``
    handlers. ``settings_overrides`` (the SDK's ``settings=``) replace top-level settings in memory.

    Raises:
        UserError: Invalid models.toml, unknown model or provider, missing key or no model at
            all (non-interactive modes), unknown session, missing @file, --api-key without a model.
        StartupExit: The user declined to fork a session from another project.
    """
    import time

    from pi_coder.ai.models import create_models
    from pi_coder.core.factory import create_agent_session
    from pi_coder.core.startup import plan_startup
    from pi_coder.settings import load_settings

    started = time.perf_counter()

    interactive = mode == "interactive"
    _check_paths(options, cwd)
    notices = list(options.warnings)
    loaded = load_settings(cwd, project_trusted=False)
    if loaded.unreadable:  # running on defaults would drop its permission and sandbox settings unseen
        raise UserError(loaded.unreadable[0])
    from pi_coder.modes import extension_host

    handlers = [*trust_handlers, *extension_host.trust_handlers(options, cwd, loaded)]  # project_trust
    trust = _decide_trust(options, cwd, loaded, ask_trust if interactive else None, handlers, notices)
    if trust.trusted and loaded.project_path.is_file():  # the gated project keys apply after all
        loaded = load_settings(cwd, project_trusted=True)
    if settings_overrides:
        override_settings(loaded, settings_overrides)
    # The scripted demo provider is only registered when asked for, so it never shows up as
    # "available" in --list-models or the model picker.
    wants_faux = (options.provider or "").lower() == "faux" or (options.model or "").startswith("faux")
    models = create_models(include_faux=wants_faux)

    from pi_coder.permissions.startup import BUILTIN_SPEC, configure_safety

    if configure_safety(options.permission_mode, options.sandbox, loaded, cwd) and BUILTIN_SPEC not in options.extensions:
        options.extensions.append(BUILTIN_SPEC)
    from pi_coder.subagents import startup as subagents

    subagents_at = len(options.extensions)
    from pi_coder.hooks.startup import HOOKS_SPEC, configure_hooks

    if configure_hooks(options.no_hooks, loaded, cwd, models, trusted=trust.trusted, notices=notices):
        if HOOKS_SPEC not in options.extensions:
            options.extensions.append(HOOKS_SPEC)
    # The task tool: with no other extension in print and json mode, a stand-in that loads the
    # extension framework on its first call (subagents/lazy.py); else the extension, as always.
    lazy_task = (
        subagents.enabled(loaded, disabled=options.no_subagents)
        and mode in ("text", "json")
        and not extension_host.would_load(options, cwd, loaded, project_trusted=trust.trusted)
    )
    if not lazy_task and subagents.enabled(loaded, disabled=options.no_subagents):
        subagents.load_agent_definitions(cwd, trusted=trust.trusted)
        if subagents.SPEC not in options.extensions:
            options.extensions.insert(subagents_at, subagents.SPEC)
    # The project's .pi/extensions and its settings' extension entries load only for a trusted folder.
    extensions = extension_host.load_for_startup(options, cwd, loaded, models, project_trusted=trust.trusted)
    extension_host.resolve_flags(extensions, options)
    news = _discover_local(options, models, loaded)
    cli_model = _cli_model(options, models, notices)
    scoped = _scoped_models(options, models, notices)
    if options.api_key:
        target = cli_model[0] if cli_model else (scoped[0][0] if scoped else None)
        if target is None:
            raise UserError("--api-key needs a model: add --model (or --models) to say which provider it is for")
        models.set_api_key(target.provider, options.api_key)

    file_text = ""
    images: list[ImageContent] = []
    if options.file_args:
        from pi_coder.modes.files import process_file_args

        file_text, images = process_file_args(options.file_args, cwd, auto_resize=loaded.settings.images.auto_resize)
    prompts = build_prompts(options.messages, file_text, stdin_text)

    session_dir = _session_dir(options, loaded)
    store = open_store(options, cwd, session_dir, interactive=interactive)
    plan = plan_startup(
        options,
        cwd=cwd,
        settings=loaded,
        models=models,
        store=store,
        session_dir=session_dir,
        cli_model=cli_model,
        scoped_models=scoped or None,
        project_trust=trust,
        skills=_skill_loader(options, cwd, loaded, trust.trusted),
        extension_tools=[*extension_host.tool_names(extensions), *(["task"] if lazy_task else [])],
        extension_defaults=[*extension_host.tool_names(extensions, default_active=True), *(["task"] if lazy_task else [])],
        packages=_package_loader(cwd, loaded, trust.trusted),
    )
    # The settings' own warnings reach the user through the session's start-up notices.
    notices.extend(n for n in plan.notices if n not in loaded.warnings and n not in notices)
    problem = _model_problem(models, plan.model, cli_model is not None)
    if problem is not None:
        if not interactive:
            raise UserError(problem)
        if plan.model is not None:  # with no model at all the TUI shows this guidance itself
            notices.append(problem)
    if models.credentials_problem is not None and (problem is None or models.credentials_problem not in problem):
        notices.append(f"{models.credentials_problem}; its keys were not used")

    session = create_agent_session(plan)
    subagents.install_budget(session, options.max_turns, options.max_budget_usd)
    extension_host.bind(extensions, session)
    extension_host.select_tools(extensions, options, plan.tool_names)
    if lazy_task and "task" in plan.tool_names:
        _declare_task(session, cwd, models, trusted=trust.trusted, mode=mode)
    from pi_coder.modes import mcp_host

    mcp_host.setup(options, session, project_trusted=trust.trusted)
    notices.extend(n for n in session.startup_notices if n not in notices)
    if plan.verbose:
        from pi_coder.modes.diagnostics import print_startup_diagnostics

        print_startup_diagnostics(plan, session, loaded, elapsed=time.perf_counter() - started)
    return Startup(session=session, prompts=prompts, images=images, notices=notices, news=news, trust=trust)


def override_settings(loaded: LoadedSettings, overrides: Mapping[str, object]) -> None:
    """Replace top-level settings in memory (a table merges into the loaded one); nothing is saved.

    Raises:
        UserError: An unknown key or an invalid value.
    """
    from pydantic import BaseModel, ValidationError

    from pi_coder.settings import Settings

    plain = loaded.settings
    for key, value in overrides.items():
        if key not in Settings.model_fields:
            raise UserError(f"unknown setting {key!r} (see settings.example.toml)")
        current = getattr(plain, key)
        merged = {**current.model_dump(), **value} if isinstance(current, BaseModel) and isinstance(value, Mapping) else value
        try:
            checked = Settings.model_validate({key: merged})
        except ValidationError as exc:
            raise UserError(f"invalid value for setting {key}: {exc.errors()[0]['msg']}") from None
        setattr(plain, key, getattr(checked, key))


def _discover_local(options: CliOptions, models: Models, loaded: LoadedSettings) -> list[str]:
    """No provider has a key: offer a local server found on loopback (``local_discovery``).

    Returns the line to tell the user what was found (news, not a warning), or nothing."""
    if options.api_key or not loaded.settings.local_discovery or models.available_models():
        return []
    from pi_coder.ai.discovery import discover_local, found_notice, register_found

    found = discover_local()
    if not found:
        return []
    register_found(models, found)
    return [found_notice(found)]


def _package_loader(cwd: str, loaded: LoadedSettings, trusted: bool) -> Callable[[], PackagePaths | None]:
    """The installed packages' resource paths (docs/packages.md), read at start and on ``/reload``
    (``loaded`` is re-read in place); None while no settings file lists a package."""

    def load() -> PackagePaths | None:
        if not loaded.global_data.get("packages") and not (trusted and loaded.project_data.get("packages")):
            return None
        from dataclasses import replace

        from pi_coder.packages.active import active_packages, package_paths

        warnings: list[str] = []
        found = active_packages(cwd, loaded.global_data, loaded.project_data, project_trusted=trusted, warnings=warnings)
        return replace(package_paths(found), notices=tuple(warnings))

    return load


class _SkillLoader(Protocol):
    def __call__(self, extra_paths: Sequence[str] = ()) -> SkillSet: ...


def _skill_loader(options: CliOptions, cwd: str, loaded: LoadedSettings, trusted: bool) -> _SkillLoader:
    """A callable discovering the skills (docs/architecture.md#skill-locations), called at start and on ``/reload``."""

    def load(extra_paths: Sequence[str] = ()) -> SkillSet:  # extra: resources_discover paths
        from pi_coder.paths import config_dir
        from pi_coder.resources.skills import load_skills

        return load_skills(
            cwd,
            config_dir=config_dir(),
            project_trusted=trusted,
            cli_paths=options.skills,
            no_skills=options.no_skills,
            project_paths=[str(p) for p in loaded.project_data.get("skills") or () if isinstance(p, str)],
            global_paths=[str(p) for p in loaded.global_data.get("skills") or () if isinstance(p, str)],
            claude_skills=loaded.settings.claude_skills,
            extra_paths=extra_paths,
        )

    return load


def _decide_trust(
    options: CliOptions,
    cwd: str,
    loaded: LoadedSettings,
    ask: TrustAsker | None,
    handlers: Sequence[TrustHandler],
    notices: list[str],
) -> TrustDecision:
    from pi_coder.permissions.trust import (
        apply_trust_choice,
        canonical_path,
        decide_project_trust,
        project_resources,
        undecided,
    )

    decision = decide_project_trust(
        cwd,
        flag=options.trust_flag,
        default=loaded.settings.default_project_trust,
        handlers=handlers,
        warnings=notices,
    )
    if decision is not None:
        return decision
    if ask is None:
        return undecided(cwd)
    folder = canonical_path(cwd)
    return apply_trust_choice(folder, ask(folder, project_resources(folder)), notices)


def _cli_model(options: CliOptions, models: Models, notices: list[str]) -> tuple[Model, str | None] | None:
    from pi_coder.core.model_resolver import default_model_ids, resolve_model_pattern

    if options.model:
        return resolve_model_pattern(models, options.model, options.provider, warnings=notices)
    if not options.provider:
        return None
    record = models.get_provider(options.provider)
    if record is None:
        raise UserError(f'Unknown provider "{options.provider}". Use --list-models to see available models.')
    default_id = default_model_ids().get(record.name)
    model = record.get_model(default_id) if default_id else None
    if model is None and record.models:
        model = record.models[0]
    if model is None:
        raise UserError(f'Provider "{record.name}" has no models; add some to models.toml or pass --model.')
    return model, None


def _scoped_models(options: CliOptions, models: Models, notices: list[str]) -> list[tuple[Model, str | None]]:
    if not options.models:
        return []
    from pi_coder.core.model_resolver import resolve_scoped_models

    return resolve_scoped_models(models, options.models, warnings=notices)


def _declare_task(session: AgentSession, cwd: str, models: Models, *, trusted: bool, mode: str) -> None:
    """The stand-in ``task`` tool; its first call loads the subagents extension in this mode."""
    from pi_coder.paths import config_dir
    from pi_coder.subagents import lazy
    from pi_coder.subagents.startup import SPEC, load_agent_definitions

    async def load() -> None:
        from pi_coder.modes import extension_host

        load_agent_definitions(cwd, trusted=trusted)
        await extension_host.attach_late(
            session, SPEC, cwd, models, project_trusted=trusted, mode="json" if mode == "json" else "print"
        )

    lazy.declare(session, cwd, config_dir(), trusted=trusted, load=load)


def _check_paths(options: CliOptions, cwd: str) -> None:
    """``--prompt-template``, ``--skill`` and ``--theme`` name files or folders: a missing one is a
    typo to fix now (one line, exit 1), not a warning to scroll past."""
    for flag, paths in (("--prompt-template", options.prompt_templates), ("--skill", options.skills), ("--theme", options.themes)):
        for path in paths:
            full = os.path.join(cwd, os.path.expanduser(path))
            if not os.path.exists(full):
                raise UserError(f"{flag} {path}: no such file or folder")


def _model_problem(models: Models, model: Model | None, explicit: bool) -> str | None:
    if model is not None and models.has_key(model.provider):
        return None
    if model is not None and explicit:  # the user named the model: say what its key lacks, in one line
        return models.missing_key_message(model.provider)
    if not models.available_models():
        from pi_coder.core.no_model import no_model_text

        text = no_model_text(models.models_toml_path)
        return text if models.credentials_problem is None else f"{models.credentials_problem}.\n{text}"
    if model is None:  # pragma: no cover - pick_start_model returns an available model here
        return "No model selected. Use --model (see --list-models)."
    return models.missing_key_message(model.provider)


def _session_dir(options: CliOptions, loaded: LoadedSettings) -> str | None:
    value = options.session_dir or session_dir_from_env() or loaded.settings.session_dir
    return os.path.expanduser(value) if value else None


def _looks_like_path(arg: str) -> bool:
    return "/" in arg or "\\" in arg or arg.endswith(".jsonl")


def open_store(options: CliOptions, cwd: str, session_dir: str | None, *, interactive: bool) -> SessionStore:
    """The session store the options ask for.

    Raises:
        UserError: No session matches ``--session``, or the prefix is ambiguous, or the file is not
            a session file, or the session folder cannot be written.
        StartupExit: The user declined to fork another project's session, or picked none (``-r``).
    """
    from pi_coder.paths import session_dir_for_cwd
    from pi_coder.session.store import SessionStore

    if options.no_session:
        store = SessionStore.in_memory(cwd)
        if options.session_id:
            store.new_session(session_id=options.session_id)
        return store
    if options.session and _looks_like_path(options.session):
        file = Path(os.path.expanduser(options.session))
        if file.is_dir():
            raise UserError(
                f"--session {options.session} is a folder: give a session file (.jsonl) or a session id "
                "(--session-dir chooses the folder)"
            )
        if not file.exists():
            _check_writable_folder(file.parent, "give --session a file in a writable folder, or use --no-session")
    else:
        folder = Path(session_dir) if session_dir else session_dir_for_cwd(cwd)
        _check_writable_folder(folder, "use --session-dir with a writable folder, or --no-session")
    if options.fork:
        return _fork_store(options.fork, cwd, session_dir, options.session_id)
    if options.session:
        arg = options.session
        if _looks_like_path(arg):
            return SessionStore.open(Path(os.path.expanduser(arg)), session_dir)
        from pi_coder.session.listing import resolve_session

        try:
            path = resolve_session(arg, cwd, session_dir)
        except SessionNotFoundError as exc:
            raise SessionNotFoundError(f"{exc}; run pi -r to pick one") from None
        local = Path(session_dir) if session_dir else session_dir_for_cwd(cwd)
        if path.parent.resolve() != local.resolve():
            _confirm_fork(path)
            return SessionStore.fork_from(path, cwd, session_dir)
        return SessionStore.open(path, session_dir)
    if options.session_id:
        from pi_coder.session.listing import find_session_by_id

        existing = find_session_by_id(options.session_id, cwd, session_dir)
        if existing is not None:
            return SessionStore.open(existing, session_dir)
        return SessionStore.create(cwd, session_dir, session_id=options.session_id)
    if options.continue_session:
        return SessionStore.continue_recent(cwd, session_dir)
    if options.resume and not interactive:  # the TUI opens its own picker (PiApp resume=True)
        from pi_coder.modes.session_picker import pick_session

        return SessionStore.open(pick_session(cwd, session_dir), session_dir)
    return SessionStore.create(cwd, session_dir)


def _fork_store(arg: str, cwd: str, session_dir: str | None, session_id: str | None) -> SessionStore:
    """``--fork``: a copy of the session ``arg`` names (a path, or an id in any project) here."""
    from pi_coder.session.listing import resolve_session
    from pi_coder.session.store import SessionStore

    source = resolve_session(os.path.expanduser(arg) if _looks_like_path(arg) else arg, cwd, session_dir)
    if session_id is not None:
        from pi_coder.session.listing import find_session_by_id

        if find_session_by_id(session_id, cwd, session_dir) is not None:
            raise UserError(f"--session-id {session_id}: this folder already has a session with that id")
    return SessionStore.fork_from(source, cwd, session_dir, session_id=session_id)


def _check_writable_folder(folder: Path, advice: str) -> None:
    """Fail now, not at the first save in the middle of a run, if sessions cannot go in ``folder``.

    Nothing is created: the nearest existing folder on the way must be a writable folder.
    """
    existing = folder.absolute()
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        problem = f"{existing} is not a folder"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = f"{existing} is not writable"
    else:
        return
    raise UserError(f"Cannot save sessions in {folder}: {problem}; {advice}")


def _confirm_fork(path: Path) -> None:
    """Ask before copying another project's session here (Pi's prompt); non-terminals just fork."""
    stdin = sys.stdin
    if stdin is None or not stdin.isatty():
        print(f"Session {path.name} belongs to another project; forking it into this folder.", file=sys.stderr)
        return
    try:
        answer = input(f"Session {path} is from another project. Fork this session into current directory? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        raise StartupExit(0, "Aborted.")

