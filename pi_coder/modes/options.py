"""What the ``pi`` command line asked for, as plain data (parsed by ``pi_coder.cli``).

The modes and the start-up code read this; nothing here parses or does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from pi_coder.ai.types import ThinkingLevel
from pi_coder.core.startup_options import StartupOptions
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

    The choices the start-up plan reads are declared in the base class, :class:`StartupOptions`."""

    print: bool = False
    mode: str | None = None
    tui_mode: str | None = None
    """``--tui-mode``: only ``fullscreen`` (pi_coder's TUI has no regular-scrollback mode)."""
    """``text``, ``json`` or ``rpc`` (validated by the parser)."""
    continue_session: bool = False
    resume: bool = False
    session: str | None = None
    session_id: str | None = None
    """``--session-id``: open this folder's session with the id, or start one with it."""
    fork: str | None = None
    """``--fork``: copy this session (path or id) into a new session here."""
    session_dir: str | None = None
    no_session: bool = False
    provider: str | None = None
    model: str | None = None
    models: list[str] | None = None
    """``--models`` patterns, split on commas."""
    offline: bool = False
    """``--offline``: accepted; pi makes no network call at start."""
    api_key: str | None = None
    list_models: str | bool | None = None
    """``True`` for ``--list-models`` alone, the search text when one follows."""
    export: str | None = None
    undo: bool = False
    """``--undo``: restore the last prompt's file changes and exit."""
    force: bool = False
    """``--force``: with ``--undo``, overwrite files changed by hand."""
    approve: bool = False
    """``-a``: trust the project folder for this run (nothing saved)."""
    no_approve: bool = False
    """``-na``: do not trust the project folder for this run (nothing saved)."""
    version: bool = False
    help: bool = False
    file_args: list[str] = field(default_factory=list)
    """``@path`` arguments without the ``@``."""
    messages: list[str] = field(default_factory=list)
    """Positional messages, in order."""
    warnings: list[str] = field(default_factory=list)
    """Non-fatal problems found while parsing (unknown tool, invalid thinking level)."""
    extensions: list[str] = field(default_factory=list)
    """``-e/--extension`` specs, in order."""
    no_extensions: bool = False
    skills: list[str] = field(default_factory=list)
    """``--skill`` paths, in order."""
    no_skills: bool = False
    no_hooks: bool = False
    """``--no-hooks``: no hook runs (``pi_coder.hooks``)."""
    no_mcp: bool = False
    """``--no-mcp``: no MCP server connects, no MCP tools."""
    permission_mode: str | None = None
    """``--permission-mode``: auto, ask, accept-edits, plan, deny (overrides ``permissions.mode``)."""
    sandbox: str | None = None
    """``--sandbox``: off, workspace-write, read-only (overrides ``sandbox.mode``)."""
    max_turns: int | None = None
    """``--max-turns``: the run's turn limit (parent and subagents together)."""
    max_budget_usd: float | None = None
    """``--max-budget-usd``: the run's spending limit in USD (parent and subagents together)."""
    no_subagents: bool = False
    """``--no-subagents``: no ``task`` tool."""
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
