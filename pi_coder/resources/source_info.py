"""Where a command, tool or resource came from, in Pi 1.6's ``sourceInfo`` shape.

RPC ``get_commands``, ``pi.get_commands()`` and ``pi.get_all_tools()`` give each record a
``sourceInfo`` (docs/extensions.md#provenance), which clients read to tell user, project and
package resources apart:

- ``path``: the file (or ``builtin:<name>``);
- ``source``: how pi found it: ``auto`` (a resource folder: ``<config>/prompts``,
  ``.pi/extensions``, ...), ``local`` (listed in a settings file), ``cli`` (``-e``,
  ``--prompt-template``, ``--skill``), ``builtin`` (shipped with pi), ``sdk``, ``entry_point``
  (a ``pi_coder.extensions`` entry point of pi's environment), or a package's source spec;
- ``scope``: ``user``, ``project`` or ``temporary`` (this run only);
- ``origin``: ``top-level``, or ``package`` for a package's resource, which also has
- ``baseDir``: the package's folder.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["PackageRoot", "SourceScope", "for_path", "make"]

SourceScope = Literal["user", "project", "temporary"]


@dataclass(frozen=True, slots=True)
class PackageRoot:
    """An installed package's folder, its source spec and the settings scope that lists it."""

    root: str
    spec: str
    scope: Literal["user", "project"]


def make(
    path: str,
    source: str,
    scope: SourceScope,
    *,
    origin: Literal["top-level", "package"] = "top-level",
    base_dir: str | None = None,
) -> dict[str, str]:
    """One ``sourceInfo`` record (``baseDir`` only when given)."""
    info = {"path": path, "source": source, "scope": scope, "origin": origin}
    if base_dir is not None:
        info["baseDir"] = base_dir
    return info


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def for_path(
    path: str,
    *,
    cwd: str,
    config_dir: str | Path,
    packages: Sequence[PackageRoot] = (),
    cli_paths: Sequence[str] = (),
) -> dict[str, str]:
    """The ``sourceInfo`` of a resource file found at ``path``.

    A package's file first, then a path given on the command line, then pi's own resource
    folders (``auto``); anything else was listed somewhere (``local``), scoped by where it lives.
    """
    real = os.path.realpath(path)
    for package in packages:
        root = os.path.realpath(package.root)
        if _within(real, root):
            return make(path, package.spec, package.scope, origin="package", base_dir=package.root)
    if any(_within(real, os.path.realpath(os.path.expanduser(p))) for p in cli_paths):
        return make(path, "cli", "temporary")
    config = os.path.realpath(config_dir)
    project = os.path.realpath(os.path.join(cwd, ".pi"))
    for kind in ("prompts", "skills", "extensions", "themes", "agents"):
        if _within(real, os.path.join(config, kind)):
            return make(path, "auto", "user")
        if _within(real, os.path.join(project, kind)):
            return make(path, "auto", "project")
    if _within(real, project) or _within(real, os.path.realpath(cwd)):
        return make(path, "local", "project")
    if _within(real, config):
        return make(path, "local", "user")
    return make(path, "local", "temporary")
