"""Writing user settings: dotted keys into a settings.toml, comments and layout kept.

Writes go through tomlkit (imported on use) and replace the file atomically under a lock on
its folder; a value the ``Settings`` model rejects is refused before anything is written.
``LoadedSettings`` (``load.py``) applies the same writes to the settings in memory.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pi_coder.errors import ConfigError
from pi_coder.settings.schema import Settings

__all__ = ["folder_lock", "key_str", "update_settings_file", "write_settings_file"]


def update_settings_file(path: Path, updates: Mapping[str, Any]) -> None:
    """Write dotted keys to the settings file at ``path`` (global or a project's), as
    ``update_global_settings`` does: layout and comments kept, replaced atomically.

    Raises:
        ConfigError: Invalid value for a key, or the existing file does not parse.
    """
    write_settings_file(path, updates)


def key_str(key_path: str | Sequence[str]) -> str:
    return key_path if isinstance(key_path, str) else ".".join(key_path)


def _to_plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_none=True)
    if isinstance(value, tuple):
        return list(value)
    return value


def write_settings_file(path: Path, updates: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
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
