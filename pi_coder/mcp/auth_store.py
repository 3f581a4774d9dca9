"""``mcp-auth.json`` (docs/mcp.md#oauth-sign-in): OAuth clients and tokens of MCP servers, and the ``oauth`` entry.

The file lives in the configuration folder, mode 0600, written atomically. One record per server
name and URL (``"<name> <url>"``): the registered client, the tokens with the time to refresh them,
and the token endpoint and resource a refresh needs. Nothing here imports the SDK; the values are
the JSON forms the SDK's models dump. Token values never leave this file and the requests that
carry them (no log line, notice or session entry names them).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["FILE_NAME", "OAuthOptions", "auth_path", "delete", "load", "expired", "expires_at", "parse_oauth", "save", "signed_in"]

FILE_NAME = "mcp-auth.json"


def auth_path() -> Path:
    from pi_coder.paths import config_dir

    return config_dir() / FILE_NAME


def _key(name: str, url: str) -> str:
    return f"{name} {url}"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return {}  # unreadable or broken: treated as no sign-in; the next save rewrites it
    return data if isinstance(data, dict) else {}


def load(name: str, url: str, path: Path | None = None) -> dict[str, Any] | None:
    """The record of server ``name`` at ``url``, or None."""
    record = _read(path or auth_path()).get(_key(name, url))
    return record if isinstance(record, dict) else None


def save(name: str, url: str, record: dict[str, Any], path: Path | None = None) -> None:
    """Replace the record of ``name`` at ``url`` (the file is created 0600)."""
    from pi_coder.paths import ensure_private_dir, write_atomic

    target = path or auth_path()
    ensure_private_dir(target.parent)
    data = _read(target)
    data[_key(name, url)] = record
    write_atomic(target, (json.dumps(data, indent=2) + "\n").encode("utf-8"), mode=0o600)


def delete(name: str, url: str, path: Path | None = None) -> bool:
    """Forget the client and tokens of ``name`` at ``url``; False when there were none."""
    from pi_coder.paths import write_atomic

    target = path or auth_path()
    data = _read(target)
    if data.pop(_key(name, url), None) is None:
        return False
    write_atomic(target, (json.dumps(data, indent=2) + "\n").encode("utf-8"), mode=0o600)
    return True


def signed_in(name: str, url: str) -> bool:
    """Whether tokens are stored for ``name`` at ``url``."""
    record = load(name, url)
    return bool(record and isinstance(record.get("tokens"), dict) and record["tokens"].get("access_token"))


def expires_at(received: float, expires_in: float) -> float:
    """When to treat a token received at ``received`` as expired: a tenth of its life early, at most 30 s."""
    return received + expires_in - min(30.0, expires_in / 10)


def expired(record: dict[str, Any]) -> bool:
    """Whether the stored access token is (about to be) expired; without an expiry, never."""
    when = record.get("expires_at")
    return isinstance(when, int | float) and time.time() >= when


@dataclass(slots=True, frozen=True)
class OAuthOptions:
    """An HTTP entry's ``oauth`` object (all optional)."""

    client_id: str | None = None
    client_secret: str | None = None
    """May use ``${VAR}`` or ``!command`` (expanded at sign-in, never stored in the file)."""
    callback_port: int | None = None
    client_name: str | None = None


_FIELDS = {"clientId": "client_id", "clientSecret": "client_secret", "clientName": "client_name"}


def parse_oauth(value: Any) -> OAuthOptions | None:
    """Validate an entry's ``oauth`` object.

    Raises:
        ValueError: Not an object, an unknown key, or a value of the wrong type.
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("oauth must be an object")
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "callbackPort":
            if isinstance(item, bool) or not isinstance(item, int) or not 0 < item < 65536:
                raise ValueError("oauth.callbackPort must be a port number")
            out["callback_port"] = item
        elif key in _FIELDS:
            if not isinstance(item, str) or not item:
                raise ValueError(f"oauth.{key} must be a non-empty string")
            out[_FIELDS[key]] = item
        else:
            raise ValueError(f'unknown oauth key "{key}" (clientId, clientSecret, callbackPort, clientName)')
    return OAuthOptions(**out)

