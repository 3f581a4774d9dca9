"""A pure-Python file walker that honours .gitignore, .ignore and .git/info/exclude.

The fallback for grep and find when ripgrep is missing. Order matches ``rg --sort path``:
depth first, siblings sorted by name. Hidden files are included, ``.git`` is skipped and
symbolic links are not followed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pi_coder.errors import ToolError
from pi_coder.tools._files import read_regular_bytes
from pi_coder.tools._glob import GlobPattern, compile_glob

__all__ = ["IgnoreRules", "walk_files"]

_IGNORE_FILES = (".gitignore", ".ignore")


def _read_patterns(path: Path) -> list[GlobPattern]:
    try:
        text = read_regular_bytes(path, path.name).decode("utf-8", "replace")
    except ToolError:  # missing, unreadable, or a FIFO that would block the walk
        return []
    patterns = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        # Trailing spaces are ignored unless escaped with a backslash.
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        compiled = compile_glob(stripped)
        if compiled is not None:
            patterns.append(compiled)
    return patterns


@dataclass(frozen=True, slots=True)
class _Layer:
    base: str
    """POSIX path of the ignore file's directory relative to the walk root ('' = root, '..' above)."""
    patterns: tuple[GlobPattern, ...]


class IgnoreRules:
    """A stack of ignore-file layers; the last matching pattern decides."""

    __slots__ = ("_layers",)

    def __init__(self, layers: tuple[_Layer, ...] = ()) -> None:
        self._layers = layers

    def push(self, base: str, patterns: list[GlobPattern]) -> IgnoreRules:
        if not patterns:
            return self
        return IgnoreRules((*self._layers, _Layer(base, tuple(patterns))))

    def ignored(self, rel_path: str, is_dir: bool, root_prefix: str = "") -> bool:
        verdict = False
        for layer in self._layers:
            if layer.base.startswith("/"):
                # A layer above the walk root: match against the path from that directory.
                local = layer.base[1:] + rel_path
            elif layer.base:
                if not rel_path.startswith(layer.base + "/"):
                    continue
                local = rel_path[len(layer.base) + 1 :]
            else:
                local = rel_path
            for pattern in layer.patterns:
                if pattern.matches(local, is_dir):
                    verdict = not pattern.negated
        return verdict


def _ancestor_rules(root: Path) -> IgnoreRules:
    """Rules from ignore files in the directories above ``root`` (up to the git root)."""
    rules = IgnoreRules()
    chain: list[Path] = []
    current = root
    while True:
        parent = current.parent
        if (current / ".git").exists() or parent == current:
            break
        chain.append(parent)
        current = parent
    git_root = current if (current / ".git").exists() else None
    for directory in reversed(chain):
        prefix = "/" + root.relative_to(directory).as_posix() + "/"
        for name in _IGNORE_FILES:
            rules = rules.push(prefix, _read_patterns(directory / name))
    if git_root is not None and git_root != root:
        prefix = "/" + root.relative_to(git_root).as_posix() + "/"
        rules = rules.push(prefix, _read_patterns(git_root / ".git" / "info" / "exclude"))
    return rules


def walk_files(root: Path) -> Iterator[str]:
    """Yield the POSIX paths (relative to ``root``) of the files not ignored, in sorted order."""
    rules = _ancestor_rules(root)
    if (root / ".git").is_dir():
        rules = rules.push("", _read_patterns(root / ".git" / "info" / "exclude"))
    yield from _walk_dir(root, "", rules)


def _walk_dir(directory: Path, rel: str, rules: IgnoreRules) -> Iterator[str]:
    for name in _IGNORE_FILES:
        rules = rules.push(rel, _read_patterns(directory / name))
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name == ".git":
            continue
        path = f"{rel}/{entry.name}" if rel else entry.name
        try:
            if entry.is_symlink():
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if rules.ignored(path, is_dir):
            continue
        if is_dir:
            yield from _walk_dir(Path(entry.path), path, rules)
        elif entry.is_file(follow_symlinks=False):
            yield path
