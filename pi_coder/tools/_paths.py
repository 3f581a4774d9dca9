"""Path handling shared by the tools and the permission checks: one way to turn a path argument
into the file it names.

``real_path`` is the single resolver: the tools (read, write, edit, ls, find, grep), the
permission policy, the rule matcher, ``builtin:protected-paths`` and the checkpoints all decide on
its result, so no spelling (``@``, ``~``, ``..``, ``//``, ``/proc/self/root``, a symlink in the
repository) reaches a file one of them did not see (README, "Safety").

``pin``/``pinned``: the permission gate records the real path it approved for a write or edit
call; the tool then writes exactly there (through directory descriptors, never following a
symlink that appeared since), instead of resolving the argument a second time.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

__all__ = ["display_path", "expand_path", "lexical_path", "pin", "pinned", "real_path", "resolve_path", "resolve_read_path"]

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_AM_PM = re.compile(r" (AM|PM)\.")


def expand_path(path: str) -> str:
    """Strip a leading ``@``, normalise exotic spaces to ASCII and expand ``~``."""
    if path.startswith("@"):
        path = path[1:]
    path = _UNICODE_SPACES.sub(" ", path)
    if path == "~" or path.startswith("~/"):
        path = os.path.expanduser("~") + path[1:]
    return path


def lexical_path(path: str, cwd: str | os.PathLike[str]) -> str:
    """The absolute path a tool argument spells (``@``, ``~``, ``..``, ``//`` undone), symlinks kept."""
    expanded = expand_path(path)
    joined = expanded if os.path.isabs(expanded) else os.path.join(os.fspath(cwd), expanded)
    normal = os.path.normpath(joined)
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


def real_path(path: str, cwd: str | os.PathLike[str]) -> Path:
    """The real absolute path a tool argument names, relative to the session ``cwd``.

    A leading ``@`` and ``~`` are expanded, ``..`` and doubled slashes undone and every symlink
    resolved in order (``link/..`` is the link target's parent, as the kernel sees it; the magic
    links ``/proc/self/root`` and ``/proc/<pid>/cwd`` too). For a path that does not exist yet
    the existing part is resolved and the rest kept.
    """
    expanded = expand_path(path)
    joined = expanded if os.path.isabs(expanded) else os.path.join(os.fspath(cwd), expanded)
    for _ in range(8):
        try:
            return Path(os.path.realpath(joined))
        except OSError:  # a symlink vanished while it was being read: look again
            continue
    return Path(lexical_path(path, cwd))


resolve_path = real_path
"""The path the tools act on: the same as :func:`real_path`."""

_PINS: dict[str, Path] = {}
_MAX_PINS = 256


def pin(tool_call_id: str, path: Path) -> None:
    """Record ``path`` as the approved real target of the write/edit call ``tool_call_id``."""
    if len(_PINS) >= _MAX_PINS:
        _PINS.pop(next(iter(_PINS)))
    _PINS[tool_call_id] = path


def pinned(tool_call_id: str, path: str, cwd: str | os.PathLike[str]) -> Path:
    """The approved target of this call when the permission gate pinned one, else ``real_path``."""
    return _PINS.pop(tool_call_id, None) or real_path(path, cwd)


def _screenshot_variants(path: str) -> list[str]:
    # macOS screenshot names use a narrow NBSP before AM/PM, NFD file names and curly apostrophes.
    variants = [
        _AM_PM.sub("\u202f\\1.", path),
        unicodedata.normalize("NFD", path),
        path.replace("'", "\u2019"),
        unicodedata.normalize("NFD", path.replace("'", "\u2019")),
    ]
    return [v for v in variants if v != path]


def resolve_read_path(path: str, cwd: str | os.PathLike[str]) -> Path:
    """Like ``resolve_path``, but when the file is missing try macOS screenshot name variants."""
    resolved = resolve_path(path, cwd)
    if resolved.exists():
        return resolved
    for variant in _screenshot_variants(str(resolved)):
        candidate = Path(variant)
        if candidate.exists():
            return candidate
    return resolved


def display_path(path: Path, cwd: str | os.PathLike[str]) -> str:
    """``path`` relative to ``cwd`` when inside it, else absolute (POSIX slashes)."""
    for base in (Path(cwd), Path(os.path.realpath(cwd))):
        try:
            return path.relative_to(base).as_posix() or "."
        except ValueError:
            continue
    return path.as_posix()
