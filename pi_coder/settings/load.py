"""Loading user settings: reading, checking and merging the two scopes into ``LoadedSettings``.

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

``LoadedSettings`` also applies writes (``write.py``) to the settings in memory. Nothing here
does I/O at import time; tomllib is imported on use.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pi_coder.paths import config_dir, project_dir
from pi_coder.settings.schema import PROJECT_SAFE_KEYS, Settings
from pi_coder.settings.write import key_str, write_settings_file

__all__ = [
    "LoadedSettings",
    "gated_project_keys",
    "global_settings_path",
    "load_settings",
    "project_settings_path",
    "save_global_setting",
    "update_global_settings",
]

# Resource lists whose relative entries are resolved against the folder of the settings file.
_RESOURCE_KEYS = ("skills", "prompts", "themes")

_GLOBAL_ONLY_KEYS = ("default_project_trust",)


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
        self.update_global_settings({key_str(key_path): value})

    def reload(self, *, project_trusted: bool = True) -> None:
        """Re-read both files (``/reload``), updating ``settings`` in place."""
        fresh = load_settings(self.cwd, project_trusted=project_trusted)
        self.global_data, self.project_data = fresh.global_data, fresh.project_data
        self.warnings, self.unknown_keys = fresh.warnings, fresh.unknown_keys
        for name in type(self.settings).model_fields:
            setattr(self.settings, name, getattr(fresh.settings, name))

    def update_global_settings(self, updates: Mapping[str, Any]) -> None:
        """Write several keys (dotted paths) at once; see ``save_global_setting``."""
        data, text = write_settings_file(self.global_path, updates)
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
    update_global_settings({key_str(key_path): value}, settings)


def update_global_settings(updates: Mapping[str, Any], settings: LoadedSettings | None = None) -> None:
    """Write several dotted keys to the global settings.toml at once; see ``save_global_setting``."""
    if settings is not None:
        settings.update_global_settings(updates)
    else:
        write_settings_file(global_settings_path(), updates)


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
