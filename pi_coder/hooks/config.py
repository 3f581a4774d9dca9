"""Where hooks are configured and which ones match an event (README "Hooks").

Sources, in order: pi's global ``settings.toml`` ``[hooks]``, ``~/.claude/settings.json``, and,
only in a trusted project folder, the project's ``.pi/settings.toml``, ``.claude/settings.json``
and ``.claude/settings.local.json``. Each holds Claude Code's shape: event name -> list of
``{matcher, hooks: [{type: "command", command, timeout}]}``. ``disableAllHooks: true`` in a
Claude file (or ``disable_all_hooks = true`` in pi's settings) turns every hook off.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_TIMEOUT",
    "EVENTS",
    "HookCommand",
    "HookConfig",
    "load_hook_config",
    "matches",
]

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
"""The Claude Code events pi_coder runs."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a hook command may run (Claude Code's default)."""

_SIMPLE = re.compile(r"^[A-Za-z0-9_|]+$")


@dataclass(frozen=True, slots=True, kw_only=True)
class HookCommand:
    """One configured command hook."""

    event: str
    matcher: str
    command: str
    timeout: float
    source: str
    """Where it was configured, as shown by ``/hooks`` (``~/.claude/settings.json``, ...)."""


@dataclass(slots=True, kw_only=True)
class HookConfig:
    """The hooks of a session and the problems found reading them."""

    hooks: list[HookCommand] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    disabled_by: str | None = None
    """The file that set ``disableAllHooks`` (then ``hooks`` is empty)."""

    def for_event(self, event: str, value: str | None) -> list[HookCommand]:
        """The hooks of ``event`` whose matcher accepts ``value`` (None: events without matchers),
        identical commands once (Claude Code runs a duplicate command once)."""
        seen: set[str] = set()
        out: list[HookCommand] = []
        for hook in self.hooks:
            if hook.event != event or hook.command in seen:
                continue
            if value is not None and not matches(hook.matcher, value):
                continue
            seen.add(hook.command)
            out.append(hook)
        return out

    def has(self, event: str) -> bool:
        return any(h.event == event for h in self.hooks)


def matches(matcher: str, value: str) -> bool:
    """Claude Code's matcher rule: empty or ``*`` matches all; ``Edit|Write`` are exact names;
    anything else is a regular expression over the whole name, or a ``*`` glob (``mcp__github__*``)."""
    if matcher in ("", "*"):
        return True
    if _SIMPLE.match(matcher):
        return value in matcher.split("|")
    if fnmatch.fnmatchcase(value, matcher):
        return True
    try:
        return re.fullmatch(matcher, value) is not None
    except re.error:
        return False


def _read_json(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{path}: cannot read it ({exc}); its hooks are not used")
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        warnings.append(f"{path}: not valid JSON (line {exc.lineno}); its hooks are not used")
        return None
    if not isinstance(data, dict):
        warnings.append(f"{path}: expected a JSON object; its hooks are not used")
        return None
    return data


def _parse(table: object, source: str, warnings: list[str]) -> list[HookCommand]:
    """The command hooks of one ``hooks`` table; each problem is one warning naming ``source``."""
    if table is None:
        return []
    if not isinstance(table, Mapping):
        warnings.append(f"{source}: hooks must be an object of event names")
        return []
    out: list[HookCommand] = []
    for event, groups in table.items():
        if event not in EVENTS:
            warnings.append(f"{source}: hook event {event!r} is not supported (known: {', '.join(EVENTS)})")
            continue
        if not isinstance(groups, list):
            warnings.append(f"{source}: hooks.{event} must be a list of {{matcher, hooks}}")
            continue
        for group in groups:
            if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
                warnings.append(f"{source}: each hooks.{event} entry needs a hooks list")
                continue
            matcher = group.get("matcher") or ""
            if not isinstance(matcher, str):
                warnings.append(f"{source}: hooks.{event} matcher must be a string")
                continue
            for hook in group["hooks"]:
                parsed = _command(hook, event, matcher, source, warnings)
                if parsed is not None:
                    out.append(parsed)
    return out


def _command(hook: object, event: str, matcher: str, source: str, warnings: list[str]) -> HookCommand | None:
    if not isinstance(hook, Mapping):
        warnings.append(f"{source}: a hooks.{event} hook must be an object")
        return None
    kind = hook.get("type", "command")
    if kind != "command":
        warnings.append(f'{source}: hooks.{event} hook type {kind!r} is not supported (only "command")')
        return None
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        warnings.append(f"{source}: a hooks.{event} hook needs a command")
        return None
    timeout = hook.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        warnings.append(f"{source}: hooks.{event} timeout must be a positive number of seconds; using 60")
        timeout = DEFAULT_TIMEOUT
    return HookCommand(event=event, matcher=matcher, command=command, timeout=float(timeout), source=source)


def load_hook_config(
    cwd: str | Path,
    *,
    global_settings: Mapping[str, Any],
    project_settings: Mapping[str, Any],
    trusted: bool,
    claude_files: bool = True,
    home: Path | None = None,
) -> HookConfig:
    """Read every source (see the module docstring).

    Args:
        cwd: The project folder (its ``.claude/`` files count only when ``trusted``).
        global_settings: pi's global settings table (``hooks``, ``disable_all_hooks``).
        project_settings: pi's project settings table (already filtered by trust).
        trusted: Whether the project folder is trusted.
        claude_files: Read the ``.claude`` settings files (the ``claude_hooks`` setting).
        home: The home folder holding ``.claude/`` (default ``Path.home()``).
    """
    config = HookConfig()
    warnings = config.warnings
    root = Path(cwd)
    user_claude = (home if home is not None else Path.home()) / ".claude" / "settings.json"
    tables: list[tuple[str, Mapping[str, Any]]] = [("settings.toml", global_settings)]
    if claude_files:
        data = _read_json(user_claude, warnings)
        if data is not None:
            tables.append(("~/.claude/settings.json", data))
    if trusted:
        tables.append((".pi/settings.toml", project_settings))
        if claude_files:
            for name in ("settings.json", "settings.local.json"):
                data = _read_json(root / ".claude" / name, warnings)
                if data is not None:
                    tables.append((f".claude/{name}", data))
    for source, table in tables:
        if table.get("disableAllHooks") is True or table.get("disable_all_hooks") is True:
            config.disabled_by = source
            config.hooks.clear()
            return config
        config.hooks.extend(_parse(table.get("hooks"), source, warnings))
    return config
