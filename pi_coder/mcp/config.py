"""``mcp.json`` files (docs/mcp.md#configuration): Pi's ``mcpServers`` shape, validated, merged, edited.

``load_servers(cwd, project_trusted=...)`` reads ``<config>/mcp.json`` and, for a trusted folder,
Claude Code's ``.mcp.json`` at its root, then ``.pi/mcp.json``; a project entry replaces an earlier one of the same name, and one without
``command``/``url``/``type`` overrides only ``enabled``, ``exposure`` and ``toolExposure``. Invalid
entries become one error line each and are skipped. ``${VAR}``, ``$VAR``, ``${VAR:-default}`` and
``!command`` values of ``env`` and ``headers`` are expanded only by :meth:`ServerConfig.resolved_env` / ``resolved_headers``
(called by the connecting task, never while listing the configuration).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pi_coder.mcp.auth_store import OAuthOptions
__all__ = [
    "ConfigResult",
    "ServerConfig",
    "UnsetVariable",
    "expand_value",
    "global_config_path",
    "ignored_note",
    "load_servers",
    "no_servers_text",
    "project_config_path",
    "project_config_paths",
    "remove_server",
    "write_server",
]

NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
DEFAULT_TIMEOUT = 60.0
Exposure = Literal["direct", "hidden", "deferred"]
_EXPOSURES = ("direct", "hidden", "deferred", "codemode")
_OVERRIDE_KEYS = ("enabled", "exposure", "toolExposure")


@dataclass(slots=True, kw_only=True)
class ServerConfig:
    """One validated server entry."""

    name: str
    transport: Literal["stdio", "http"]
    source: Literal["global", "project", "extension"]
    path: Path
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT
    description: str | None = None
    exposure: str = "direct"
    tool_exposure: dict[str, str] = field(default_factory=dict)
    oauth: OAuthOptions | None = None
    """An HTTP entry's ``oauth`` object (docs/mcp.md#oauth-sign-in)."""

    def key(self, session_cwd: str) -> tuple[Any, ...]:
        """What identifies one connection (name, the configuration, cwd): equal keys share it."""
        return (
            self.name,
            self.transport,
            self.command,
            tuple(self.args),
            tuple(sorted(self.env.items())),
            self.cwd,
            self.url,
            tuple(sorted(self.headers.items())),
            self.timeout,
            self.oauth,
            session_cwd,
        )

    def describe(self) -> str:
        """``stdio: uvx mcp-server-git`` or ``http: <url>``."""
        if self.transport == "stdio":
            return "stdio: " + " ".join([self.command or "", *self.args]).strip()
        return f"http: {self.url}"

    def working_dir(self, session_cwd: str) -> str:
        if not self.cwd:
            return session_cwd
        return os.path.join(session_cwd, os.path.expanduser(self.cwd))

    def resolved_env(self) -> dict[str, str]:
        """``env`` expanded; an unset variable fails the server (``ValueError`` naming key and variable)."""
        return _expanded(self.env, "env")

    def resolved_headers(self) -> dict[str, str]:
        """``headers`` expanded, as :meth:`resolved_env`."""
        return _expanded(self.headers, "header")

    def may_be_direct(self) -> bool:
        """Whether any of the server's tools can be ``direct`` (the first prompt waits only for those)."""
        values = [self.exposure, *self.tool_exposure.values()]
        return any(_resolve(v) == "direct" for v in values)

    def may_defer(self) -> bool:
        """Whether any of the server's tools can be ``deferred`` (``tool_search`` is then active)."""
        values = [self.exposure, *self.tool_exposure.values()]
        return any(_resolve(v) == "deferred" for v in values)

    def exposure_of(self, tool: str) -> str:
        """The exposure of one tool: ``toolExposure`` by exact name, then its first matching ``*`` pattern."""
        if tool in self.tool_exposure:
            value = self.tool_exposure[tool]
        else:
            value = self.exposure
            for pattern, exposure in self.tool_exposure.items():
                if "*" in pattern and re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), tool):
                    value = exposure
                    break
        return _resolve(value)


def _expanded(values: dict[str, str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in values.items():
        try:
            out[key] = expand_value(value)
        except UnsetVariable as exc:
            raise ValueError(f'{what} "{key}": {exc} (set it, or write ${{{exc.name}:-default}})') from None
    return out


def _resolve(value: str) -> str:
    """``codemode`` (Pi's default, which needs a script sandbox) reads as ``deferred`` (``tool_search``)."""
    return "deferred" if value == "codemode" else value


@dataclass(slots=True)
class ConfigResult:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    ignored_project: Path | None = None
    """An untrusted project file that was not read (``.pi/mcp.json`` if it exists, else ``.mcp.json``)."""
    ignored: list[Path] = field(default_factory=list)
    """Every untrusted project file that was not read (``.mcp.json``, ``.pi/mcp.json``)."""


_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


class UnsetVariable(LookupError):
    """A ``${VAR}`` or ``$VAR`` without a default names a variable that is not set."""

    def __init__(self, name: str) -> None:
        super().__init__(f"environment variable {name} is not set")
        self.name = name


def _variable(match: re.Match[str]) -> str:
    name = match.group(1) or match.group(3)
    value = os.environ.get(name)
    if match.group(2) is not None:  # ${NAME:-default}: the default when unset or empty
        return value or match.group(2)
    if value is None:
        raise UnsetVariable(name)
    return value


def expand_value(value: str) -> str:
    """``!command`` -> its stripped stdout; otherwise ``${VAR}``, ``$VAR`` and ``${VAR:-default}``
    replaced from the environment. An unset variable without a default raises :class:`UnsetVariable`;
    a ``$`` not followed by a name stays as it is."""
    if value.startswith("!"):
        import subprocess

        try:
            done = subprocess.run(value[1:], shell=True, capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            return ""
        return done.stdout.strip()
    return _VAR_RE.sub(_variable, value)


def ignored_note(path: Path) -> str:
    """The ``/mcp`` line for a project file an untrusted folder's session did not read."""
    return f"note: {path} was ignored: this folder is not trusted (/trust to change)"


def no_servers_text(cwd: str, *, trusted: bool) -> str:
    """``/mcp`` without any server: where servers are configured, and a project file left unread."""
    text = "No MCP servers configured (mcp.json in the configuration folder; see pi mcp --help)."
    if not trusted:
        text += "".join("\n" + ignored_note(p) for p in project_config_paths(cwd) if p.is_file())
    return text


def global_config_path() -> Path:
    from pi_coder.paths import config_dir

    return config_dir() / "mcp.json"


def project_config_path(cwd: str) -> Path:
    """pi's own project file, ``.pi/mcp.json`` (``pi mcp add -l`` writes it)."""
    return Path(cwd) / ".pi" / "mcp.json"


def project_config_paths(cwd: str) -> list[Path]:
    """The project files in the order they are read (a later one's entries win): Claude Code's
    ``.mcp.json`` at the folder's root, then ``.pi/mcp.json``."""
    return [Path(cwd) / ".mcp.json", project_config_path(cwd)]


def _read(path: Path, errors: list[str]) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(f"{path}: cannot read: {exc}")
        return None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        errors.append(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno})")
        return None
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        errors.append(f'{path}: "mcpServers" must be an object')
        return None
    return servers


def _str_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{what} must be an object of strings")
    return {str(k): v for k, v in value.items()}


def _common(entry: dict[str, Any], out: dict[str, Any]) -> None:
    if "enabled" in entry:
        if not isinstance(entry["enabled"], bool):
            raise ValueError("enabled must be true or false")
        out["enabled"] = entry["enabled"]
    if "exposure" in entry:
        if entry["exposure"] not in _EXPOSURES:
            raise ValueError(f"exposure must be one of {', '.join(_EXPOSURES)}")
        out["exposure"] = entry["exposure"]
    if "toolExposure" in entry:
        tools = _str_map(entry["toolExposure"], "toolExposure")
        bad = [v for v in tools.values() if v not in _EXPOSURES]
        if bad:
            raise ValueError(f"toolExposure values must be one of {', '.join(_EXPOSURES)}")
        out["tool_exposure"] = tools


def parse_entry(
    name: str, entry: Any, source: Literal["global", "project", "extension"], path: Path
) -> ServerConfig | dict[str, Any]:
    """A full entry as a ServerConfig, or an override-only entry as a dict of fields.

    Raises:
        ValueError: The entry is invalid (the message names what is wrong).
    """
    if not NAME_RE.match(name):
        raise ValueError("names may only use letters, digits, - and _")
    if not isinstance(entry, dict):
        raise ValueError("an entry must be an object")
    fields: dict[str, Any] = {}
    _common(entry, fields)
    kind = entry.get("type")
    if kind is None and "command" not in entry and "url" not in entry:
        return fields
    if kind == "sse":
        raise ValueError("SSE transport is not supported, give its streamable HTTP URL")
    if kind not in (None, "stdio", "http", "streamable-http"):
        raise ValueError(f'unknown type "{kind}" (stdio, http or streamable-http)')
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ValueError("timeout must be a positive number of seconds")
    description = entry.get("description")
    if description is not None and not isinstance(description, str):
        raise ValueError("description must be a string")
    stdio = kind == "stdio" or (kind is None and "command" in entry)
    if stdio:
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ValueError("a stdio server needs a command")
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("args must be a list of strings")
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ValueError("cwd must be a string")
        return ServerConfig(
            name=name, transport="stdio", source=source, path=path, command=command, args=list(args),
            env=_str_map(entry.get("env"), "env"), cwd=cwd, timeout=float(timeout), description=description,
            **fields,
        )
    url = entry.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError("an HTTP server needs a url starting http:// or https://")
    from pi_coder.mcp.auth_store import parse_oauth

    return ServerConfig(
        name=name, transport="http", source=source, path=path, url=url,
        headers=_str_map(entry.get("headers"), "headers"), timeout=float(timeout), description=description,
        oauth=parse_oauth(entry.get("oauth")), **fields,
    )


def _canonical(name: str) -> str:
    return name.replace("-", "_").lower()


def load_servers(cwd: str, *, project_trusted: bool, global_path: Path | None = None) -> ConfigResult:
    """The servers of the global file and, if ``project_trusted``, the project's (see the module docstring)."""
    result = ConfigResult()
    sources: list[tuple[Literal["global", "project"], Path]] = [("global", global_path or global_config_path())]
    for project in project_config_paths(cwd):
        if project_trusted:
            sources.append(("project", project))
        elif project.is_file():
            result.ignored.append(project)
    if result.ignored:
        result.ignored_project = result.ignored[-1]
    for source, path in sources:
        entries = _read(path, result.errors)
        if not entries:
            continue
        seen: dict[str, str] = {}
        for name, entry in entries.items():
            try:
                parsed = parse_entry(str(name), entry, source, path)
                other = seen.get(_canonical(name))
                if other is not None:
                    raise ValueError(f'conflicts with server "{other}" (names equal up to - and _)')
                seen[_canonical(name)] = name
            except ValueError as exc:
                result.errors.append(f'server "{name}" ({path}): {exc}')
                continue
            if isinstance(parsed, ServerConfig):
                result.servers.pop(next((n for n in result.servers if _canonical(n) == _canonical(name)), name), None)
                result.servers[name] = parsed
            elif name in result.servers:
                base = result.servers[name]
                for key, value in parsed.items():
                    setattr(base, key, value)
            else:
                result.errors.append(f'server "{name}" ({path}): needs a command or a url')
    return result


def _load_raw(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"mcpServers": {}}
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    data.setdefault("mcpServers", {})
    if not isinstance(data["mcpServers"], dict):
        raise ValueError(f'{path}: "mcpServers" must be an object')
    return data


def _write_raw(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_server(path: Path, name: str, entry: dict[str, Any]) -> bool:
    """Add or replace ``name`` in the file at ``path``; True when it replaced one.

    Raises:
        ValueError: The entry is invalid or the file is not a JSON object.
    """
    parse_entry(name, entry, "global", path)  # validate
    data = _load_raw(path)
    replaced = name in data["mcpServers"]
    data["mcpServers"][name] = entry
    _write_raw(path, data)
    return replaced


def set_enabled(path: Path, name: str, enabled: bool) -> None:
    data = _load_raw(path)
    entry = data["mcpServers"].setdefault(name, {})
    entry["enabled"] = enabled
    _write_raw(path, data)


def set_exposure(path: Path, name: str, exposure: str) -> None:
    """Save ``exposure`` for ``name`` in the file at ``path`` (the rest of the entry is kept).

    Raises:
        ValueError: Not one of the exposures.
    """
    if exposure not in _EXPOSURES:
        raise ValueError(f"exposure must be one of {', '.join(_EXPOSURES)}")
    data = _load_raw(path)
    data["mcpServers"].setdefault(name, {})["exposure"] = exposure
    _write_raw(path, data)


def remove_server(path: Path, name: str) -> bool:
    """Remove ``name`` from the file at ``path``; False when it was not there."""
    if not path.is_file():
        return False
    data = _load_raw(path)
    if name not in data["mcpServers"]:
        return False
    del data["mcpServers"][name]
    _write_raw(path, data)
    return True
