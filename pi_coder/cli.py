"""The ``pi`` command: argument parsing, help, and dispatch to a mode.

Start-up speed decides the shape of this module. Only the standard library is imported at
module level. ``pi --version`` reads the version from the installed distribution's folder
name without importing ``importlib.metadata``. The options are declared once, as the fields
of ``modes.options.CliOptions`` (flags and help in each field's metadata); a small parser here
reads them with Pi's exact rules (``@file`` positionals, the optional value
of ``--list-models``, ``--export``'s second path taken from the messages), and ``--help``
builds a Typer command from the same table, so Typer is imported only to print help. The
chosen mode (print, JSON, RPC, or the TUI) is imported after parsing.
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs `pi --version` ~10 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from pi_coder.modes.options import CliOptions

__all__ = ["UsageError", "main", "parse_args"]


class _Option:
    """One option of the parser and of ``--help``. ``kind`` is ``flag``, ``value``, or ``optional``
    (a value only when the next word is not a flag or @file). A plain class: dataclasses would
    import inspect (~10 ms)."""

    __slots__ = ("dest", "flags", "help", "kind", "metavar", "panel", "repeatable")

    def __init__(
        self,
        dest: str,
        flags: tuple[str, ...],
        kind: str,
        help: str,
        panel: str,
        metavar: str | None = None,
        repeatable: bool = False,
    ) -> None:
        self.dest = dest
        self.flags = flags
        self.kind = kind
        self.help = help
        self.panel = panel
        self.metavar = metavar
        self.repeatable = repeatable


_PERMISSION_MODES = ("auto", "ask", "accept-edits", "plan", "deny")
_SANDBOX_MODES = ("off", "workspace-write", "read-only")

_table: tuple[tuple[_Option, ...], dict[str, _Option]] | None = None


def _options() -> tuple[tuple[_Option, ...], dict[str, _Option]]:
    """The options (in ``--help`` order) and the option of each flag, read once from the fields of
    ``CliOptions`` (where each option is declared, see ``core/startup_options.py``)."""
    global _table
    if _table is None:
        from dataclasses import fields

        from pi_coder.core.startup_options import PANELS, CliFlag
        from pi_coder.modes.options import CliOptions

        found: list[tuple[int, int, _Option]] = []
        for item in fields(CliOptions):
            spec = item.metadata.get("cli")
            if isinstance(spec, CliFlag):
                option = _Option(item.name, spec.flags, spec.kind, spec.help, spec.panel, spec.metavar, spec.repeatable)
                found.append((PANELS.index(spec.panel), len(found), option))
        options = tuple(option for _, _, option in sorted(found, key=lambda row: row[:2]))
        _table = (options, {name: option for option in options for name in option.flags})
    return _table


def __getattr__(name: str) -> object:
    # ``_OPTIONS`` and ``_BY_FLAG`` are built on first use: ``pi --version`` never needs them.
    if name == "_OPTIONS":
        return _options()[0]
    if name == "_BY_FLAG":
        return _options()[1]
    raise AttributeError(f"module 'pi_coder.cli' has no attribute {name!r}")


_EPILOG = """\
\b
Examples:
  pi                                       interactive session
  pi "List the Python files in src/"       interactive, with a first prompt
  pi -p "Summarise README.md"              print the answer and exit
  git diff | pi -p "Review this change"    piped text joins the prompt
  pi @notes.md @screenshot.png "What is wrong here?"
  pi -c "What did we decide?"              continue the last session here
  pi --model anthropic/claude-sonnet-4-5:high
  pi --tools read,grep,find,ls -p "Review src/"     read-only tools
  pi --mode json -p "hi" | jq .type
  pi --export session.jsonl out.html
  pi -c --undo                             undo the last prompt's file changes here
  pi checkpoints gc                        prune old file snapshots
  pi install ./my-pi-package               install a package (PyPI name, git URL or path; -l: project)
  pi list / pi update [name] / pi remove <name>

Configuration: set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY,
GROQ_API_KEY, ...), or describe providers (local servers included) in models.toml in the
configuration folder. PI_CODER_HOME moves all configuration and sessions to one folder.
"""


class UsageError(Exception):
    """A command-line mistake (unknown option, missing value); printed as one line."""


def _fast_version() -> str:
    """The installed version, read from the ``pi_coder-<version>.dist-info`` folder name.

    ``importlib.metadata`` costs ~40 ms to import, most of ``pi --version``'s budget.
    """
    prefix, suffix = "pi_coder-", ".dist-info"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and name.endswith(suffix):
                return name[len(prefix) : -len(suffix)]
    from pi_coder import __version__

    return __version__


def parse_args(argv: list[str], *, allow_unknown: bool = False) -> CliOptions:
    """Parse ``pi``'s arguments with Pi's rules.

    ``@path`` words are file arguments, other words are messages; ``--`` ends the options (later
    words are messages, even ones starting with ``-`` or ``@``). ``--name=value`` works for
    options that take a value. ``--list-models`` takes the next word as its search text unless
    that word starts with ``-`` or ``@``.

    Args:
        argv: The arguments after the program name.
        allow_unknown: Record unknown ``--long[=value]`` options in ``flag_tokens`` (extension
            flags, resolved after the extensions are loaded) instead of failing.

    Returns:
        The options; ``warnings`` holds non-fatal problems (unknown tools, invalid thinking level).

    Raises:
        UsageError: An unknown option, a missing value, an invalid ``--mode``, or both ``-a``
            and ``-na``.
    """
    from pi_coder.modes.options import MODES, THINKING_LEVELS, VALID_TOOLS, CliOptions

    opts = CliOptions()
    by_flag = _options()[1]
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            opts.messages.extend(argv[i:])
            break
        if arg.startswith("@"):
            opts.file_args.append(arg[1:])
            continue
        if not arg.startswith("-") or arg == "-":
            if arg == "-":
                raise UsageError('Unknown option: "-"')
            opts.messages.append(arg)
            continue
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        option = by_flag.get(name)
        if option is None and allow_unknown and name.startswith("--") and len(name) > 2:
            opts.flag_tokens.append((name, inline if eq else None, len(opts.messages)))
            continue
        if option is None:
            raise UsageError(f"Unknown option: {name}. Run pi --help for the options.")
        if option.kind == "flag":
            if eq:
                raise UsageError(f"Option {name} does not take a value")
            setattr(opts, option.dest, True)
            continue
        if option.kind == "optional":
            if eq:
                value: str | bool = inline
            elif i < len(argv) and not argv[i].startswith(("-", "@")):
                value = argv[i]
                i += 1
            else:
                value = True
            setattr(opts, option.dest, value)
            continue
        if eq:
            text = inline
        elif i < len(argv):
            text = argv[i]
            i += 1
        else:
            raise UsageError(f"Option {name} needs a value ({option.metavar})")
        _store_value(opts, option, text, MODES, THINKING_LEVELS, VALID_TOOLS)
    if opts.approve and opts.no_approve:
        raise UsageError("-a/--approve and -na/--no-approve cannot be used together; pick one")
    _check_session_options(opts)
    return opts


def _check_session_options(opts: CliOptions) -> None:
    """Pi's rules for ``--fork`` and ``--session-id`` (same messages)."""
    others = (("--session", opts.session), ("--continue", opts.continue_session), ("--resume", opts.resume))
    if opts.fork is not None:
        for flag, value in (*others, ("--no-session", opts.no_session)):
            if value:
                raise UsageError(f"--fork cannot be combined with {flag}")
    if opts.session_id is not None:
        for flag, value in others:
            if value:
                raise UsageError(f"--session-id cannot be combined with {flag}")
        import re

        if not re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?", opts.session_id):
            raise UsageError(
                "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', "
                "and start and end with an alphanumeric character"
            )


def _store_value(
    opts: CliOptions,
    option: _Option,
    text: str,
    modes: tuple[str, ...],
    levels: tuple[str, ...],
    tools: tuple[str, ...],
) -> None:
    if option.dest == "mode":
        if text not in modes:
            raise UsageError(f'Invalid mode "{text}". Valid modes: {", ".join(modes)}')
        opts.mode = text
    elif option.dest == "thinking":
        if text in levels:
            opts.thinking = text
        else:
            raise UsageError(f'Invalid thinking level "{text}". Valid values: {", ".join(levels)}')
    elif option.dest == "models":
        opts.models = [part.strip() for part in text.split(",") if part.strip()]
    elif option.repeatable:
        getattr(opts, option.dest).append(text)
    elif option.dest == "exclude_tools":
        opts.exclude_tools = [part.strip() for part in text.split(",") if part.strip()]
    elif option.dest == "tui_mode":
        if text != "fullscreen":
            raise UsageError(
                f'Invalid --tui-mode "{text}": pi_coder\'s TUI is full-screen only (use fullscreen or leave it out)'
            )
        opts.tui_mode = text
    elif option.dest in ("max_turns", "max_budget_usd"):
        try:
            number = int(text) if option.dest == "max_turns" else float(text)
        except ValueError:
            number = -1
        if not number > 0:
            kind = "a whole number" if option.dest == "max_turns" else "an amount in USD"
            raise UsageError(f'Invalid {option.flags[0]} "{text}": give {kind} above 0')
        setattr(opts, option.dest, number)
    elif option.dest in ("permission_mode", "sandbox"):
        valid_values = _PERMISSION_MODES if option.dest == "permission_mode" else _SANDBOX_MODES
        if text not in valid_values:
            raise UsageError(f'Invalid {option.flags[0]} "{text}". Valid values: {", ".join(valid_values)}')
        setattr(opts, option.dest, text)
    elif option.dest == "tools":
        valid: list[str] = []
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            # Names (an extension's too), patterns and +name/-name are checked by the start-up
            # plan once extensions have loaded; MCP tools are known only once servers connect.
            if part not in valid:
                valid.append(part)
        opts.tools = valid
    else:
        setattr(opts, option.dest, text)


def _help_command(extra: Sequence[_Option] = ()) -> Any:
    """A Typer command whose parameters are ``_OPTIONS`` (used only to render ``--help``)."""
    import inspect

    import typer

    params = [
        inspect.Parameter(
            "messages",
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=typer.Argument(None, metavar="@FILES... MESSAGES", show_default=False, hidden=True),
            annotation=list[str] | None,
        )
    ]
    for option in (*_options()[0], *extra):
        if option.dest == "help":
            continue  # Click adds -h/--help itself (context_settings)
        is_flag = option.kind == "flag"
        params.append(
            inspect.Parameter(
                option.dest,
                inspect.Parameter.KEYWORD_ONLY,
                default=typer.Option(
                    False if is_flag else None,
                    *option.flags,
                    help=option.help,
                    metavar=option.metavar,
                    rich_help_panel=option.panel,
                    show_default=False,
                ),
                annotation=bool if is_flag else str | None,
            )
        )

    def pi(**_: Any) -> None:
        """Pi, a coding agent for the terminal: reads, edits and runs code with a language model.

        @FILES are files whose text (or images) join the first message. Several messages run as
        consecutive prompts. Text piped into stdin joins the first prompt and implies -p.
        """

    pi.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    pi.__annotations__ = {p.name: p.annotation for p in params}
    return pi


def _cli_extension_specs(head: Sequence[str]) -> list[str]:
    """The ``-e/--extension`` values of the command line (for ``--help``)."""
    specs = []
    for index, arg in enumerate(head):
        if arg in ("-e", "--extension") and index + 1 < len(head):
            specs.append(head[index + 1])
        elif arg.startswith("--extension="):
            specs.append(arg.split("=", 1)[1])
    return specs


def _extension_help_options(specs: Sequence[str]) -> list[_Option]:
    """The flags the ``-e`` extensions register, as an "Extension options" help group."""
    from pi_coder.modes.extension_host import help_flags

    out = []
    for index, (name, kind, description) in enumerate(help_flags(specs, os.getcwd())):
        metavar = None if kind == "bool" else "VALUE"
        kind_ = "flag" if kind == "bool" else "value"
        out.append(_Option(f"ext_flag_{index}", (f"--{name}",), kind_, description or "(extension flag)", "", metavar))
    return out


def _print_help(extension_specs: Sequence[str] = ()) -> None:
    import typer
    import typer.main

    app = typer.Typer(
        add_completion=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )
    extra = _extension_help_options(extension_specs) if extension_specs else []
    app.command(epilog=_EPILOG)(_help_command(extra))
    command = typer.main.get_command(app)
    if extra:
        _add_extension_section(command, {option.dest for option in extra})
    command.main(args=["--help"], prog_name="pi", standalone_mode=False)


def _add_extension_section(command: Any, names: set[str]) -> None:
    """List the extension flags in their own "Extension options" section, after "Options"."""
    original = command.format_options

    def format_options(ctx: Any, formatter: Any) -> None:
        own = [param for param in command.params if param.name in names]
        for param in own:
            param.hidden = True
        original(ctx, formatter)
        for param in own:
            param.hidden = False
        rows = [row for param in own if (row := param.get_help_record(ctx)) is not None]
        with formatter.section("Extension options"):
            formatter.write_dl(rows)

    command.format_options = format_options


def _say(line: str) -> None:
    print(f"pi: {line}", file=sys.stderr)


def _reopen_closed_std_streams() -> None:
    """Point a closed stdin/stdout/stderr (``pi -p x >&-``) at /dev/null.

    Python leaves ``sys.stdout`` None then, and the modes would crash on it; worse, the first
    file opened later would take the free descriptor 1 or 2 and receive what is printed.
    """
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        setattr(sys, name, open(fd, "r" if fd == 0 else "w", encoding="utf-8", errors="replace", closefd=False))  # noqa: SIM115


def main(argv: list[str] | None = None) -> int:
    """Run ``pi``; returns the exit code (the console script passes it to ``sys.exit``)."""
    if sys.stdin is None or sys.stdout is None or sys.stderr is None:
        _reopen_closed_std_streams()
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["sandbox"]:
        from pi_coder.permissions.sandbox import sandbox_main

        return sandbox_main(args[1:])
    if args and args[0] == "mcp":
        from pi_coder.modes.mcp_command import run_mcp_command

        return run_mcp_command(args[1:])
    head = args[: args.index("--")] if "--" in args else args
    if "-v" in head or "--version" in head:
        print(_fast_version())
        return 0
    if args[:1] == ["config"]:  # the package resources' toggles (a Textual app)
        from pi_coder.tui.package_config import run_config

        return run_config(local="-l" in args[1:] or "--local" in args[1:])
    if args[:1] in (["install"], ["remove"], ["uninstall"], ["list"]) or (
        args[:1] == ["update"] and "--models" not in args
    ):  # the package commands (docs/packages.md)
        from pi_coder.modes.package_cli import run_package_command

        return run_package_command(args)
    if args and args[0] in ("auth", "update"):  # pi auth login|logout|check, pi update --models
        from pi_coder.modes.subcommands import run_subcommand

        return run_subcommand(args)
    if "-h" in head or "--help" in head:
        _print_help(_cli_extension_specs(head))
        return 0
    if head[:1] == ["checkpoints"]:
        from pi_coder.modes.checkpoint_cli import run_checkpoints_command

        return run_checkpoints_command(head[1:])
    if argv is None:
        from pi_coder._proctitle import argv_has_secret, hide_command_line

        if argv_has_secret(args):
            hide_command_line()  # `ps` and /proc/PID/cmdline show "pi", never the key
    # The cyclic GC is paused while pi starts: the imports and the session build objects that all
    # stay, and collections over them cost a tenth of the TUI's first frame. ``launch.run`` turns
    # it back on once the run starts (the TUI: once it is up, ``PiApp._after_startup``).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if gc_was_enabled:
            gc.enable()


def _run(args: list[str]) -> int:
    try:
        from pi_coder._dataclass_cache import install

        install()  # before the modules that define dataclasses are imported
    except Exception:  # a cache that cannot be read or placed: classes are compiled as usual
        pass
    try:
        opts = parse_args(args, allow_unknown=True)
    except UsageError as exc:
        _say(str(exc))
        return 1
    # httpx's __init__ imports its command-line client (click + rich, ~60 ms) whenever those are
    # installed, and falls back to a stub on ImportError; pi never uses that client.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    _skip_pydantic_plugin_scan()
    from pi_coder.modes.launch import run_guarded

    return run_guarded(opts, run_interactive=_run_interactive, ask_trust=_ask_trust)


def _skip_pydantic_plugin_scan() -> None:
    """Start pydantic's plugin cache empty, as ``PYDANTIC_DISABLE_PLUGINS`` would, for this process only.

    On the first model validation pydantic reads the entry points of every installed distribution
    to find its plugins: a tenth of the TUI's start-up, and pi's models use no plugins. The
    environment variable itself would reach every command the agent runs, so the cache is set.
    """
    # The loader module imports ``importlib.metadata`` (34 modules, ~15 ms) for that scan alone: it
    # is imported with a stand-in for it, whose ``entry_points`` imports the real one if called.
    stand_in = None
    if "importlib.metadata" not in sys.modules:
        import types

        stand_in = types.ModuleType("importlib.metadata")
        stand_in.entry_points = _real_entry_points  # type: ignore[attr-defined]
        sys.modules["importlib.metadata"] = stand_in
    try:
        from pydantic.plugin import _loader
    except Exception:  # a pydantic without this module (or needing more of the stand-in): no skip
        return
    finally:
        if stand_in is not None and sys.modules.get("importlib.metadata") is stand_in:
            del sys.modules["importlib.metadata"]
    if getattr(_loader, "_plugins", False) is None:
        _loader._plugins = {}


def _real_entry_points(**params: Any) -> Any:
    from importlib.metadata import entry_points

    return entry_points(**params)


def _run_interactive(session: Any, initial_messages: list[str], notices: list[str], **options: Any) -> int:
    from pi_coder.tui import run_tui

    return run_tui(session, initial_messages=initial_messages, startup_notices=notices, **options)


def _ask_trust(folder: Any, resources: list[str]) -> Any:
    from pi_coder.tui.trust_dialog import ask_project_trust

    return ask_project_trust(folder, resources)


if __name__ == "__main__":
    sys.exit(main())
