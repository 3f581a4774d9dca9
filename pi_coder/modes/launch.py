"""From parsed options to a finished run: export, list models, or start a session in a mode.

``run_guarded`` is the only place that turns exceptions into exit codes: a ``UserError``
becomes one line on stderr and exit 1; anything unexpected becomes a short message naming a
log file that holds the traceback (``pi_coder.paths.logs_dir()``). The interactive TUI lives in
a sibling layer, so the CLI passes a callable that starts it.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pi_coder.errors import UserError

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.modes.options import CliOptions, RunMode
    from pi_coder.modes.setup import Startup
    from pi_coder.permissions.trust import TrustChoice

__all__ = ["InteractiveRunner", "run", "run_guarded", "write_crash_log"]

class InteractiveRunner(Protocol):
    """The TUI's ``run_tui`` as the CLI passes it in: runs the TUI, returns the exit code."""

    def __call__(
        self, session: AgentSession, initial_messages: list[str], notices: list[str], **options: object
    ) -> int: ...


TrustAsker = Callable[[Path, list[str]], "TrustChoice | None"]
"""``ask(folder, resources) -> TrustChoice | None``: the TUI's trust dialog (see ``setup.TrustAsker``)."""


def _say(text: str) -> None:
    print(f"pi: {text}", file=sys.stderr)


def write_crash_log(exc: BaseException) -> Path | None:
    """Write ``exc``'s traceback to a new file in the logs folder; None if that fails.

    The command line is not recorded (it may hold an ``--api-key``).
    """
    import time
    import traceback

    from pi_coder.paths import ensure_private_dir, logs_dir

    try:
        folder = ensure_private_dir(logs_dir())
        path = folder / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
        from pi_coder import __version__
        from pi_coder.ai.secrets import redact

        text = redact(
            f"pi_coder {__version__}, Python {sys.version.split()[0]}\n\n" + "".join(traceback.format_exception(exc))
        )
        path.write_text(text, encoding="utf-8")
        return path
    except Exception:
        return None


def run_guarded(
    options: CliOptions, *, run_interactive: InteractiveRunner, ask_trust: TrustAsker | None = None
) -> int:
    """``run`` with every failure turned into a message and an exit code (never a traceback)."""
    from pi_coder.modes.options import StartupExit
    from pi_coder.modes.stop_signals import install_backstop

    install_backstop()
    try:
        return run(options, run_interactive=run_interactive, ask_trust=ask_trust)
    except StartupExit as exc:
        if exc.message:
            print(exc.message, file=sys.stderr)
        return exc.code
    except UserError as exc:
        _say(str(exc))
        return 1
    except KeyboardInterrupt:
        print("Aborted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 1
    except Exception as exc:
        path = write_crash_log(exc)
        where = f" The traceback is in {path}" if path is not None else ""
        _say(f"internal error: {type(exc).__name__}: {exc}.{where}")
        return 1


def _quiet_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush stays silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run(options: CliOptions, *, run_interactive: InteractiveRunner, ask_trust: TrustAsker | None = None) -> int:
    """Do what ``options`` asks; returns the exit code. Raises ``UserError`` for user mistakes.

    ``ask_trust`` shows the TUI's trust dialog for an undecided project folder (interactive only).
    """
    cwd = os.getcwd()
    if options.flag_tokens and (options.export is not None or options.list_models is not None):
        from pi_coder.modes.extension_host import resolve_flags

        resolve_flags(None, options)
    if options.export is not None:
        return _export(options, cwd)
    if options.list_models is not None:
        return _list_models(options)

    from pi_coder.modes.setup import read_piped_stdin

    stdin_text: str | None = None
    piped = False
    if options.mode != "rpc":
        piped = sys.stdin is not None and not sys.stdin.closed and not sys.stdin.isatty()
        if piped:
            stdin_text = read_piped_stdin()
    mode = options.run_mode(stdin_piped=piped, stdout_terminal=_stdout_is_terminal())
    if mode == "rpc" and options.file_args:
        raise UserError("@file arguments are not supported in --mode rpc")
    startup = _prepare_without_gc(options, mode, cwd, stdin_text, ask_trust)
    if options.undo:
        from pi_coder.modes.checkpoint_cli import run_undo

        return run_undo(startup.session, force=options.force)
    if mode == "interactive":
        notices = list(startup.notices)
        trust = startup.trust
        if trust is not None and not trust.trusted and trust.source != "flag":
            notices.append(
                "This project folder is not trusted: its .pi settings, SYSTEM.md, templates, themes, skills, "
                "extensions and MCP servers (.pi/mcp.json, .mcp.json) were not used (/trust to change)."
            )
        settings = startup.session.settings
        try:
            return run_interactive(
                startup.session,
                startup.prompts,
                notices,
                resume=options.resume,
                **({"startup_news": startup.news} if startup.news else {}),
                hide_thinking=bool(getattr(settings, "hide_thinking_block", False)),
                **({"initial_images": startup.images} if startup.images else {}),
            )
        finally:
            gc.enable()  # paused for the TUI's start (_prepare_without_gc), whatever happened there
    if startup.trust is not None and startup.trust.source == "undecided":
        from pi_coder.permissions.trust import untrusted_notice

        print(untrusted_notice(cwd), file=sys.stderr)
    for line in startup.news:
        print(line, file=sys.stderr)
    for notice in startup.notices:
        print(f"Warning: {notice}", file=sys.stderr)
    if mode == "rpc":
        from pi_coder.modes.rpc_mode import run_rpc_mode

        return run_rpc_mode(startup.session)
    if not startup.prompts and _last_role(startup.session) != "assistant":
        raise UserError('Nothing to do: give a message, an @file, or pipe text into stdin (pi -p "...")')
    from pi_coder.modes.print_mode import run_print_mode

    return run_print_mode(startup, output="json" if mode == "json" else "text")


def _prepare_without_gc(
    options: CliOptions, mode: RunMode, cwd: str, stdin_text: str | None, ask_trust: TrustAsker | None
) -> Startup:
    """``prepare`` with the cyclic GC paused: start-up builds many objects that all stay (modules,
    classes, models), and full collections over them cost several ms of every ``pi -p``. What it
    built is then frozen out of later collections, and the GC runs again, except for the TUI:
    it stays paused until the TUI is up (``PiApp._after_startup`` collects, freezes and turns it
    on), since importing Textual and drawing the first frame build more objects that stay."""
    from pi_coder.modes.setup import prepare

    gc.disable()
    started = False
    try:
        startup = prepare(options, mode=mode, cwd=cwd, stdin_text=stdin_text, ask_trust=ask_trust)
        started = True
        return startup
    finally:
        gc.freeze()
        if mode != "interactive" or not started or options.undo:
            gc.enable()


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout is not None and sys.stdout.isatty()
    except (OSError, ValueError):
        return False


def _last_role(session: AgentSession) -> str | None:
    messages = session.messages
    return messages[-1].role if messages else None


def _export(options: CliOptions, cwd: str) -> int:
    from pi_coder.export.html import default_export_path, export_session_html

    source = Path(os.path.expanduser(options.export or ""))
    output = Path(os.path.expanduser(options.messages[0])) if options.messages else None
    if source.is_dir():
        raise UserError(f"--export takes a session file (.jsonl); {source} is a folder")
    if not source.is_file():
        raise UserError(f"Session file not found: {source}")
    if output is not None and output.is_dir():
        output = default_export_path(source, output)
    try:
        path = export_session_html(source, output, cwd=cwd)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise UserError(f"Cannot export {source}: {exc.strerror or exc}{where}") from None
    print(f"Exported to: {path}")
    return 0


def _list_models(options: CliOptions) -> int:
    from pi_coder.ai.models import create_models
    from pi_coder.modes.list_models import list_models_text

    search = options.list_models if isinstance(options.list_models, str) else None
    print(list_models_text(create_models(), search))
    return 0
