"""``pi mcp list|add|remove`` (docs/mcp.md#commands): the servers of ``mcp.json``, outside a session.

``list`` connects the enabled servers in parallel and prints one block each; it reads the
project's ``.pi/mcp.json`` only for a folder with saved trust or with ``-a``. ``add`` and
``remove`` edit ``<config>/mcp.json`` (``-l``: ``.pi/mcp.json``) and connect nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

__all__ = ["run_mcp_command"]

USAGE = """\
Usage:
  pi mcp list [--json] [-a]
  pi mcp add <name> [-l] [--env K=V]... [--cwd D] [--exposure E] [--description T] -- <command> [args...]
  pi mcp add <name> [-l] --url URL [--header K=V]... [--bearer-token-env-var NAME] [--exposure E]
             [--oauth-client-id ID] [--oauth-client-secret S] [--oauth-callback-port P] [--oauth-client-name N]
  pi mcp remove <name> [-l]
  pi mcp login <name> [-l] [-a] [--timeout SECONDS] [--no-browser]
  pi mcp logout <name> [-l] [-a]

Servers live in mcp.json in the configuration folder (-l: .pi/mcp.json of this folder), in the
"mcpServers" shape other agents use; env and header values expand ${VAR} and !command.
login signs in to an HTTP server with OAuth (tokens in mcp-auth.json); logout forgets them."""


OAUTH_FLAGS = {
    "--oauth-client-id": "clientId",
    "--oauth-client-secret": "clientSecret",
    "--oauth-callback-port": "callbackPort",
    "--oauth-client-name": "clientName",
}
"""``pi mcp add --url`` options that write the entry's ``oauth`` object (docs/mcp.md#oauth-sign-in)."""


def _err(text: str) -> int:
    print(f"pi mcp: {text}", file=sys.stderr)
    return 1


def run_mcp_command(args: list[str]) -> int:
    """Run ``pi mcp <args>``; the exit code."""
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if args else 1
    command, rest = args[0], args[1:]
    if command == "list":
        return _list(rest)
    if command == "add":
        return _add(rest)
    if command in ("remove", "rm"):
        return _remove(rest)
    if command in ("login", "logout"):
        from pi_coder.modes.mcp_login import run_login, run_logout

        return (run_login if command == "login" else run_logout)(rest)
    return _err(f'unknown command "{command}"\n{USAGE}')


def _path(local: bool) -> Path:
    from pi_coder.mcp.config import global_config_path, project_config_path

    return project_config_path(os.getcwd()) if local else global_config_path()


def _pairs(values: list[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key:
            raise ValueError(f"{what} takes KEY=VALUE, not {value!r}")
        out[key] = text
    return out


def _add(args: list[str]) -> int:
    from pi_coder.mcp.config import write_server

    command: list[str] = []
    if "--" in args:
        index = args.index("--")
        args, command = args[:index], args[index + 1 :]
    name: str | None = None
    local = False
    envs: list[str] = []
    headers: list[str] = []
    entry: dict[str, object] = {}
    i = 0
    valued = {"--env", "--cwd", "--exposure", "--description", "--url", "--header", "--bearer-token-env-var", *OAUTH_FLAGS}
    oauth: dict[str, object] = {}
    while i < len(args):
        arg = args[i]
        if arg in ("-l", "--local"):
            local = True
        elif arg in valued:
            if i + 1 >= len(args):
                return _err(f"{arg} needs a value")
            value = args[i + 1]
            i += 1
            if arg == "--env":
                envs.append(value)
            elif arg == "--header":
                headers.append(value)
            elif arg == "--bearer-token-env-var":
                headers.append(f"Authorization=Bearer ${{{value}}}")
            elif arg in OAUTH_FLAGS:
                oauth[OAUTH_FLAGS[arg]] = int(value) if arg == "--oauth-callback-port" and value.isdigit() else value
            else:
                entry[arg[2:]] = value
        elif arg.startswith("-"):
            return _err(f"unknown option {arg}\n{USAGE}")
        elif name is None:
            name = arg
        else:
            return _err(f"unexpected argument {arg!r} (put the server command after --)")
        i += 1
    if name is None:
        return _err(f"add needs a name\n{USAGE}")
    try:
        if command:
            if "url" in entry:
                raise ValueError("give either a command after -- or --url, not both")
            if oauth:
                raise ValueError("the --oauth-* options are for servers with --url")
            entry = {"command": command[0], "args": command[1:], **entry}
            if envs:
                entry["env"] = _pairs(envs, "--env")
        elif "url" in entry:
            entry = {"url": entry.pop("url"), **entry}
            if headers:
                entry["headers"] = _pairs(headers, "--header")
            if oauth:
                entry["oauth"] = oauth
        else:
            raise ValueError("give the server command after -- or an --url")
        path = _path(local)
        replaced = write_server(path, name, entry)
    except (ValueError, OSError) as exc:
        return _err(f'server "{name}": {exc}')
    scope = "project" if local else "global"
    print(f'{"Replaced" if replaced else "Added"} {scope} MCP server "{name}" in {path}.')
    return 0


def _remove(args: list[str]) -> int:
    from pi_coder.mcp.config import remove_server

    local = any(a in ("-l", "--local") for a in args)
    names = [a for a in args if not a.startswith("-")]
    if len(names) != 1:
        return _err(f"remove needs one name\n{USAGE}")
    path = _path(local)
    try:
        removed = remove_server(path, names[0])
    except (ValueError, OSError) as exc:
        return _err(str(exc))
    if not removed:
        return _err(f'no MCP server "{names[0]}" in {path}')
    print(f'Removed {"project" if local else "global"} MCP server "{names[0]}" from {path}.')
    return 0


def _trusted(cwd: str, approve: bool) -> bool:
    if approve:
        return True
    from pi_coder.permissions.trust import TrustStore

    found = TrustStore().lookup(cwd)
    return bool(found and found[1])


def _list(args: list[str]) -> int:
    from pi_coder.mcp.config import load_servers
    from pi_coder.mcp.manager import McpManager

    as_json = "--json" in args
    cwd = os.getcwd()
    config = load_servers(cwd, project_trusted=_trusted(cwd, "-a" in args or "--approve" in args))
    manager = McpManager(config, cwd)
    notices: list[str] = []
    manager.attach(None, lambda _level, text: notices.append(text))

    async def connect() -> None:
        manager.start()
        await manager.wait_connecting(max((s.timeout for s in config.servers.values()), default=1) + 1)
        await manager.close()

    asyncio.run(connect())
    failed = any(s.state in ("failed", "needs sign-in") for s in manager.servers.values())
    if as_json:
        data = {
            "servers": [
                {
                    "name": s.name,
                    "state": s.state,
                    "source": s.config.source,
                    "exposure": s.config.exposure,
                    "transport": s.config.transport,
                    "target": s.config.describe(),
                    "tools": [t.get("name") for t in s.tools],
                    "error": s.error,
                }
                for s in manager.servers.values()
            ],
            "errors": config.errors,
            "ignoredProjectConfig": str(config.ignored_project) if config.ignored_project else None,
        }
        print(json.dumps(data, indent=2))
    else:
        for server in manager.servers.values():
            cfg = server.config
            print(f"{server.name}: {server.status()} ({cfg.exposure}, {cfg.source})")
            print(f"  {cfg.describe()}")
            names = ", ".join(str(t.get("name")) for t in server.tools)
            if names:
                print(f"  tools: {names}")
            if server.error:
                print(f"  error: {server.error}")
        for error in config.errors:
            print(f"config error: {error}")
        if not manager.servers and not config.errors:
            print("No MCP servers configured.")
        for ignored in config.ignored:
            print(f"note: {ignored} was ignored: this folder is not trusted (trust it in pi, or pass -a)")
    return 1 if failed or config.errors else 0
