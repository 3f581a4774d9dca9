"""User settings: the ``Settings`` model, loading and merging, and comment-preserving writes.

Two scopes (``design.md``):

- global ``config_dir()/settings.toml``
- project ``<cwd>/.pi/settings.toml``

The project scope overrides the global one with a one-level deep merge: a table (``[compaction]``)
is merged key by key, anything else (scalars, arrays) is replaced. A project folder the user has
not trusted (``pi_coder.permissions.trust``) contributes only the keys of ``PROJECT_SAFE_KEYS``; every
other key (anything that runs a command, moves data or loads files, and any key added later until
it is listed there) needs trust. ``default_project_trust`` is read from the global file only. A file that does not parse is
reported as one warning naming the file and line and that scope is ignored; a key with a value of
the wrong type is reported (file, line, key) and only that key falls back to its default.
Unknown keys are kept (``model_extra``) and listed in ``LoadedSettings.unknown_keys``.

Writes from the UI go to the global file through tomlkit, so the user's comments and layout
survive. Nothing here does I/O at import time; tomllib and tomlkit are imported on use.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pi_coder.ai.types import ThinkingLevel
from pi_coder.errors import ConfigError
from pi_coder.paths import config_dir, project_dir

__all__ = [
    "BashSettings",
    "BranchSummarySettings",
    "CheckpointSettings",
    "CompactionSettings",
    "ImageSettings",
    "LoadedSettings",
    "MarkdownSettings",
    "PROJECT_SAFE_KEYS",
    "ProviderRetrySettings",
    "RetrySettings",
    "Settings",
    "ThinkingBudgets",
    "gated_project_keys",
    "folder_lock",
    "global_settings_path",
    "load_settings",
    "project_settings_path",
    "save_global_setting",
    "update_global_settings",
    "update_settings_file",
]

QueueMode = Literal["one-at-a-time", "all"]

# Resource lists whose relative entries are resolved against the folder of the settings file.
_RESOURCE_KEYS = ("skills", "prompts", "themes")

TrustDefault = Literal["ask", "always", "never"]

# Project settings that apply even in a folder the user has not trusted: they change how pi
# looks or paces its work, never what it runs, where it writes or which files it loads.
# A table maps to the keys allowed inside it. Everything else is gated, including keys added
# later (shell_path, shell_command_prefix, session_dir, external_editor, skills, prompts, themes,
# keybindings, default_provider/default_model/enabled_models, and any extensions, MCP or
# environment allow-list keys) until someone lists them here on purpose.
PROJECT_SAFE_KEYS: Mapping[str, frozenset[str] | None] = {
    "default_thinking_level": None,
    "hide_thinking_block": None,
    "steering_mode": None,
    "follow_up_mode": None,
    "theme": None,
    "quiet_startup": None,
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
    "markdown": frozenset({"code_block_indent"}),
    "mcp": frozenset({"startup_wait"}),
    "thinking_budgets": frozenset({"minimal", "low", "medium", "high"}),
}
"""Top-level key -> None (a plain value) or the allowed keys of that table."""

_GLOBAL_ONLY_KEYS = ("default_project_trust",)


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
    """Provider of the model to start with; updated on every model switch."""
    default_model: str | None = None
    """Model id to start with; updated on every model switch."""
    default_thinking_level: ThinkingLevel = "medium"
    """Thinking level to start with: off, minimal, low, medium, high, xhigh, max (clamped to the model)."""
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
    """Theme name: dark, light, auto (from COLORFGBG) or a custom theme's name."""
    quiet_startup: bool = False
    """Hide the start-up header."""
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


@dataclass
class LoadedSettings:
    """The effective settings plus what was found while loading them.

    ``settings`` keeps its identity across ``save_global_setting`` calls: its fields are
    updated in place, so holders of the object see changes.
    """

    settings: Settings
    cwd: Path
    global_path: Path
    project_path: Path
    warnings: list[str] = field(default_factory=list)
    """One message per unusable file or value, naming the file and line."""
    unknown_keys: list[str] = field(default_factory=list)
    """``"<file>: key"`` for keys the Settings model does not know (kept, not used)."""
    unreadable: list[str] = field(default_factory=list)
    """One line when the global settings file could not be read or parsed at all (so none of it
    would apply): ``pi`` stops at start then rather than run on defaults (a project's file only
    gives a warning)."""
    global_data: dict[str, Any] = field(default_factory=dict)
    project_data: dict[str, Any] = field(default_factory=dict)

    def save_global_setting(self, key_path: str | Sequence[str], value: Any) -> None:
        """Write one key to the global settings.toml and update ``settings``.

        Args:
            key_path: ``"theme"``, ``"compaction.enabled"`` or ``("keybindings", "exit")``.
            value: The new value; ``None`` removes the key.

        Raises:
            ConfigError: The value is invalid for the key, or the file cannot be parsed.
        """
        self.update_global_settings({_key_str(key_path): value})

    def reload(self, *, project_trusted: bool = True) -> None:
        """Re-read both files (``/reload``), updating ``settings`` in place."""
        fresh = load_settings(self.cwd, project_trusted=project_trusted)
        self.global_data, self.project_data = fresh.global_data, fresh.project_data
        self.warnings, self.unknown_keys = fresh.warnings, fresh.unknown_keys
        for name in type(self.settings).model_fields:
            setattr(self.settings, name, getattr(fresh.settings, name))

    def update_global_settings(self, updates: Mapping[str, Any]) -> None:
        """Write several keys (dotted paths) at once; see ``save_global_setting``."""
        data, text = _write_global(self.global_path, updates)
        _prepare_scope(data, self.global_path, text, [], [])
        self.global_data = data
        merged = _merge(self.global_data, self.project_data)
        fresh = _validate_lenient(merged, Path("<merged>"), None, [])
        for name in type(self.settings).model_fields:
            setattr(self.settings, name, getattr(fresh, name))
        if fresh.model_extra is not None and self.settings.model_extra is not None:
            self.settings.model_extra.clear()
            self.settings.model_extra.update(fresh.model_extra)


def global_settings_path() -> Path:
    return config_dir() / "settings.toml"


def project_settings_path(cwd: str | os.PathLike[str]) -> Path:
    return project_dir(cwd) / "settings.toml"


def load_settings(cwd: str | os.PathLike[str] | None = None, *, project_trusted: bool = True) -> LoadedSettings:
    """Load and merge the global and project settings.

    Args:
        cwd: Project folder; defaults to the process's working directory.
        project_trusted: False keeps only the ``PROJECT_SAFE_KEYS`` of the project file (the
            folder is not trusted, see ``pi_coder.permissions.trust``). ``pi`` always passes the decision.

    Returns:
        The merged settings with warnings and unknown keys. Never raises for bad files.
    """
    root = Path(cwd) if cwd is not None else Path.cwd()
    warnings: list[str] = []
    unknown: list[str] = []
    unreadable: list[str] = []
    scopes: list[dict[str, Any]] = []
    gpath, ppath = global_settings_path(), project_settings_path(root)
    for path in (gpath, ppath):
        # Only the user's own file stops pi: a cloned repository's must not keep pi from starting.
        text, data = _read_toml(path, warnings, unreadable if path is gpath else [])
        if path is ppath:
            _drop_global_only(data, path, warnings)
            if not project_trusted:
                _keep_safe(data)
        _prepare_scope(data, path, text, warnings, unknown)
        scopes.append(data)
    merged = _merge(scopes[0], scopes[1])
    settings = _validate_lenient(merged, Path("<merged>"), None, warnings)
    return LoadedSettings(
        settings=settings,
        cwd=root,
        global_path=gpath,
        project_path=ppath,
        warnings=warnings,
        unknown_keys=unknown,
        unreadable=unreadable,
        global_data=scopes[0],
        project_data=scopes[1],
    )


def save_global_setting(
    key_path: str | Sequence[str], value: Any, settings: LoadedSettings | None = None
) -> None:
    """Write one key to the global settings.toml, keeping comments and layout.

    Creates the file (mode 0600) and its folder if needed. With ``settings``, the in-memory
    settings are updated too (the project scope still wins where it sets the key).

    Args:
        key_path: Dotted key (``"compaction.enabled"``) or a sequence of parts.
        value: The new value; ``None`` removes the key.
        settings: Loaded settings to update in memory.

    Raises:
        ConfigError: Invalid value for the key, or the existing file does not parse.
    """
    update_global_settings({_key_str(key_path): value}, settings)


def update_global_settings(updates: Mapping[str, Any], settings: LoadedSettings | None = None) -> None:
    """Write several dotted keys to the global settings.toml at once; see ``save_global_setting``."""
    if settings is not None:
        settings.update_global_settings(updates)
    else:
        _write_global(global_settings_path(), updates)


def update_settings_file(path: Path, updates: Mapping[str, Any]) -> None:
    """Write dotted keys to the settings file at ``path`` (global or a project's), as
    ``update_global_settings`` does: layout and comments kept, replaced atomically.

    Raises:
        ConfigError: Invalid value for a key, or the existing file does not parse.
    """
    _write_global(path, updates)


def gated_project_keys(data: Mapping[str, Any]) -> list[str]:
    """Keys of a project settings table that apply only in a trusted folder, in file order.

    A key outside ``PROJECT_SAFE_KEYS``, or one whose value is (or holds) a ``!command`` or
    ``$VARIABLE`` string, is gated; a table key is named ``table.key``.
    """
    return [key if sub is None else f"{key}.{sub}" for key, sub in _gated(data)]


def _gated(data: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for key, value in data.items():
        if key in _GLOBAL_ONLY_KEYS:
            continue
        if key not in PROJECT_SAFE_KEYS:
            out.append((key, None))
            continue
        allowed = PROJECT_SAFE_KEYS[key]
        if allowed is None or not isinstance(value, dict):
            if _runs_or_expands(value):
                out.append((key, None))
        else:
            out.extend((key, sub) for sub, item in value.items() if sub not in allowed or _runs_or_expands(item))
    return out


# -- loading -------------------------------------------------------------------------------


def _runs_or_expands(value: Any) -> bool:
    if isinstance(value, str):
        return value.lstrip().startswith(("!", "$"))
    if isinstance(value, list):
        return any(_runs_or_expands(item) for item in value)
    if isinstance(value, dict):
        return any(_runs_or_expands(item) for item in value.values())
    return False


def _keep_safe(data: dict[str, Any]) -> None:
    """Remove the gated keys of a project file's data in place (the folder is not trusted)."""
    for key, sub in _gated(data):
        if sub is not None and isinstance(data.get(key), dict):
            table = dict(data[key])
            table.pop(sub, None)
            data[key] = table
        else:
            data.pop(key, None)


def _drop_global_only(data: dict[str, Any], path: Path, warnings: list[str]) -> None:
    for key in _GLOBAL_ONLY_KEYS:
        if key in data:
            del data[key]
            warnings.append(f"{path}: {key} is read from the global settings.toml only; ignored here")


def _read_toml(path: Path, warnings: list[str], unreadable: list[str]) -> tuple[str | None, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, UnicodeDecodeError):
            why = "it is not UTF-8 text"
        elif isinstance(exc, IsADirectoryError):
            why = "it is a folder"
        else:
            why = exc.strerror or str(exc)
        warnings.append(f"{path}: cannot read settings ({why}); using defaults for this file")
        unreadable.append(f"Cannot read settings file {path}: {why}; fix it (or move it away) and start again")
        return None, {}
    import tomllib

    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message already says "(at line L, column C)".
        warnings.append(f"{path}: invalid TOML: {exc}; ignoring this file")
        unreadable.append(f"{path}: invalid TOML: {exc}; none of it was applied: fix it and start again")
        return text, {}


def _prepare_scope(
    data: dict[str, Any], path: Path, text: str | None, warnings: list[str], unknown: list[str]
) -> None:
    """Clean one file's data in place: drop invalid keys (with a warning), resolve resource paths."""
    if not data:
        return
    _validate_lenient(data, path, text, warnings, drop_invalid=True)
    unknown.extend(f"{path}: {key}" for key in _unknown_keys(data))
    _resolve_resource_paths(data, path.parent)


def _validate_lenient(
    data: dict[str, Any],
    path: Path,
    text: str | None,
    warnings: list[str],
    *,
    drop_invalid: bool = False,
) -> Settings:
    """Validate ``data``; invalid keys are reported, removed from ``data`` and default instead."""
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        problems: dict[tuple[str | int, ...], tuple[int, str]] = {}
        for err in exc.errors():
            loc = _setting_loc(err["loc"])
            if loc in problems:  # a union reports one error per member: keep the first
                continue
            line = (_find_key_line(text, loc) if text is not None else None) or 0
            problems[loc] = (line, _error_text(loc, err))
        bad = list(problems)
        parts = [
            f"{'line ' + str(line) + ', ' if line else ''}{'.'.join(map(str, loc))}: {msg}"
            for loc, (line, msg) in sorted(problems.items(), key=lambda item: item[1][0])
        ]
        warnings.append(f"{path}: invalid settings ({'; '.join(parts)}); using the defaults for these keys")
        cleaned = dict(data)
        for loc in bad:
            _drop(cleaned, loc)
        if drop_invalid:
            data.clear()
            data.update(cleaned)
        return Settings.model_validate(cleaned)


def _error_text(loc: tuple[str | int, ...], err: Any) -> str:
    if loc[0] == "keybindings" and len(loc) == 2:
        return "expected a key or a list of keys"
    if err["type"] in ("model_type", "model_attributes_type", "dict_type"):
        return "expected a table"
    return str(err["msg"])


def _setting_loc(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """The setting a validation error belongs to: ``(key,)`` or ``(table, key)``.

    Errors inside a list or a union report deeper locations; a bad list item invalidates the list.
    """
    first = loc[0]
    if len(loc) >= 2 and isinstance(loc[1], str) and isinstance(first, str) and not _is_scalar_field(first):
        return (first, loc[1])
    return (first,)


def _is_scalar_field(name: str) -> bool:
    if name == "keybindings":
        return False
    info = Settings.model_fields.get(name)
    ann = info.annotation if info is not None else None
    return not (isinstance(ann, type) and issubclass(ann, BaseModel))


def _drop(data: dict[str, Any], loc: tuple[str | int, ...]) -> None:
    node: Any = data
    for part in loc[:-1]:
        if not isinstance(node, dict) or part not in node:
            return
        node[part] = dict(node[part]) if isinstance(node[part], dict) else node[part]
        node = node[part]
    if isinstance(node, dict):
        node.pop(loc[-1], None)


def _find_key_line(text: str, loc: tuple[str | int, ...]) -> int | None:
    """Line number (1-based) where the setting ``loc`` is written, if it can be found simply."""
    import re

    if not loc:
        return None
    table: str | None = None
    first_mention: int | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        header = re.match(r"^\[\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]", line)
        if header:
            table = header.group(1).replace('"', "").replace("'", "").replace(" ", "")
            if len(loc) > 1 and table == loc[0] and first_mention is None:
                first_mention = number
            continue
        m = re.match(r"^([A-Za-z0-9_\-\"'.]+)\s*=", line)
        if not m:
            continue
        key = m.group(1).replace('"', "").replace("'", "")
        full = f"{table}.{key}" if table else key
        if full == ".".join(str(p) for p in loc):
            return number
        if table is None and key == str(loc[0]):
            first_mention = first_mention or number
    return first_mention


def _unknown_keys(data: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in data.items():
        info = Settings.model_fields.get(key)
        if info is None:
            out.append(key)
            continue
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel) and isinstance(value, dict):
            out.extend(f"{key}.{sub}" for sub in value if sub not in ann.model_fields)
    return out


def _resolve_resource_paths(data: dict[str, Any], base: Path) -> None:
    for key in _RESOURCE_KEYS:
        items = data.get(key)
        if isinstance(items, list):
            data[key] = [
                str(base / Path(item).expanduser()) if isinstance(item, str) else item for item in items
            ]


def _merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            merged[key] = {**current, **value}
        else:
            merged[key] = value
    return merged


# -- writing -------------------------------------------------------------------------------


def _key_str(key_path: str | Sequence[str]) -> str:
    return key_path if isinstance(key_path, str) else ".".join(key_path)


def _to_plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_none=True)
    if isinstance(value, tuple):
        return list(value)
    return value


def _write_global(path: Path, updates: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """Apply ``updates`` to the TOML file at ``path``; return its new plain data and text."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from pi_coder.paths import ensure_private_dir

    target = path.resolve() if path.is_symlink() else path
    ensure_private_dir(target.parent)
    with folder_lock(target.parent):
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        try:
            doc = tomlkit.parse(text)
        except TOMLKitError as exc:
            raise ConfigError(f"{path}: cannot update settings, the file is not valid TOML: {exc}") from exc
        parts_list = [tuple(key.split(".")) for key in updates]
        for parts, value in zip(parts_list, updates.values(), strict=True):
            _set_in_doc(doc, parts, _to_plain(value))
        data = doc.unwrap()
        _check_updated(data, parts_list)
        new_text = tomlkit.dumps(doc)
        _atomic_write(target, new_text)
    return data, new_text


def _set_in_doc(doc: Any, parts: tuple[str, ...], value: Any) -> None:
    import tomlkit

    node = doc
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if value is None:
                return
            node[part] = tomlkit.table()
            child = node[part]
        node = child
    if value is None:
        if parts[-1] in node:
            del node[parts[-1]]
    else:
        node[parts[-1]] = value


def _check_updated(data: dict[str, Any], parts_list: list[tuple[str, ...]]) -> None:
    try:
        Settings.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(str(p) for p in err["loc"])
            for parts in parts_list:
                if loc[: len(parts)] == parts or parts[: len(loc)] == loc:
                    raise ConfigError(f"invalid value for setting {'.'.join(parts)}: {err['msg']}") from None


def _atomic_write(path: Path, text: str) -> None:
    """Rewrite ``path`` atomically, keeping its mode (0600 for a new file)."""
    from pi_coder.paths import write_atomic

    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600
    write_atomic(path, text.encode("utf-8"), mode=mode)


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Serialise writers (several pi processes) on the settings folder itself: no lock file."""
    try:
        import fcntl
    except ImportError:  # Windows: last writer wins
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
