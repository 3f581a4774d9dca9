"""``pi install``, ``pi remove``, ``pi update [name]``, ``pi list``: the package commands (docs/packages.md).

``-l/--local`` works on this project's ``.pi/settings.toml``; project packages are installed only
in a trusted folder (``-a`` trusts it for this command). Progress and results go to stdout,
problems to stderr as one line.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from pi_coder.errors import UserError

__all__ = ["PACKAGE_COMMANDS", "run_package_command"]

PACKAGE_COMMANDS = ("install", "remove", "uninstall", "update", "list")

_USAGE = {
    "install": "usage: pi install <source> [-l]   (source: a PyPI requirement, a git URL[@ref], or a path)",
    "remove": "usage: pi remove <name> [-l]",
    "update": "usage: pi update [name] [-l]   (or pi update --models <url|path>)",
    "list": "usage: pi list",
}


def run_package_command(
    args: list[str], *, cwd: str | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run ``pi <args>`` where ``args[0]`` is one of :data:`PACKAGE_COMMANDS`; returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    cwd = cwd or os.getcwd()
    command = "remove" if args[0] == "uninstall" else args[0]
    flags = {a for a in args[1:] if a.startswith("-")}
    rest = [a for a in args[1:] if not a.startswith("-")]
    local = bool(flags & {"-l", "--local"})
    trust_flag = True if flags & {"-a", "--approve"} else None
    unknown = flags - {"-l", "--local", "-a", "--approve"}
    if unknown or (command in ("install", "remove") and len(rest) != 1) or (command in ("update", "list") and len(rest) > (1 if command == "update" else 0)):
        print(_USAGE[command], file=err)
        return 2
    try:
        if command == "list":
            return _list(cwd, out)
        scopes = ["project"] if local else ["user"] if command != "update" or rest else ["user", "project"]
        if "project" in scopes and not _trusted(cwd, trust_flag):
            if local:
                print(
                    f"pi: {cwd} is not trusted, so its packages are not installed; run pi here and trust the "
                    "folder, or add -a to trust it for this command",
                    file=err,
                )
                return 1
            scopes.remove("project")
        return _change(command, rest[0] if rest else None, scopes, cwd, out)
    except UserError as exc:
        print(f"pi: {exc}", file=err)
        return 1
    except KeyboardInterrupt:
        print("pi: cancelled", file=err)
        return 130


def _trusted(cwd: str, flag: bool | None) -> bool:
    from pi_coder.permissions.trust import decide_project_trust
    from pi_coder.settings import load_settings

    default = load_settings(cwd, project_trusted=False).settings.default_project_trust
    decision = decide_project_trust(cwd, flag=flag, default=default)
    return decision is not None and decision.trusted


def _change(command: str, name: str | None, scopes: list[str], cwd: str, out: TextIO) -> int:
    from pi_coder.packages.manage import Packages

    def progress(text: str) -> None:
        print(text, file=out, flush=True)

    started = time.perf_counter()
    for scope in scopes:
        packages = Packages("project" if scope == "project" else "user", cwd)
        where = "this project" if scope == "project" else "you"
        if command == "install":
            assert name is not None
            found = packages.install(name, progress)
            print(f"Installed {found.name}{' ' + found.version if found.version else ''} for {where}: {found.contributes()}", file=out)
        elif command == "remove":
            assert name is not None
            entry = packages.remove(name)
            print(f"Removed {entry.source.name} ({entry.source.spec}) for {where}", file=out)
        else:
            updated = packages.update(name, progress)
            for found in updated:
                print(f"Updated {found.name}{' ' + found.version if found.version else ''} for {where}: {found.contributes()}", file=out)
            if not updated and name is None:
                print(f"No packages for {where}", file=out)
    took = time.perf_counter() - started
    if command != "remove":
        print(f"Done in {took:.1f} s", file=out)
    return 0


def _list(cwd: str, out: TextIO) -> int:
    from pi_coder.packages.manage import Packages

    any_shown = False
    for scope, title in (("user", "User packages"), ("project", "Project packages (.pi/settings.toml)")):
        packages = Packages("project" if scope == "project" else "user", cwd)
        warnings: list[str] = []
        entries = packages.entries(warnings)
        if not entries and not warnings:
            continue
        any_shown = True
        print(f"{title}:", file=out)
        for problem in warnings:
            print(f"  ! {problem}", file=out)
        for found in packages.resolved():
            source = found.entry.source
            version = found.version or "-"
            print(f"  {found.name}  {version}  {source.spec}", file=out)
            print(f"    {found.contributes() if found.installed else 'not installed'}", file=out)
            for kind, names in found.disabled.items():
                if names:
                    print(f"    off ({kind}): {', '.join(names)}", file=out)
    if not any_shown:
        print("No packages (pi install <source> adds one)", file=out)
    return 0
