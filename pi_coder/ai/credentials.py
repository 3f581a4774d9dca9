"""Stored API keys: ``<config dir>/credentials.json`` (``$PI_CODER_HOME/credentials.json``).

Written by ``pi auth login`` and the TUI's ``/login``; read when a provider's key is looked up
(after ``--api-key`` and the environment variable, before models.toml). The file has Pi's
``auth.json`` shape, so an API-key entry copied from Pi works here::

    {"anthropic": {"type": "api_key", "key": "sk-ant-..."}}

The file is private: created with mode 0600 and replaced atomically (a temporary file in the
same folder, fsynced, then renamed), so a crash never leaves half a file and another reader
never sees one. Entries of other types (Pi's OAuth tokens) are kept untouched on rewrite.
Keys never appear in messages or exceptions raised here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pi_coder.errors import ConfigError

__all__ = [
    "credentials_path",
    "load_credentials",
    "remove_credential",
    "save_credential",
]

FILE_NAME = "credentials.json"


def credentials_path(env: dict[str, str] | None = None) -> Path:
    """Where the credentials file lives (it need not exist)."""
    source = os.environ if env is None else env
    home = source.get("PI_CODER_HOME")
    if home:
        return Path(home).expanduser() / FILE_NAME
    from pi_coder.paths import config_dir

    return config_dir() / FILE_NAME


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except PermissionError:
        raise ConfigError(f"Cannot read {path}: Permission denied (fix its permissions, e.g. chmod 600 it)") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; fix or delete it") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror or exc}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); fix or delete it") from None
    except ValueError:
        raise ConfigError(f"{path} is not valid JSON; fix or delete it") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f'{path} holds {_json_kind(data)}, not an object of providers ({{"anthropic": {{"type": "api_key", '
            f'"key": "..."}}}}); fix or delete it'
        )
    return data


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "a JSON list"
    if isinstance(value, str):
        return "a JSON string"
    if isinstance(value, bool):
        return "a JSON boolean"
    if value is None:
        return "JSON null"
    return "a JSON number"


def load_credentials(path: Path | None = None) -> dict[str, str]:
    """The stored API keys, ``{provider: key}`` (empty when the file does not exist).

    Raises:
        ConfigError: The file exists but cannot be read or is not a JSON object.
    """
    data = _read(path or credentials_path())
    keys: dict[str, str] = {}
    for provider, entry in data.items():
        if isinstance(entry, dict) and entry.get("type", "api_key") == "api_key":
            key = entry.get("key")
            if isinstance(key, str) and key.strip():
                keys[provider.lower()] = key.strip()
        elif isinstance(entry, str) and entry.strip():
            keys[provider.lower()] = entry.strip()
    return keys


def _write(path: Path, data: dict[str, Any]) -> None:
    from pi_coder.paths import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"), mode=0o600)


def save_credential(provider: str, key: str, path: Path | None = None) -> Path:
    """Store ``key`` for ``provider`` (replacing any stored one) and return the file's path.

    Raises:
        ValueError: ``key`` is empty or holds a line break or control character.
        ConfigError: The existing file cannot be read.
    """
    key = key.strip()
    if not key or any(ch < " " or ch == "\x7f" for ch in key):
        raise ValueError("An API key must be one line of printable characters")
    target = path or credentials_path()
    data = _read(target)
    data[provider.lower()] = {"type": "api_key", "key": key}
    _write(target, data)
    return target


def remove_credential(provider: str, path: Path | None = None) -> bool:
    """Forget ``provider``'s stored credential; True when there was one."""
    target = path or credentials_path()
    data = _read(target)
    name = provider.lower()
    found = [k for k in data if k.lower() == name]
    if not found:
        return False
    for k in found:
        del data[k]
    _write(target, data)
    return True
