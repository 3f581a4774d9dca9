"""Discovery of context files (AGENTS.md / CLAUDE.md), SYSTEM.md and APPEND_SYSTEM.md.

Context files, in prompt order:

1. the global one in ``config_dir()``;
2. one per directory from the filesystem root down to ``cwd`` (outermost first, cwd last).

In each directory ``AGENTS.md`` is preferred over ``CLAUDE.md``; a file reached twice (the config
folder is also an ancestor, or through a symlink) is included once.

``SYSTEM.md`` and ``APPEND_SYSTEM.md``: the project's ``.pi/`` copy wins over the global one, in a
trusted folder only (``pi_coder.permissions.trust``); context files load regardless, as in Pi.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pi_coder.paths import config_dir, project_dir

__all__ = [
    "CONTEXT_FILE_NAMES",
    "ContextFile",
    "ProjectContext",
    "discover_context_files",
    "find_append_system_file",
    "find_system_file",
    "load_project_context",
    "read_prompt_argument",
]

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")


@dataclass(frozen=True, slots=True)
class ContextFile:
    """A file whose content goes into the system prompt."""

    path: Path
    content: str


@dataclass(slots=True)
class ProjectContext:
    """Everything the system prompt reads from disk for one working directory."""

    context_files: list[ContextFile] = field(default_factory=list)
    system: ContextFile | None = None
    """SYSTEM.md: replaces the default prompt."""
    append_system: ContextFile | None = None
    """APPEND_SYSTEM.md: appended to the prompt."""
    warnings: list[str] = field(default_factory=list)
    """Files that exist but could not be read."""


def discover_context_files(
    cwd: str | os.PathLike[str], warnings: list[str] | None = None
) -> list[ContextFile]:
    """Context files for ``cwd``: the global file first, then root -> cwd.

    Args:
        cwd: The session's working directory.
        warnings: Receives a message for each file that exists but cannot be read.

    Returns:
        The files with their contents, de-duplicated by real path.
    """
    sink = warnings if warnings is not None else []
    found: list[ContextFile] = []
    seen: set[Path] = set()
    start = Path(cwd).expanduser().absolute()
    folders = [config_dir(), *reversed([start, *start.parents])]
    for folder in folders:
        picked = _read_first(folder, CONTEXT_FILE_NAMES, sink)
        if picked is None:
            continue
        key = _real(picked.path)
        if key in seen:
            continue
        seen.add(key)
        found.append(picked)
    return found


def find_system_file(
    cwd: str | os.PathLike[str], warnings: list[str] | None = None, *, project: bool = True
) -> ContextFile | None:
    """``<cwd>/.pi/SYSTEM.md`` (unless ``project`` is False), else ``config_dir()/SYSTEM.md``, else None."""
    return _project_or_global(cwd, "SYSTEM.md", warnings, project)


def find_append_system_file(
    cwd: str | os.PathLike[str], warnings: list[str] | None = None, *, project: bool = True
) -> ContextFile | None:
    """``<cwd>/.pi/APPEND_SYSTEM.md`` (unless ``project`` is False), else the global one, else None."""
    return _project_or_global(cwd, "APPEND_SYSTEM.md", warnings, project)


def load_project_context(
    cwd: str | os.PathLike[str], *, context_files: bool = True, project_trusted: bool = True
) -> ProjectContext:
    """Read the context files, SYSTEM.md and APPEND_SYSTEM.md for ``cwd``.

    Args:
        cwd: The session's working directory.
        context_files: False skips AGENTS.md/CLAUDE.md discovery (``--no-context-files``).
        project_trusted: False skips ``.pi/SYSTEM.md`` and ``.pi/APPEND_SYSTEM.md`` (the global
            files still apply).
    """
    ctx = ProjectContext()
    if context_files:
        ctx.context_files = discover_context_files(cwd, ctx.warnings)
    ctx.system = find_system_file(cwd, ctx.warnings, project=project_trusted)
    ctx.append_system = find_append_system_file(cwd, ctx.warnings, project=project_trusted)
    return ctx


def read_prompt_argument(value: str, cwd: str | os.PathLike[str] | None = None) -> str:
    """The text of ``--system-prompt`` / ``--append-system-prompt``.

    A value naming an existing file (absolute, ``~``, or relative to ``cwd``) is read from disk;
    anything else is the literal text.
    """
    if "\n" not in value and len(value) < 4096:
        candidate = Path(value).expanduser()
        if not candidate.is_absolute() and cwd is not None:
            candidate = Path(cwd) / candidate
        try:
            if candidate.is_file():
                return candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass
    return value


def _project_or_global(
    cwd: str | os.PathLike[str], name: str, warnings: list[str] | None, project: bool
) -> ContextFile | None:
    sink = warnings if warnings is not None else []
    folders = (project_dir(cwd), config_dir()) if project else (config_dir(),)
    for folder in folders:
        picked = _read_first(folder, (name,), sink)
        if picked is not None:
            return picked
    return None


def _read_first(folder: Path, names: tuple[str, ...], warnings: list[str]) -> ContextFile | None:
    for name in names:
        path = folder / name
        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            continue
        except OSError as exc:
            warnings.append(f"{path}: cannot read ({exc.strerror or exc})")
            continue
        return ContextFile(path=path, content=content)
    return None


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path
