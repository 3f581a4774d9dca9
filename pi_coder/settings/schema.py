"""The ``Settings`` model: every user setting with its default, and which keys a project may set.

Keys are the snake_case names of settings.toml. ``PROJECT_SAFE_KEYS`` lists what an untrusted
project folder may set (see ``load.py``). Loading is in ``load.py``, writing in ``write.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pi_coder.ai.types import ThinkingLevel

__all__ = [
    "PROJECT_SAFE_KEYS",
    "BashSettings",
    "BranchSummarySettings",
    "CheckpointSettings",
    "CompactionSettings",
    "ImageSettings",
    "MarkdownSettings",
    "McpSettings",
    "PermissionSettings",
    "ProviderRetrySettings",
    "QueueMode",
    "RetrySettings",
    "SandboxSettings",
    "Settings",
    "SubagentSettings",
    "ThinkingBudgets",
    "TerminalSettings",
    "TrustDefault",
]

QueueMode = Literal["one-at-a-time", "all"]

TrustDefault = Literal["ask", "always", "never"]

# Project settings that apply even in a folder the user has not trusted: they change how pi
# looks or paces its work, never what it runs, where it writes or which files it loads.
# A table maps to the keys allowed inside it. Everything else is gated, including keys added
# later (shell_path, shell_command_prefix, session_dir, external_editor, skills, prompts, themes,
# keybindings, default_provider/default_model/enabled_models, and any extensions, MCP or
# environment allow-list keys) until someone lists them here on purpose.
PROJECT_SAFE_KEYS: Mapping[str, frozenset[str] | None] = {
    "default_thinking_level": None,
    "model_thinking_levels": None,
    "hide_thinking_block": None,
    "steering_mode": None,
    "follow_up_mode": None,
    "theme": None,
    "quiet_startup": None,
    "paint_background": None,
    "output_pad": None,
    "show_hardware_cursor": None,
    "fullscreen_exit_output": None,
    "fullscreen_scrollbar": None,
    "fullscreen_copy_on_select": None,
    "double_escape_action": None,
    "tree_filter_mode": None,
    "editor_padding_x": None,
    "autocomplete_max_visible": None,
    "enable_skill_commands": None,
    "compaction": frozenset({"enabled", "reserve_tokens", "keep_recent_tokens"}),
    "branch_summary": frozenset({"reserve_tokens", "skip_prompt"}),
    "checkpoints": frozenset({"enabled", "max_file_mb", "max_files"}),
    "retry": frozenset({"enabled", "max_retries", "base_delay_ms", "max_delay_ms"}),
    "bash": frozenset({"default_timeout", "max_timeout"}),
    "images": frozenset({"auto_resize", "block_images"}),
    "markdown": frozenset({"code_block_indent", "table_row_separators"}),
    "mcp": frozenset({"startup_wait"}),
    "terminal": frozenset({"show_terminal_progress"}),
    "thinking_budgets": frozenset({"minimal", "low", "medium", "high"}),
}
"""Top-level key -> None (a plain value) or the allowed keys of that table."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)


class CompactionSettings(_Section):
    enabled: bool = True
    """Compact automatically when the context nears the model's window."""
    reserve_tokens: int = Field(default=16384, ge=0)
    """Tokens kept free for the model's answer; compaction starts when the context passes window - this."""
    keep_recent_tokens: int = Field(default=20000, ge=0)
    """Roughly this many tokens of recent messages are kept verbatim after a compaction."""


class CheckpointSettings(_Section):
    enabled: bool = True
    """Snapshot the working folder (shadow git repository) around runs that may change files; /undo, /redo."""
    max_file_mb: float = Field(default=10, gt=0)
    """Files larger than this are left out of snapshots (one notice)."""
    max_files: int = Field(default=50000, ge=1)
    """Folders with more files than this are not snapshotted (one notice)."""
    max_age_days: int = Field(default=30, ge=0)
    """Snapshots older than this are pruned automatically (0 = never by age)."""
    max_store_mb: int = Field(default=1024, ge=0)
    """When a folder's snapshot store passes this size, the oldest half is pruned (0 = no limit)."""
    keep_secrets: bool = False
    """Snapshot secret files too (.env, .env.*, *.pem, id_rsa*: the permission layer's list); off: left out."""


class BranchSummarySettings(_Section):
    reserve_tokens: int = Field(default=16384, ge=0)
    """Tokens kept free when summarising an abandoned branch in /tree."""
    skip_prompt: bool = False
    """Do not ask whether to summarise a branch when leaving it in /tree."""


class ProviderRetrySettings(_Section):
    max_retries: int = Field(default=0, ge=0)
    """Silent retries inside the provider before the first byte (Pi 1.6: 0; the session retries in the open)."""


class RetrySettings(_Section):
    enabled: bool = True
    """Retry automatically after transient provider errors (overload, rate limit, 5xx, connection, timeout)."""
    max_retries: int = Field(default=3, ge=0)
    """Attempts after the first failure."""
    base_delay_ms: int = Field(default=2000, ge=0)
    """First delay; doubled on each attempt (2 s, 4 s, 8 s)."""
    max_delay_ms: int = Field(default=60000, ge=0)
    """Fail fast when a server asks to wait longer than this; also caps the backoff (0 = no cap)."""
    max_total_ms: int = Field(default=600000, ge=0)
    """No retry starts once this long has passed since the first failed attempt began (0 = no limit)."""
    provider: ProviderRetrySettings = Field(default_factory=ProviderRetrySettings)
    """Provider-level retries (before the first byte of a response)."""


class BashSettings(_Section):
    default_timeout: int = Field(default=120, ge=0)
    """Seconds a bash tool call may run when the model gives no timeout (0 = no limit)."""
    max_timeout: int = Field(default=600, ge=0)
    """Upper bound in seconds for a timeout requested by the model (0 = no limit)."""
    env_allow: list[str] = Field(default_factory=list)
    """Secret-looking variables passed to bash and ! commands anyway, e.g. ["GITHUB_TOKEN"] (globs allowed)."""
    keep_background: bool = False
    """Keep processes a command left running (cmd &, nohup) when pi exits; setsid ones always survive."""
    max_output_file_mb: float = Field(default=50, gt=0)
    """Cap in MB of a command's full-output file in the temp folder; past it the file keeps the tail."""


class ImageSettings(_Section):
    auto_resize: bool = True
    """Shrink images to at most 2000x2000 pixels and 4.5 MB (base64) before sending them to the model."""
    block_images: bool = False
    """Never send images to the model (replaced by a short text note)."""


class McpSettings(_Section):
    startup_wait: float = Field(default=10.0, ge=0)
    """The first prompt waits at most this many seconds for MCP servers still connecting."""


class MarkdownSettings(_Section):
    code_block_indent: str = "  "
    """Indentation used for code blocks in rendered markdown."""
    table_row_separators: bool = False
    """Draw a line between the rows of tables (as Pi does)."""


class TerminalSettings(_Section):
    show_terminal_progress: bool = False
    """Show the terminal's progress indicator (OSC 9;4, in the tab or title bar) while the agent works."""


class ThinkingBudgets(_Section):
    minimal: int = Field(default=1024, ge=0)
    """Thinking tokens for level 'minimal' on budget-based models."""
    low: int = Field(default=2048, ge=0)
    """Thinking tokens for level 'low'."""
    medium: int = Field(default=8192, ge=0)
    """Thinking tokens for level 'medium'."""
    high: int = Field(default=16384, ge=0)
    """Thinking tokens for level 'high'."""


class PermissionSettings(_Section):
    mode: Literal["auto", "ask", "accept-edits", "plan", "deny"] = "auto"
    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    secret_rules: bool = True
    rpc_dialog_timeout: float = Field(default=300.0, ge=0)
    """Seconds an RPC client has to answer a dialog (a permission question or an extension's
    select/confirm/input) that sets no timeout of its own; then it counts as cancelled, so a
    permission question is refused. 0 waits forever."""


class SandboxSettings(_Section):
    mode: Literal["off", "workspace-write", "read-only"] = "off"
    network: bool = False
    writable: list[str] = Field(default_factory=list)
    hide_secrets: bool = True
    """Hide ~/.ssh and pi's config folder (credentials.json, models.toml) from sandboxed commands."""
    hidden: list[str] = Field(default_factory=list)
    """More paths sandboxed commands must not see (files or folders)."""


class SubagentSettings(_Section):
    enabled: bool = True
    """The ``task`` tool (delegate to a child agent); ``--no-subagents`` turns it off for a run."""
    max_parallel: int = Field(default=4, ge=1)
    """How many children of one turn run at once."""
    max_turns: int = Field(default=50, ge=0)
    """A child's turn limit when its definition sets none (0: none)."""
    max_budget_usd: float = Field(default=0.0, ge=0)
    """A child's spending limit in USD when its definition sets none (0: none)."""


class Settings(BaseModel):
    """Every user setting with its default. Keys are the snake_case names used in settings.toml."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    default_provider: str | None = None
    """Provider of the model to start with (Ctrl+S in the model picker saves it)."""
    default_model: str | None = None
    """Model id to start with (Ctrl+S in the model picker saves it)."""
    default_thinking_level: ThinkingLevel = "medium"
    """Thinking level to start with: off, minimal, low, medium, high, xhigh, max (clamped to the model)."""
    model_thinking_levels: dict[str, ThinkingLevel] = Field(default_factory=dict)
    """Thinking level per model, keyed by exact ``provider/model-id``: taken at start and when
    switching to that model, instead of ``default_thinking_level`` or the level carried over."""
    thinking_budgets: ThinkingBudgets = Field(default_factory=ThinkingBudgets)
    """Token budgets per thinking level for providers that take a budget."""
    hide_thinking_block: bool = False
    """Collapse thinking blocks to a one-line label (Ctrl+T toggles)."""
    enabled_models: list[str] = Field(default_factory=list)
    """Model patterns cycled with Ctrl+P, e.g. ["anthropic/*", "*sonnet*:high"]; empty = all."""
    steering_mode: QueueMode = "one-at-a-time"
    """How queued steering messages are delivered: one-at-a-time or all."""
    follow_up_mode: QueueMode = "one-at-a-time"
    """How queued follow-up messages are delivered: one-at-a-time or all."""
    theme: str = "dark"
    """Theme name: dark, light, system (the terminal's own colours), a "light/dark" pair that
    follows the terminal's background, auto (= "light/dark") or a custom theme's name."""
    quiet_startup: bool = False
    """Hide the start-up header."""
    paint_background: bool = False
    """Paint the theme's page background instead of letting the terminal's show (never with NO_COLOR)."""
    output_pad: int = Field(default=1, ge=0, le=1)
    """Columns of padding inside transcript blocks (messages, tool and ! output, summaries): 0 or 1."""
    show_hardware_cursor: bool = False
    """Show the terminal's own cursor at the editor's caret instead of the drawn one."""
    fullscreen_exit_output: Literal["transcript", "resume-hint"] = "transcript"
    """What quitting the TUI prints: the conversation then the resume hint, or the hint only."""
    fullscreen_scrollbar: Literal["auto", "always", "hidden"] = "auto"
    """The transcript's scrollbar: when it overflows, always, or never (it still scrolls)."""
    fullscreen_copy_on_select: bool = True
    """Copy a mouse selection when the button is released; off: Ctrl+X copies it."""
    last_changelog_version: str | None = None
    """Internal: the last version whose changelog was shown."""
    double_escape_action: Literal["tree", "fork", "none"] = "tree"
    """What Esc Esc on an empty editor does: tree, fork or none."""
    tree_filter_mode: Literal["default", "no-tools", "user-only", "labeled-only", "all"] = "default"
    """Initial filter of /tree: default, no-tools, user-only, labeled-only, all."""
    editor_padding_x: int = Field(default=0, ge=0, le=3)
    """Horizontal padding inside the editor (0-3)."""
    autocomplete_max_visible: int = Field(default=5, ge=3, le=20)
    """Rows shown by the autocomplete list (3-20)."""
    external_editor: str | None = None
    """Command for Ctrl+G; default $VISUAL, then $EDITOR."""
    shell_path: str | None = None
    """Shell used by the bash tool and ! commands; default /bin/bash, then bash, then sh."""
    shell_command_prefix: str | None = None
    """Line run before every bash command, e.g. "shopt -s expand_aliases"."""
    session_dir: str | None = None
    """Folder for session files instead of the default sessions folder."""
    default_project_trust: TrustDefault = "ask"
    """Global only. A project folder with no saved trust decision: ask (TUI), always or never."""
    local_discovery: bool = True
    """With no provider key, look for a local OpenAI-compatible server on loopback ports (100 ms)."""
    http_connect_timeout_ms: int = Field(default=15000, ge=0)
    """Connecting to a model API may take this long (0 = no limit)."""
    http_idle_timeout_ms: int = Field(default=300000, ge=0)
    """No byte from the model API for this long ends the request, the first byte included (Pi's httpIdleTimeoutMs; 0 = none)."""
    http_content_timeout_ms: int = Field(default=600000, ge=0)
    """No content for this long since the request started ends it, even while the server sends keep-alive pings (0 = none)."""
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    """Automatic context compaction."""
    branch_summary: BranchSummarySettings = Field(default_factory=BranchSummarySettings)
    """Summaries of abandoned branches in /tree."""
    checkpoints: CheckpointSettings = Field(default_factory=CheckpointSettings)
    """File snapshots for /undo, /redo and code restores."""
    retry: RetrySettings = Field(default_factory=RetrySettings)
    """Automatic retry of transient provider errors."""
    bash: BashSettings = Field(default_factory=BashSettings)
    """The bash tool."""
    images: ImageSettings = Field(default_factory=ImageSettings)
    """Images sent to the model."""
    markdown: MarkdownSettings = Field(default_factory=MarkdownSettings)
    """Markdown rendering."""
    mcp: McpSettings = Field(default_factory=McpSettings)
    terminal: TerminalSettings = Field(default_factory=TerminalSettings)
    """The terminal beyond the screen itself (progress indicator)."""
    subagents: SubagentSettings = Field(default_factory=SubagentSettings)
    """MCP client timing (the servers themselves are in mcp.json)."""
    enable_skill_commands: bool = True
    """Offer /skill:name commands for discovered skills."""
    claude_skills: bool = True
    """Also read skills from ``.claude/skills`` (trusted project) and ``~/.claude/skills``."""
    hooks: dict[str, Any] = Field(default_factory=dict)
    """Claude Code hooks: event -> [{matcher, hooks = [{type = "command", command, timeout}]}] (README "Hooks")."""
    claude_hooks: bool = True
    """Also run the hooks of ``~/.claude/settings.json`` and (trusted project) ``.claude/settings*.json``."""
    disable_all_hooks: bool = False
    """Run no hook at all (like ``--no-hooks``)."""
    skills: list[str] = Field(default_factory=list)
    """Extra skill files or folders (relative paths are relative to this file's folder)."""
    prompts: list[str] = Field(default_factory=list)
    """Extra prompt template files or folders (relative to this file's folder)."""
    extensions: list[str] = Field(default_factory=list)
    """Extensions to load: paths (relative to the settings file's folder), modules, ``builtin:<name>``;
    ``-<spec>`` removes one. Project settings count only in a trusted folder."""
    themes: list[str] = Field(default_factory=list)
    """Extra theme files or folders (relative to this file's folder)."""
    packages: list[str | dict[str, Any]] = Field(default_factory=list)
    """Packages (``pi install``): a PyPI requirement, a git URL or a path, or a table ``{source = "...",
    skills = ["-name"], ...}`` narrowing what loads. Project settings count only in a trusted folder."""
    keybindings: dict[str, str | list[str]] = Field(default_factory=dict)
    """Action name -> key or list of keys, e.g. {follow_up = "alt+enter"}."""
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    """Permission mode and allow/ask/deny rules (project settings only in a trusted folder)."""
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    """Run bash and ! commands under bubblewrap (project settings only in a trusted folder)."""
