"""What the ``pi`` command line asked for, as plain data (parsed by ``pi_coder.cli``).

The modes and the start-up code read this; nothing here parses or does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from pi_coder.ai.types import ThinkingLevel
from pi_coder.core.startup_options import StartupOptions, flag
from pi_coder.tools import ALL_TOOL_NAMES

__all__ = ["MODES", "THINKING_LEVELS", "VALID_TOOLS", "CliOptions", "RunMode", "StartupExit"]

MODES = ("text", "json", "rpc")
"""Values of ``--mode``."""

THINKING_LEVELS: tuple[str, ...] = get_args(ThinkingLevel)
"""Values of ``--thinking`` (and of a ``--model`` ``:thinking`` suffix); ``max`` is clamped per model."""

VALID_TOOLS: tuple[str, ...] = ALL_TOOL_NAMES
"""Built-in tool names accepted by ``--tools``."""

RunMode = Literal["interactive", "text", "json", "rpc"]


class StartupExit(Exception):
    """Stop before running anything, with ``code`` and an optional message (e.g. a declined fork)."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(slots=True, kw_only=True)
class CliOptions(StartupOptions):
    """The parsed command line. ``None`` means "not given" for every optional value.

    The choices the start-up plan reads are declared in the base class, :class:`StartupOptions`.
    Each option's flags and help live in its field's metadata (``core.startup_options.flag``):
    ``pi_coder.cli`` builds its parser and ``--help`` from these fields."""

    print: bool = field(
        default=False,
        metadata=flag(
            "-p", "--print", help="Non-interactive: run the prompts, print the final answer, exit.", panel="Mode"
        ),
    )
    mode: str | None = field(
        default=None,
        metadata=flag(
            "--mode",
            help="text (plain output; on a terminal the TUI still opens, -p runs once), json (one JSON event "
            "per line) or rpc (JSON commands on stdin).",
            panel="Mode",
            metavar="MODE",
        ),
    )
    """``text``, ``json`` or ``rpc`` (validated by the parser)."""
    tui_mode: str | None = field(
        default=None,
        metadata=flag(
            "--tui-mode",
            help="TUI mode: fullscreen (the only one; Pi's regular scrollback mode is not supported).",
            panel="Mode",
            metavar="MODE",
        ),
    )
    """``--tui-mode``: only ``fullscreen`` (pi_coder's TUI has no regular-scrollback mode)."""
    provider: str | None = field(
        default=None,
        metadata=flag("--provider", help="Look up --model in this provider only.", panel="Model", metavar="NAME"),
    )
    model: str | None = field(
        default=None,
        metadata=flag(
            "--model",
            help="Model: provider/id, an id, or part of an id or name; :level sets thinking (sonnet:high).",
            panel="Model",
            metavar="PATTERN",
        ),
    )
    models: list[str] | None = field(
        default=None,
        metadata=flag(
            "--models",
            help="Comma-separated model patterns cycled with Ctrl+P; globs allowed (anthropic/*, *sonnet*:high).",
            panel="Model",
            metavar="PATTERNS",
        ),
    )
    """``--models`` patterns, split on commas."""
    api_key: str | None = field(
        default=None,
        metadata=flag(
            "--api-key", help="API key for the chosen model's provider (not saved).", panel="Model", metavar="KEY"
        ),
    )
    continue_session: bool = field(
        default=False,
        metadata=flag("-c", "--continue", help="Continue the most recent session in this folder.", panel="Session"),
    )
    resume: bool = field(default=False, metadata=flag("-r", "--resume", help="Pick a session to resume.", panel="Session"))
    undo: bool = field(
        default=False,
        metadata=flag(
            "--undo",
            help="With -c/--session: restore the files the last prompt changed, step the session back, exit.",
            panel="Session",
        ),
    )
    """``--undo``: restore the last prompt's file changes and exit."""
    force: bool = field(
        default=False,
        metadata=flag("--force", help="With --undo: overwrite files changed by hand since.", panel="Session"),
    )
    """``--force``: with ``--undo``, overwrite files changed by hand."""
    session: str | None = field(
        default=None,
        metadata=flag(
            "--session",
            help="Use this session file, or the session whose id starts with this.",
            panel="Session",
            metavar="PATH|ID",
        ),
    )
    session_id: str | None = field(
        default=None,
        metadata=flag(
            "--session-id",
            help="Use this folder's session with the id, creating it otherwise (letters, digits, . _ -).",
            panel="Session",
            metavar="ID",
        ),
    )
    """``--session-id``: open this folder's session with the id, or start one with it."""
    fork: str | None = field(
        default=None,
        metadata=flag(
            "--fork",
            help="Fork a session (file path or full/partial id) into a new session in this folder.",
            panel="Session",
            metavar="PATH|ID",
        ),
    )
    """``--fork``: copy this session (path or id) into a new session here."""
    session_dir: str | None = field(
        default=None, metadata=flag("--session-dir", help="Folder for session files.", panel="Session", metavar="DIR")
    )
    no_session: bool = field(
        default=False, metadata=flag("--no-session", help="Do not save the session.", panel="Session")
    )
    offline: bool = field(
        default=False,
        metadata=flag(
            "--offline", help="Accepted for Pi compatibility; pi makes no network call at start anyway.", panel="Other"
        ),
    )
    """``--offline``: accepted; pi makes no network call at start."""
    approve: bool = field(
        default=False,
        metadata=flag(
            "-a",
            "--approve",
            help="Trust this project folder for this run: apply its .pi settings, SYSTEM.md, templates, themes.",
            panel="Project trust",
        ),
    )
    """``-a``: trust the project folder for this run (nothing saved)."""
    no_approve: bool = field(
        default=False,
        metadata=flag(
            "-na",
            "--no-approve",
            help="Do not trust this project folder for this run (nothing is asked or saved).",
            panel="Project trust",
        ),
    )
    """``-na``: do not trust the project folder for this run (nothing saved)."""
    extensions: list[str] = field(
        default_factory=list,
        metadata=flag(
            "-e",
            "--extension",
            help="Load an extension: a .py file, a package folder, a dotted module or builtin:<name> (repeatable).",
            panel="Extensions",
            metavar="SPEC",
            repeatable=True,
        ),
    )
    """``-e/--extension`` specs, in order."""
    no_extensions: bool = field(
        default=False,
        metadata=flag("-ne", "--no-extensions", help="Load only the -e extensions.", panel="Extensions"),
    )
    no_mcp: bool = field(
        default=False,
        metadata=flag("--no-mcp", help="Connect no MCP server (mcp.json); see pi mcp --help.", panel="Extensions"),
    )
    """``--no-mcp``: no MCP server connects, no MCP tools."""
    skills: list[str] = field(
        default_factory=list,
        metadata=flag(
            "--skill",
            help="Load a skill folder, SKILL.md or folder of skills (repeatable; wins over other locations).",
            panel="Extensions",
            metavar="PATH",
            repeatable=True,
        ),
    )
    """``--skill`` paths, in order."""
    no_skills: bool = field(
        default=False, metadata=flag("-ns", "--no-skills", help="Load only the --skill skills.", panel="Extensions")
    )
    no_hooks: bool = field(
        default=False,
        metadata=flag(
            "--no-hooks", help="Run no hook (Claude Code hooks and [hooks] in settings).", panel="Extensions"
        ),
    )
    """``--no-hooks``: no hook runs (``pi_coder.hooks``)."""
    no_subagents: bool = field(
        default=False,
        metadata=flag("--no-subagents", help="Leave out the task tool (no subagents).", panel="Extensions"),
    )
    """``--no-subagents``: no ``task`` tool."""
    permission_mode: str | None = field(
        default=None,
        metadata=flag(
            "--permission-mode",
            help="Permission mode: auto (default), ask, accept-edits, plan, deny.",
            panel="Safety",
            metavar="MODE",
        ),
    )
    """``--permission-mode``: auto, ask, accept-edits, plan, deny (overrides ``permissions.mode``)."""
    sandbox: str | None = field(
        default=None,
        metadata=flag(
            "--sandbox",
            help="Run bash and ! commands under bubblewrap: off, workspace-write, read-only.",
            panel="Safety",
            metavar="MODE",
        ),
    )
    """``--sandbox``: off, workspace-write, read-only (overrides ``sandbox.mode``)."""
    max_turns: int | None = field(
        default=None,
        metadata=flag(
            "--max-turns",
            help="Stop the run (parent and subagents together) after N model turns; print mode exits 1.",
            panel="Safety",
            metavar="N",
        ),
    )
    """``--max-turns``: the run's turn limit (parent and subagents together)."""
    max_budget_usd: float | None = field(
        default=None,
        metadata=flag(
            "--max-budget-usd",
            help="Stop the run (parent and subagents together) once it has spent this many USD; print mode exits 1.",
            panel="Safety",
            metavar="USD",
        ),
    )
    """``--max-budget-usd``: the run's spending limit in USD (parent and subagents together)."""
    list_models: str | bool | None = field(
        default=None,
        metadata=flag(
            "--list-models",
            help="List the models that have a key, optionally filtered, and exit.",
            panel="Other",
            metavar="[SEARCH]",
            kind="optional",
        ),
    )
    """``True`` for ``--list-models`` alone, the search text when one follows."""
    export: str | None = field(
        default=None,
        metadata=flag(
            "--export",
            help="Write a session file as HTML and exit; the next argument may name the output file.",
            panel="Other",
            metavar="SESSION",
        ),
    )
    version: bool = field(
        default=False, metadata=flag("-v", "--version", help="Print the version and exit.", panel="Other")
    )
    help: bool = field(default=False, metadata=flag("-h", "--help", help="Show this help and exit.", panel="Other"))
    file_args: list[str] = field(default_factory=list)
    """``@path`` arguments without the ``@``."""
    messages: list[str] = field(default_factory=list)
    """Positional messages, in order."""
    warnings: list[str] = field(default_factory=list)
    """Non-fatal problems found while parsing (unknown tool, invalid thinking level)."""
    flag_tokens: list[tuple[str, str | None, int]] = field(default_factory=list)
    """Unknown ``--name[=value]`` options with the index of the next message (extension flags, docs/extensions-runtime.md#flags)."""

    @property
    def trust_flag(self) -> bool | None:
        """True for ``-a``, False for ``-na``, None when neither was given."""
        if self.approve:
            return True
        return False if self.no_approve else None

    def run_mode(self, stdin_piped: bool = False, stdout_terminal: bool = True) -> RunMode:
        """Which mode runs: rpc, json, text or interactive.

        Text (print mode): ``-p``, ``--undo``, or stdin or stdout not a terminal. As in Pi 1.6,
        ``--mode text`` only selects text output: on a terminal it still opens the TUI.
        """
        if self.mode == "rpc":
            return "rpc"
        if self.mode == "json":
            return "json"
        if self.print or stdin_piped or self.undo or not stdout_terminal:
            return "text"
        return "interactive"
