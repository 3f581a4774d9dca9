"""Start-up and shutdown of extensions for every mode (docs/extensions-runtime.md#start-up-sequence, docs/extensions-runtime.md#errors-and-isolation, docs/extensions-runtime.md#flags).

``load_for_startup`` discovers and loads the extensions before the session is built (so their
providers are there for model resolution), ``resolve_flags`` is the command line's second pass,
``bind`` attaches the runner to the session, ``start``/``stop`` fire ``session_start`` and
``session_shutdown`` once the mode listens. Nothing here imports ``extensions`` unless some
source is present.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

from pi_coder.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pi_coder.ai.models import Models
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.extensions.context import UIProtocol
    from pi_coder.extensions.events import ExtensionErrorEvent
    from pi_coder.extensions.runner import ExtensionRunner
    from pi_coder.extensions.types import Source, SourceKind
    from pi_coder.modes.options import CliOptions
    from pi_coder.permissions.trust import TrustHandler
    from pi_coder.settings import LoadedSettings

__all__ = [
    "bind",
    "error_line",
    "help_flags",
    "load_failures",
    "load_for_startup",
    "resolve_flags",
    "select_tools",
    "start",
    "stop",
    "trust_handlers",
]


def _has_entry_points() -> bool:
    """Whether some installed distribution declares a ``pi_coder.extensions`` entry point (the scan
    is kept for the loader: ``pi_coder.extensions.entry_points``)."""
    from pi_coder.extensions.entry_points import declared

    return bool(declared(sys.path))


def _specs(data: Mapping[str, object]) -> list[str]:
    value = data.get("extensions")
    return [str(v) for v in value] if isinstance(value, list) else []


def trust_handlers(options: CliOptions, cwd: str, loaded: LoadedSettings) -> list[TrustHandler]:
    """The extensions' ``project_trust`` handlers (docs/permissions.md#deciding-trust), as ``permissions.trust`` handlers.

    Only when a decision is still open (no ``-a``/``-na``, the folder has project resources):
    the pre-trust extensions (``-e``, global, entry points) load in a throw-away runner without
    providers or error reports; the real load after trust imports nothing again.
    """
    if options.trust_flag is not None:
        return []
    from pi_coder.permissions.trust import canonical_path, project_resources

    if not project_resources(canonical_path(cwd)):
        return []
    runner = load_for_startup(options, cwd, loaded, None, project_trusted=False, dry_run=True)
    if runner is None or not runner.has("project_trust"):
        return []
    return [lambda folder, resources: runner.project_trust_vote()]


def would_load(options: CliOptions, cwd: str, loaded: LoadedSettings, *, project_trusted: bool) -> bool:
    """Whether some extension source is present (cheap: no extension module is imported)."""
    from pi_coder.paths import config_dir

    if not options.extensions and options.no_extensions:
        return False
    home = config_dir()
    global_specs, project_specs = _specs(loaded.global_data), _specs(loaded.project_data)
    packaged = not options.no_extensions and (
        bool(loaded.global_data.get("packages")) or (project_trusted and bool(loaded.project_data.get("packages")))
    )
    return bool(
        packaged
        or options.extensions
        or global_specs
        or (project_trusted and (project_specs or (Path(cwd) / ".pi" / "extensions").is_dir()))
        or (home / "extensions").is_dir()
        or (not options.no_extensions and _has_entry_points())
    )


async def attach_late(
    session: AgentSession, spec: str, cwd: str, models: Models, *, project_trusted: bool, mode: str
) -> None:
    """Load the extension ``spec`` into a session that started without any (the ``task`` tool's
    first call, ``pi_coder.subagents.lazy``): a runner is bound and started in ``mode``."""
    from pi_coder.extensions.loader import discover, load_extensions
    from pi_coder.extensions.runner import ExtensionRunner
    from pi_coder.paths import config_dir

    runner = ExtensionRunner(cwd, models=models, project_trusted=project_trusted)
    sources, _problems = discover(
        cli_specs=[spec], cwd=cwd, config_dir=config_dir(), no_extensions=True, project_trusted=project_trusted
    )
    load_extensions(runner, sources)
    bind(runner, session)
    await start(session, mode)


def load_for_startup(
    options: CliOptions,
    cwd: str,
    loaded: LoadedSettings,
    models: Models | None,
    *,
    project_trusted: bool,
    dry_run: bool = False,
) -> ExtensionRunner | None:
    """Discover and load the extensions; None when there is none to load.

    ``project_trusted`` decides whether ``.pi/extensions/`` and project settings count; the
    caller passes the trust decision (today: ``-a/--approve``).
    """
    from pi_coder.paths import config_dir

    home = config_dir()
    if not would_load(options, cwd, loaded, project_trusted=project_trusted):
        return None
    from pi_coder.extensions.loader import discover, load_extensions
    from pi_coder.extensions.runner import ExtensionRunner, FlagToken

    runner = ExtensionRunner(
        cwd,
        models=models,
        project_trusted=project_trusted,
        flag_tokens=[FlagToken(name, value, pos) for name, value, pos in options.flag_tokens],
        messages=options.messages,
    )
    runner.dry_run = dry_run
    from pi_coder.extensions.types import Extension, ExtensionLoadError

    def find() -> list[Source]:
        sources, problems = discover(
            cli_specs=options.extensions,
            cwd=cwd,
            config_dir=home,
            global_specs=_specs(loaded.global_data),  # re-read: /reload refreshes ``loaded`` in place
            project_specs=_specs(loaded.project_data),
            no_extensions=options.no_extensions,
            project_trusted=project_trusted,
            packages=_package_sources(cwd, loaded, project_trusted) if not options.no_extensions else (),
        )
        for spec, problem in problems:
            runner.report(Extension(path=spec, name=spec), "load", ExtensionLoadError(problem))
        from pi_coder.permissions.startup import BUILTIN_SPEC

        # The permission gate goes last: it judges the input other extensions edited (also on /reload).
        sources.sort(key=lambda source: source.identity == BUILTIN_SPEC)
        return sources

    runner.rediscover = find
    load_extensions(runner, find())
    return runner


def _package_sources(cwd: str, loaded: LoadedSettings, project_trusted: bool) -> list[Source]:
    """The installed packages' extensions as loader sources (docs/packages.md)."""
    if not loaded.global_data.get("packages") and not (project_trusted and loaded.project_data.get("packages")):
        return []
    from pi_coder.extensions.types import Source
    from pi_coder.packages.active import active_packages

    sources: list[Source] = []
    for package in active_packages(cwd, loaded.global_data, loaded.project_data, project_trusted=project_trusted):
        for ext in package.extensions:
            identity = f"package:{package.entry.source.identity}:{ext.name}" if ext.kind == "entry_point" else ext.target
            sources.append(
                Source(
                    identity=identity,
                    name=ext.name,
                    kind=cast("SourceKind", ext.kind),
                    target=ext.target,
                    scope="package",
                    sys_paths=tuple(package.sys_paths),
                    package=(package.root, package.entry.source.spec, package.entry.scope),
                )
            )
    return sources


def help_flags(specs: Sequence[str], cwd: str) -> list[tuple[str, str, str]]:
    """``(name, type, description)`` of the flags the ``-e`` extensions register (for ``pi --help``).

    Only the command line's extensions load; a failing one is reported on stderr and skipped.
    """
    from pi_coder.extensions.loader import discover, load_extensions
    from pi_coder.extensions.runner import ExtensionRunner

    runner = ExtensionRunner(cwd)
    runner.error_sink = _stderr_sink
    sources, problems = discover(
        cli_specs=list(specs), cwd=cwd, config_dir=Path(cwd) / ".no-config", no_extensions=True, project_trusted=False
    )
    for spec, problem in problems:
        print(f"pi: {spec}: {problem}", file=sys.stderr)
    load_extensions(runner, sources)
    runner.flush_errors()
    seen: set[str] = set()
    out: list[tuple[str, str, str]] = []
    for ext in runner.extensions:
        for flag in ext.flags:
            if flag.name not in seen:
                seen.add(flag.name)
                out.append((flag.name, flag.type, flag.description))
    return out


def resolve_flags(runner: ExtensionRunner | None, options: CliOptions) -> None:
    """Second pass of the command line: extension flags take their values; others are errors.

    Raises:
        UserError: ``Unknown option: --x`` or ``Option --x needs a value``.
    """
    flags = {f"--{f.name}": f for ext in (runner.extensions if runner else ()) for f in ext.flags}
    consumed: list[int] = []
    for name, value, position in options.flag_tokens:
        flag = flags.get(name)
        if flag is None:
            raise UserError(f"Unknown option: {name}. Run pi --help for the options.")
        if flag.type == "str" and value is None:
            if position >= len(options.messages) or position in consumed:
                raise UserError(f"Option {name} needs a value")
            consumed.append(position)
    for position in sorted(consumed, reverse=True):
        del options.messages[position]


def bind(runner: ExtensionRunner | None, session: AgentSession) -> None:
    if runner is not None:
        runner.bind(session)


def tool_names(runner: ExtensionRunner | None, *, default_active: bool = False) -> list[str]:
    """The tools the loaded extensions registered (the start-up plan's ``--tools`` also matches them)."""
    return [] if runner is None else runner.registered_tool_names(default_active=default_active)


def select_tools(runner: ExtensionRunner | None, options: CliOptions, names: Sequence[str]) -> None:
    """Activate exactly the plan's ``names`` (built-in and extension tools, docs/extensions-runtime.md#tools) once extension
    tools are registered; without tool options the extensions' tools simply join the built-ins."""
    if runner is None:
        return
    if options.tools is None and not (options.exclude_tools or options.no_tools or options.no_builtin_tools):
        return
    runner.select_tools(list(names))


def _short_name(path: str) -> str:
    if path.startswith("builtin:"):
        return path[len("builtin:") :]
    return Path(path).stem if "/" in path or path.endswith(".py") else path


def error_line(record: ExtensionErrorEvent) -> str:
    """``Extension <name> failed in <event>: <error>`` (the TUI warning and the print-mode line)."""
    return f"Extension {_short_name(record.extension_path)} failed in {record.event}: {record.error}"


def _stderr_sink(record: ExtensionErrorEvent) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"pi: {error_line(record)}", file=sys.stderr, flush=True)


def load_failures(session: AgentSession) -> list[str]:
    """Print and json mode: one ``Error: Failed to load extension ...`` line per extension that did
    not load (Pi's wording; the run then exits 1)."""
    runner = cast("ExtensionRunner | None", session.extensions)
    if runner is None:
        return []
    return [
        f'Error: Failed to load extension "{record.extension_path}": {record.error}' for record in runner.load_errors()
    ]


async def start(session: AgentSession, mode: str, ui: UIProtocol | None = None) -> None:
    """Once the mode listens: report load errors, then ``session_start("startup")``."""
    runner = cast("ExtensionRunner | None", session.extensions)  # the runner load_for_startup bound
    if runner is None:
        return
    if ui is not None:
        runner.set_ui(ui, mode)
    else:
        runner.mode = mode
    # Extension error records go to the session listeners too (json and rpc write them).
    runner.error_sink = _stderr_sink if mode == "print" else session.emit_nowait
    runner.flush_errors()
    if runner.has("session_start"):
        from pi_coder.extensions.events import SessionStartEvent

        await runner.notify("session_start", SessionStartEvent(reason="startup"))
    await runner.discover_resources("startup")


async def stop(session: AgentSession) -> None:
    """``session_shutdown("quit")`` (3 s per handler)."""
    if session.extensions is not None:
        if not (session.agent.signal is not None and session.agent.signal.aborted):
            await session.extensions.settle()
        await session.extensions.shutdown("quit")
