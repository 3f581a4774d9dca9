"""API keys given with ``/login`` (or ``pi auth``): ``<config dir>/credentials.json``.

The file maps provider ids to keys, ``{"anthropic": "sk-..."}``. It is private (mode 0600,
written atomically) and is the only place pi stores a key: never settings, logs or sessions.
Resolution order for a provider's key (``Models.get_api_key``): ``--api-key``, the provider's
environment variable, this file, then ``api_key`` in models.toml.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

__all__ = ["credentials_path", "load_credentials", "remove_credential", "save_credential"]


def credentials_path() -> Path:
    """``<config dir>/credentials.json`` (``$PI_CODER_HOME/credentials.json`` when set)."""
    from pi_coder.paths import config_dir

    return config_dir() / "credentials.json"


def load_credentials(path: Path | None = None) -> dict[str, str]:
    """Provider id (lower case) -> key; empty when the file is missing or unreadable."""
    path = credentials_path() if path is None else path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k).lower(): v for k, v in data.items() if isinstance(v, str) and v}


def _write(data: dict[str, str], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".credentials-", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save_credential(provider: str, key: str, path: Path | None = None) -> Path:
    """Store ``key`` for ``provider`` (replacing any earlier one); returns the file's path."""
    path = credentials_path() if path is None else path
    key = key.strip()
    if not key:
        raise ValueError("empty key")
    data = load_credentials(path)
    data[provider.lower()] = key
    _write(data, path)
    return path


def remove_credential(provider: str, path: Path | None = None) -> bool:
    """Forget ``provider``'s stored key; False when none was stored."""
    path = credentials_path() if path is None else path
    data = load_credentials(path)
    if data.pop(provider.lower(), None) is None:
        return False
    _write(data, path)
    return True
