"""Which folders the checkpoint watcher may leave unwatched: those git ignores for certain.

The watcher (:mod:`pi_coder.checkpoints.watch`) need not watch a folder whose files snapshots
never include (``node_modules/``, ``.venv/``, ``build/``): watching it only costs inotify watches
and events. Telling which folders git ignores is git's job, so this is deliberately a subset of
git's rules that can only err on the safe side: a folder is left out when a plain pattern of a
``.gitignore`` above it (or of an exclude file) names it, and nothing is left out below a file
with a negation (``!``), because a negation can bring a folder back. Patterns using character
classes, escapes or ``**`` are not read at all. Watching a folder git ignores is harmless (its
events are filtered by git), so every pattern this does not understand just means "watch it".
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["DirRules", "parse_rules"]

_UNSUPPORTED = ("[", "\\", "**")


@dataclass(slots=True, frozen=True)
class _Pattern:
    base: str
    """The folder of the file the pattern comes from ("" for the top and for exclude files)."""
    parts: tuple[str, ...]
    """Anchored: the path below ``base`` segment by segment; otherwise one segment, any depth."""
    anchored: bool


@dataclass(slots=True, frozen=True)
class DirRules:
    """The patterns in force for a folder's children (its own ``.gitignore`` included)."""

    patterns: tuple[_Pattern, ...] = ()
    unsure: bool = False
    """A negation was seen on the way down: nothing below is left out."""

    def below(self, folder: str, text: str | None) -> DirRules:
        """The rules for the children of ``folder`` (relative, "" for the top) given its ``.gitignore``."""
        if self.unsure or text is None:
            return self
        parsed = parse_rules(text.splitlines(), folder)
        if parsed is None:
            return DirRules(unsure=True)
        return DirRules(self.patterns + parsed) if parsed else self

    def ignores(self, rel: str) -> bool:
        """True when git certainly ignores the folder ``rel`` (relative to the top, no trailing slash)."""
        if self.unsure:
            return False
        name = rel.rsplit("/", 1)[-1]
        for pattern in self.patterns:
            if pattern.base and not rel.startswith(pattern.base + "/"):
                continue
            if not pattern.anchored:
                if fnmatch.fnmatchcase(name, pattern.parts[0]):
                    return True
                continue
            below = rel[len(pattern.base) + 1 :] if pattern.base else rel
            parts = below.split("/")
            if len(parts) == len(pattern.parts) and all(
                fnmatch.fnmatchcase(part, want) for part, want in zip(parts, pattern.parts, strict=True)
            ):
                return True
        return False


def parse_rules(lines: Iterable[str], base: str = "") -> tuple[_Pattern, ...] | None:
    """The plain patterns of an ignore file; None when it has a negation (nothing can be left out)."""
    out: list[_Pattern] = []
    for raw in lines:
        line = raw.rstrip("\r").rstrip(" ")
        if not line or line.startswith("#"):
            continue
        if line.startswith("!"):
            return None
        if any(mark in line for mark in _UNSUPPORTED):
            continue
        line = line.rstrip("/")
        if not line:
            continue
        if "/" in line:
            parts = tuple(line.lstrip("/").split("/"))
            if any(not part for part in parts):
                continue
            out.append(_Pattern(base, parts, True))
        else:
            out.append(_Pattern(base, (line,), False))
    return tuple(out)
