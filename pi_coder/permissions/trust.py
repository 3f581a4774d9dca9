"""Project trust: whether a folder's own ``.pi`` resources may be used (docs/permissions.md#project-trust).

A cloned repository controls its ``.pi/`` folder. Until the user trusts the folder, pi does not
apply what could run a command, move data or instruct the model: the gated keys of
``.pi/settings.toml`` (``pi_coder.settings.PROJECT_SAFE_KEYS`` lists the harmless ones),
``.pi/SYSTEM.md``, ``.pi/APPEND_SYSTEM.md``, ``.pi/prompts/``, ``.pi/themes/``, the hooks of
``.claude/settings.json`` and ``.claude/settings.local.json`` (and, once they exist, project
extensions, skills and MCP servers). ``AGENTS.md``/``CLAUDE.md`` load regardless.

The decision, in order (docs/permissions.md#deciding-trust): ``-a``/``-na``; no project resource at all (trusted implicitly);
``project_trust`` handlers (extensions, later); the saved decision for the folder or its nearest
ancestor in ``<config>/trust.json``; the global ``default_project_trust`` (``ask``, ``always``,
``never``). ``ask`` is answered by the TUI's dialog; the other modes treat the folder as
untrusted and print :func:`untrusted_notice`. Decisions are cached per process per folder.

The store is a JSON object, canonical folder path -> bool, written sorted with a 2-space indent
and a final newline, atomically (temporary file, fsync, rename) under the settings folder lock.
A file that does not hold such an object is reported once, treated as empty and never
overwritten. Nothing here prints or imports a UI.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from pi_coder.errors import ConfigError
from pi_coder.paths import config_dir, project_dir, write_atomic
from pi_coder.settings import folder_lock

__all__ = [
    "TRUST_CHOICES",
    "TrustChoice",
    "TrustDecision",
    "TrustHandler",
    "TrustSource",
    "TrustStore",
    "TrustVote",
    "apply_trust_choice",
    "canonical_path",
    "clear_trust_cache",
    "decide_project_trust",
    "project_resources",
    "remember_decision",
    "trust_store_path",
    "undecided",
    "untrusted_notice",
]

TrustSource = Literal["flag", "implicit", "extension", "saved", "default", "session", "undecided"]
"""How a decision was reached: ``-a``/``-na``; no project resources; a ``project_trust`` handler;
``trust.json``; ``default_project_trust``; chosen for this session only; not decided (untrusted)."""

TrustChoice = Literal["trust", "trust_parent", "trust_session", "distrust", "distrust_session"]
"""The answers of the trust dialog (docs/permissions.md#trust-dialog); Esc is ``None``."""

TRUST_CHOICES: tuple[tuple[TrustChoice, str], ...] = (
    ("trust", "Trust"),
    ("trust_parent", "Trust parent folder"),
    ("trust_session", "Trust for this session only"),
    ("distrust", "Don't trust"),
    ("distrust_session", "Don't trust for this session only"),
)
"""The dialog's options with their labels, in order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustDecision:
    """Whether the project folder is trusted for this run, and why."""

    trusted: bool
    source: TrustSource
    path: Path
    """The canonical project folder."""
    saved_path: Path | None = None
    """The ``trust.json`` entry that decided (``source == "saved"``): the folder or an ancestor."""

    def describe(self) -> str:
        """One line for ``/trust``: ``trusted (saved for /home/u/src)``."""
        state = "trusted" if self.trusted else "not trusted"
        reason = {
            "flag": "-a/--approve" if self.trusted else "-na/--no-approve",
            "implicit": "the folder has no project resources",
            "extension": "decided by an extension",
            "saved": f"saved for {self.saved_path}" if self.saved_path is not None else "saved",
            "default": "default_project_trust setting",
            "session": "for this session only",
            "undecided": "no decision yet",
        }[self.source]
        return f"{state} ({reason})"


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustVote:
    """A ``project_trust`` handler's answer."""

    trusted: bool
    remember: bool = False
    """Save the answer in ``trust.json`` for the folder."""


TrustHandler = Callable[[Path, Sequence[str]], "TrustVote | bool | None"]
"""``handler(folder, resources)``: a vote, a plain bool, or None for no opinion (extensions, later)."""

_cache: dict[Path, TrustDecision] = {}


def canonical_path(path: str | os.PathLike[str]) -> Path:
    """The key of a folder in ``trust.json``: its real path (case-folded on Windows)."""
    return Path(os.path.normcase(os.path.realpath(os.path.expanduser(os.fspath(path)))))


def trust_store_path() -> Path:
    return config_dir() / "trust.json"


def untrusted_notice(cwd: str | os.PathLike[str]) -> str:
    """The one stderr line of print, json and rpc modes for an undecided folder (docs/permissions.md#deciding-trust)."""
    return (
        f"pi: project folder {canonical_path(cwd)} is not trusted; its .pi settings, extensions, skills "
        "and MCP servers were not loaded (pass -a to trust it for this run)"
    )


class TrustStore:
    """``trust.json``: canonical folder -> bool.

    Args:
        path: The file; default ``<config>/trust.json``.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else trust_store_path()

    def load(self, warnings: list[str] | None = None) -> dict[str, bool]:
        """The entries; an unreadable or invalid file adds one warning and reads as empty."""
        entries, problem = self._read()
        if problem is not None and warnings is not None:
            warnings.append(problem)
        return entries

    def lookup(self, folder: str | os.PathLike[str], warnings: list[str] | None = None) -> tuple[Path, bool] | None:
        """The entry for ``folder`` or its nearest ancestor: ``(entry path, trusted)``."""
        entries = self.load(warnings)
        if not entries:
            return None
        start = canonical_path(folder)
        for candidate in (start, *start.parents):
            value = entries.get(str(candidate))
            if value is not None:
                return candidate, value
        return None

    def set(self, folder: str | os.PathLike[str], value: bool | None, *, remove: Sequence[Path] = ()) -> None:
        """Save ``value`` for ``folder`` (None deletes its entry), dropping the ``remove`` entries.

        Raises:
            ConfigError: The existing file is invalid (it is left as it is), or cannot be written.
        """
        from pi_coder.paths import ensure_private_dir

        key = str(canonical_path(folder))
        try:
            ensure_private_dir(self.path.parent)
            with folder_lock(self.path.parent):
                entries, problem = self._read()
                if problem is not None:
                    raise ConfigError(f"{problem}; not saving the trust decision (fix or delete the file)")
                for path in remove:
                    entries.pop(str(canonical_path(path)), None)
                if value is None:
                    entries.pop(key, None)
                else:
                    entries[key] = value
                text = json.dumps(dict(sorted(entries.items())), indent=2, ensure_ascii=False) + "\n"
                write_atomic(self.path, text.encode("utf-8"))
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot save the trust decision ({exc.strerror or exc})") from None

    def _read(self) -> tuple[dict[str, bool], str | None]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}, None
        except (OSError, UnicodeDecodeError) as exc:
            return {}, f"{self.path}: cannot read ({getattr(exc, 'strerror', None) or exc}); treating no folder as trusted"
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return {}, f"{self.path}: invalid JSON ({exc}); treating no folder as trusted"
        if not isinstance(data, dict) or not all(isinstance(v, bool) for v in data.values()):
            return {}, f"{self.path}: expected an object of folder paths to true/false; treating no folder as trusted"
        return {str(k): v for k, v in data.items()}, None


def project_resources(cwd: str | os.PathLike[str]) -> list[str]:
    """What the folder would load and run once trusted, one line each (docs/permissions.md#project-controlled-resources, docs/permissions.md#trust-dialog).

    An empty list means the folder has nothing to decide about (a bare ``.pi/`` or
    ``.pi/sessions/`` does not count, nor a ``.pi/settings.toml`` with only harmless keys).
    """
    root = Path(cwd)
    pi = project_dir(root)
    lines: list[str] = []
    settings_line = _settings_line(pi / "settings.toml")
    if settings_line:
        lines.append(settings_line)
    for name, what in (("SYSTEM.md", "replaces the system prompt"), ("APPEND_SYSTEM.md", "extends the system prompt")):
        if (pi / name).is_file():
            lines.append(f".pi/{name}: {what}")
    lines.extend(_folder_line(pi / "prompts", ".pi/prompts", "template", (".md",)))
    lines.extend(_folder_line(pi / "themes", ".pi/themes", "theme", (".json",)))
    lines.extend(_listing_line(pi / "extensions", ".pi/extensions"))
    lines.extend(_mcp_line(root / ".mcp.json", ".mcp.json"))  # Claude Code's project file (docs/mcp.md#configuration)
    lines.extend(_mcp_line(pi / "mcp.json", ".pi/mcp.json"))
    lines.extend(_listing_line(pi / "skills", ".pi/skills"))
    for folder in _agents_skill_folders(root):
        lines.extend(_listing_line(folder, _shown(folder, root)))
    lines.extend(_listing_line(root / ".claude" / "skills", ".claude/skills"))
    lines.extend(_folder_line(pi / "agents", ".pi/agents", "agent", (".md",)))  # subagents (docs/subagents.md)
    lines.extend(_folder_line(root / ".claude" / "agents", ".claude/agents", "agent", (".md",)))
    for name in ("settings.json", "settings.local.json"):
        lines.extend(_claude_hooks_line(root / ".claude" / name))
    return lines


def decide_project_trust(
    cwd: str | os.PathLike[str],
    *,
    flag: bool | None = None,
    default: str = "ask",
    handlers: Sequence[TrustHandler] = (),
    warnings: list[str] | None = None,
) -> TrustDecision | None:
    """Decide trust for ``cwd`` without asking anyone (docs/permissions.md#deciding-trust steps 1-5).

    Args:
        cwd: The project folder.
        flag: True for ``-a``, False for ``-na``, None when neither was given.
        default: The global ``default_project_trust``: ``ask``, ``always`` or ``never``.
        handlers: ``project_trust`` handlers; the first True/False answer decides.
        warnings: Receives a line for an invalid ``trust.json`` or a failing handler.

    Returns:
        The decision (cached for the process), or None when the user must be asked.
    """
    folder = canonical_path(cwd)
    if flag is not None:
        return remember_decision(TrustDecision(trusted=flag, source="flag", path=folder))
    cached = _cache.get(folder)
    if cached is not None:
        return cached
    resources = project_resources(folder)
    if not resources:
        return remember_decision(TrustDecision(trusted=True, source="implicit", path=folder))
    store = TrustStore()
    for handler in handlers:
        vote = _ask_handler(handler, folder, resources, warnings)
        if vote is None:
            continue
        if vote.remember:
            try:
                store.set(folder, vote.trusted)
            except ConfigError as exc:
                _warn(warnings, str(exc))
        return remember_decision(TrustDecision(trusted=vote.trusted, source="extension", path=folder))
    saved = store.lookup(folder, warnings)
    if saved is not None:
        entry, value = saved
        return remember_decision(TrustDecision(trusted=value, source="saved", path=folder, saved_path=entry))
    if default in ("always", "never"):
        return remember_decision(TrustDecision(trusted=default == "always", source="default", path=folder))
    return None


def undecided(cwd: str | os.PathLike[str]) -> TrustDecision:
    """The decision for a folder nobody decided about (no dialog, or Esc): untrusted, nothing saved."""
    return remember_decision(TrustDecision(trusted=False, source="undecided", path=canonical_path(cwd)))


def apply_trust_choice(
    cwd: str | os.PathLike[str], choice: TrustChoice | None, warnings: list[str] | None = None
) -> TrustDecision:
    """Carry out a dialog answer: save it (unless it is for this session only) and return the decision.

    ``trust_parent`` saves the parent folder as trusted and removes the folder's own entry. A save
    that fails (invalid ``trust.json``) adds a warning; the answer still applies to this run.
    """
    folder = canonical_path(cwd)
    if choice is None:
        return undecided(folder)
    if choice not in get_args(TrustChoice):
        raise ValueError(f"unknown trust choice: {choice!r}")
    trusted = choice.startswith("trust")
    if choice in ("trust_session", "distrust_session"):
        return remember_decision(TrustDecision(trusted=trusted, source="session", path=folder))
    entry = folder.parent if choice == "trust_parent" else folder
    decision = TrustDecision(trusted=trusted, source="saved", path=folder, saved_path=entry)
    try:
        TrustStore().set(entry, trusted, remove=[folder] if entry != folder else [])
    except ConfigError as exc:
        _warn(warnings, str(exc))
        decision = TrustDecision(trusted=trusted, source="session", path=folder)
    return remember_decision(decision)


def remember_decision(decision: TrustDecision) -> TrustDecision:
    """Cache ``decision`` for its folder for the rest of the process; returns it."""
    _cache[decision.path] = decision
    return decision


def clear_trust_cache() -> None:
    """Forget the cached decisions (tests, and a future ``/reload``)."""
    _cache.clear()


# -- helpers -------------------------------------------------------------------------------


def _warn(warnings: list[str] | None, text: str) -> None:
    if warnings is not None and text not in warnings:
        warnings.append(text)


def _ask_handler(
    handler: TrustHandler, folder: Path, resources: Sequence[str], warnings: list[str] | None
) -> TrustVote | None:
    try:
        answer = handler(folder, list(resources))
    except Exception as exc:  # an extension's bug must not decide anything
        _warn(warnings, f"project_trust handler failed: {type(exc).__name__}: {exc}")
        return None
    if isinstance(answer, bool):
        return TrustVote(trusted=answer)
    return answer if isinstance(answer, TrustVote) else None


def _settings_line(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    import tomllib

    from pi_coder.settings import gated_project_keys

    try:
        keys = gated_project_keys(tomllib.loads(text))
    except tomllib.TOMLDecodeError:
        return None  # an invalid file applies nothing (load_settings warns about it)
    return f".pi/settings.toml: sets {', '.join(keys)}" if keys else None


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted((e for e in it if not e.name.startswith(".")), key=lambda e: e.name)
    except OSError:
        return []


def _folder_line(folder: Path, shown: str, noun: str, suffixes: tuple[str, ...]) -> list[str]:
    count = sum(1 for e in _entries(folder) if e.name.endswith(suffixes) and _is_file(e))
    if not count:
        return []
    return [f"{shown}: {count} {noun}{'' if count == 1 else 's'}"]


def _listing_line(folder: Path, shown: str, limit: int = 5) -> list[str]:
    names = [e.name + ("/" if _is_dir(e) else "") for e in _entries(folder)]
    if not names:
        return []
    more = f", and {len(names) - limit} more" if len(names) > limit else ""
    return [f"{shown}: {', '.join(names[:limit])}{more}"]


def _mcp_line(path: Path, shown: str) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return [f"{shown}: present (not valid JSON)"]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return [f"{shown}: present"]
    count = len(servers)
    parts = []
    for name in sorted(map(str, servers)):
        parts.append(name + _mcp_runs(servers[name]))
    return [f"{shown}: {count} server{'' if count == 1 else 's'} ({', '.join(parts)})"]


def _mcp_runs(entry: object) -> str:
    """What a ``.pi/mcp.json`` entry would run: `` (stdio: uvx mcp-server-git)``, `` (http: <url>)``, ``!cmd`` values."""
    if not isinstance(entry, dict):
        return ""
    shown: list[str] = []
    command = entry.get("command")
    if isinstance(command, str):
        raw_args = entry.get("args")
        args: list[object] = raw_args if isinstance(raw_args, list) else []
        shown.append("stdio: " + " ".join([command, *map(str, args)]))
    elif isinstance(entry.get("url"), str):
        shown.append(f"http: {entry['url']}")
    for key in ("env", "headers"):
        values = entry.get(key)
        if isinstance(values, dict):
            shown.extend(f"runs {v[1:]}" for v in values.values() if isinstance(v, str) and v.startswith("!"))
    return f" ({'; '.join(shown)})" if shown else ""


def _claude_hooks_line(path: Path) -> list[str]:
    """``.claude/settings.json: hooks PreToolUse, Stop (runs ./guard.sh, ...)``: Claude Code hooks it would run."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return []
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict) or not hooks:
        return []
    commands: list[str] = []
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else ():
            for hook in group.get("hooks") or () if isinstance(group, dict) else ():
                command = hook.get("command") if isinstance(hook, dict) else None
                if isinstance(command, str) and command.strip() and command.strip() not in commands:
                    commands.append(command.strip())
    shown = ", ".join(c if len(c) <= 40 else c[:39] + "…" for c in commands[:3])
    more = ", ..." if len(commands) > 3 else ""
    return [f".claude/{path.name}: hooks {', '.join(map(str, hooks))}" + (f" (runs {shown}{more})" if shown else "")]


def _agents_skill_folders(root: Path) -> list[Path]:
    home = canonical_path(Path.home())
    found: list[Path] = []
    for folder in (root, *root.parents):
        if folder == home:
            continue  # ~/.agents/skills is the user's own, not the project's
        candidate = folder / ".agents" / "skills"
        if candidate.is_dir():
            found.append(candidate)
    return found


def _shown(folder: Path, root: Path) -> str:
    try:
        return str(folder.relative_to(root))
    except ValueError:
        return str(folder)


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
