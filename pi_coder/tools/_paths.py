"""Path handling shared by the tools: cwd-relative resolution, ``~``, ``@`` and odd Unicode spaces."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

__all__ = ["expand_path", "resolve_path", "resolve_read_path"]

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


def resolve_path(path: str, cwd: str | os.PathLike[str]) -> Path:
    """The absolute path a tool argument names, relative to the session ``cwd``."""
    expanded = expand_path(path)
    p = Path(expanded)
    if not p.is_absolute():
        p = Path(cwd) / p
    return Path(os.path.normpath(p))


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
