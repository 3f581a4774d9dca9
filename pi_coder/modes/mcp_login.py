"""``pi mcp login|logout <server>`` and ``/mcp login|logout`` outside the TUI (docs/mcp.md#oauth-sign-in).

The shell commands read ``mcp.json`` as ``pi mcp list`` does (the project's file only with saved
trust or ``-a``; ``-l``: the server must be defined there, which needs the same trust) and
connect nothing else. ``login``
prints the authorization URL, opens it in a browser (not with ``--no-browser``), and waits for the
redirect to the loopback listener; a URL pasted on a terminal's stdin completes it too.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.mcp.config import ServerConfig
    from pi_coder.mcp.oauth import Loopback

__all__ = ["find_server", "run_login", "run_logout"]

USAGE = "Usage: pi mcp login <server> [-l] [-a] [--timeout SECONDS] [--no-browser]\n       pi mcp logout <server> [-l] [-a]"


def _err(text: str) -> int:
    print(f"pi mcp: {text}", file=sys.stderr)
    return 1


def find_server(name: str, *, local: bool, approve: bool) -> ServerConfig:
    """The configured server ``name``.

    Raises:
        ValueError: No such server (the message lists the known ones).
    """
    from pi_coder.mcp.config import load_servers, project_config_path
    from pi_coder.permissions.trust import TrustStore

    cwd = os.getcwd()
    found = None if approve else TrustStore().lookup(cwd)
    trusted = approve or bool(found and found[1])
    if local and not trusted:
        # A project's headers may run commands (`!cmd`): nothing it controls runs before trust.
        raise ValueError(f"{project_config_path(cwd)} is not read: this folder is not trusted (trust it in pi, or pass -a)")
    config = load_servers(cwd, project_trusted=trusted)
    server = config.servers.get(name)
    if server is None or (local and server.path != project_config_path(cwd)):
        where = str(project_config_path(cwd)) if local else "mcp.json"
        known = ", ".join(config.servers) or "none"
        raise ValueError(f'no MCP server "{name}" in {where} (servers: {known})')
    return server


def _parse(args: list[str], valued: set[str]) -> tuple[str | None, dict[str, str], set[str]]:
    name: str | None = None
    values: dict[str, str] = {}
    flags: set[str] = set()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in valued:
            if i + 1 >= len(args):
                raise ValueError(f"{arg} needs a value")
            values[arg] = args[i + 1]
            i += 1
        elif arg in ("-l", "--local", "-a", "--approve", "--no-browser"):
            flags.add({"--local": "-l", "--approve": "-a"}.get(arg, arg))
        elif arg.startswith("-") or name is not None:
            raise ValueError(f"unexpected argument {arg!r}\n{USAGE}")
        else:
            name = arg
        i += 1
    return name, values, flags


def run_login(args: list[str]) -> int:
    from pi_coder.mcp.oauth import LoginError, login

    if any(a in ("-h", "--help") for a in args):
        print(USAGE)
        return 0
    try:
        name, values, flags = _parse(args, {"--timeout"})
        if name is None:
            raise ValueError(f"login needs a server name\n{USAGE}")
        timeout = float(values.get("--timeout", "300"))
        if timeout <= 0:
            raise ValueError("--timeout takes a positive number of seconds")
        server = find_server(name, local="-l" in flags, approve="-a" in flags)
    except ValueError as exc:
        return _err(str(exc))

    def show(url: str) -> None:
        print(f"Open this URL to sign in to {server.name}:\n{url}", flush=True)
        if sys.stdin.isatty():
            print("Waiting for the browser; or paste the URL it was redirected to and press Enter.", flush=True)

    def paste(loopback: Loopback) -> None:
        if not sys.stdin.isatty():
            return
        loop = asyncio.get_running_loop()

        def read() -> None:
            for line in sys.stdin:
                if line.strip():
                    loop.call_soon_threadsafe(loopback.complete, line)

        threading.Thread(target=read, name="pi-mcp-paste", daemon=True).start()

    try:
        message = asyncio.run(login(server, show_url=show, open_browser="--no-browser" not in flags, timeout=timeout, on_loopback=paste))
    except LoginError as exc:
        return _err(str(exc))
    except KeyboardInterrupt:
        return _err("sign-in cancelled")
    print(message)
    return 0


def run_logout(args: list[str]) -> int:
    from pi_coder.mcp.oauth import logout

    if any(a in ("-h", "--help") for a in args):
        print(USAGE)
        return 0
    try:
        name, _values, flags = _parse(args, set())
        if name is None:
            raise ValueError(f"logout needs a server name\n{USAGE}")
        server = find_server(name, local="-l" in flags, approve="-a" in flags)
    except ValueError as exc:
        return _err(str(exc))
    if logout(server):
        print(f'Signed out of MCP server "{server.name}" (its stored client and tokens are deleted).')
    else:
        print(f'MCP server "{server.name}" had no stored sign-in.')
    return 0
