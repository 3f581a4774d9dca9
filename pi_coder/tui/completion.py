"""Editor completion sources: slash commands, ``@`` project files, Tab path completion (pure logic)."""

from __future__ import annotations

import builtins
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "Completion",
    "CompletionContext",
    "ProjectFiles",
    "find_rg",
    "fuzzy_filter",
    "fuzzy_score",
    "path_completions",
    "token_context",
]


@dataclass(frozen=True, slots=True)
class Completion:
    """One candidate: ``replacement`` replaces ``start:end`` of the current line."""

    label: str
    replacement: str
    description: str = ""


CompletionKind = Literal["slash", "argument", "file", "path", "extension"]


@dataclass(frozen=True, slots=True)
class CompletionContext:
    """What is being completed at the cursor."""

    kind: CompletionKind
    """``slash`` (command name on the first line), ``argument`` (what follows it: ``query`` is the
    whole line after ``/``), ``file`` (``@token``), ``path``, or ``extension`` (a token starting
    with an extension provider's trigger character)."""
    query: str
    start: int
    """Column where the replaced token starts (on the cursor's line)."""
    end: int


def _token_score(token: str, text: str, name: str) -> float | None:
    if name.startswith(token):
        return 0.0
    if text.startswith(token):
        return 1.0
    index = text.find(token)
    if index >= 0:
        word_start = not text[index - 1].isalnum()
        return (2.0 if word_start else 3.0) + index / 1000
    position, gaps = 0, 0
    for char in token:
        found = text.find(char, position)
        if found < 0:
            return None
        gaps += found - position
        position = found + 1
    return 4.0 + min(gaps, 40)


def fuzzy_score(query: str, text: str) -> float | None:
    """Lower is better; None when a whitespace-separated token of ``query`` does not match.

    The one fuzzy match of the TUI (completion menus and pickers). Case-insensitive. Each token
    scores, best first: a prefix of the last path component of ``text``, a prefix of ``text``, a
    substring at a word start, a substring, its characters in order (fewer gaps first).
    """
    lowered = text.lower()
    name = lowered.rsplit("/", 1)[-1]
    total = 0.0
    for token in query.lower().split():
        score = _token_score(token, lowered, name)
        if score is None:
            return None
        total += score
    return total


def fuzzy_filter(query: str, candidates: Iterable[str], limit: int = 20) -> list[str]:
    """The best ``limit`` candidates for ``query``; shorter ones first among equal matches."""
    scored = [(score + len(c) // 50, len(c), c) for c in candidates if (score := fuzzy_score(query, c)) is not None]
    scored.sort()
    return [c for _, _, c in scored[:limit]]


PI_COMMAND_ORDER: tuple[str, ...] = (
    "settings", "model", "tree", "thinking", "scoped-models", "export", "import", "share", "bug", "copy",
    "name", "session", "changelog", "hotkeys", "fork", "clone", "trust", "login", "logout", "new", "compact",
    "resume", "reload", "quit",
)  # fmt: skip
"""Pi 1.6's built-in commands in the order its ``/`` menu lists them (read off Pi 1.6 in tmux)."""


def slash_candidates(builtins: Iterable[str], others: Iterable[str]) -> list[str]:
    """Built-in command names in Pi's order (ours that Pi lacks after them), then ``others``."""
    names = list(dict.fromkeys(builtins))
    rank = {name: index for index, name in enumerate(PI_COMMAND_ORDER)}
    ordered = sorted(names, key=lambda name: (rank.get(name, len(rank)), names.index(name)))
    seen = set(ordered)
    return ordered + [name for name in dict.fromkeys(others) if name not in seen]


def ordered_filter(query: str, candidates: Iterable[str], limit: int | None = None) -> list[str]:
    """The candidates that match ``query``, best first; equal scores keep the candidates' order."""
    scored = [(score, index, c) for index, c in enumerate(candidates) if (score := fuzzy_score(query, c)) is not None]
    scored.sort()
    return [c for _, _, c in scored[:limit]]


def token_context(line: str, column: int, row: int) -> CompletionContext | None:
    """The completion that applies at ``column`` of ``line`` (``row`` is the line number), if any."""
    before = line[:column]
    if row == 0 and before.startswith("/") and " " not in before:
        return CompletionContext("slash", before[1:], 0, column)
    start = column
    while start > 0 and not line[start - 1].isspace():
        start -= 1
    token = line[start:column]
    if token.startswith("@"):
        return CompletionContext("file", token[1:], start, column)
    if row == 0 and before.startswith("/"):  # a command's arguments (extension completions)
        return CompletionContext("argument", before[1:], 0, column)
    return None


def path_token(line: str, column: int) -> tuple[str, int]:
    """The whitespace-delimited token ending at ``column`` and its start."""
    start = column
    while start > 0 and not line[start - 1].isspace():
        start -= 1
    return line[start:column], start


def path_completions(token: str, cwd: str, limit: int = 50) -> list[Completion]:
    """Entries of the token's directory that start with its last part (directories end with ``/``)."""
    prefix = ""
    if token.startswith("@"):
        prefix, token = "@", token[1:]
    expanded = os.path.expanduser(token) if token.startswith("~") else token
    directory, _, partial = expanded.rpartition("/")
    shown_dir = token[: len(token) - len(partial)]
    base = Path(cwd) / directory if not os.path.isabs(expanded) else Path(directory or "/")
    if directory == "" and not os.path.isabs(expanded):
        base = Path(cwd)
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name.lower())
    except OSError:
        return []
    out: list[Completion] = []
    for entry in entries:
        if not entry.name.startswith(partial):
            continue
        if entry.name.startswith(".") and not partial.startswith("."):
            continue
        suffix = "/" if entry.is_dir() else ""
        out.append(Completion(entry.name + suffix, prefix + shown_dir + entry.name + suffix))
        if len(out) >= limit:
            break
    return out


def common_prefix(values: Sequence[str]) -> str:
    return os.path.commonprefix(list(values)) if values else ""


def find_rg() -> str | None:
    """ripgrep next to the Python executable (installed with the package) or on PATH."""
    name = "rg.exe" if sys.platform == "win32" else "rg"
    local = Path(sys.executable).parent / name
    if local.is_file():
        return str(local)
    return shutil.which("rg")


class ProjectFiles:
    """The project's files (``rg --files``: respects .gitignore), listed once on first use."""

    def __init__(self, cwd: str, max_files: int = 50_000) -> None:
        self.cwd = cwd
        self.max_files = max_files
        self._files: list[str] | None = None

    def list(self) -> list[str]:
        if self._files is None:
            self._files = self._scan()
        return self._files

    def _scan(self) -> builtins.list[str]:
        rg = find_rg()
        files: list[str] = []
        if rg is not None:
            try:
                proc = subprocess.run(
                    [rg, "--files", "--hidden", "--glob", "!.git"],
                    cwd=self.cwd,
                    capture_output=True,
                    text=True,
                    timeout=10,
                    check=False,
                )
                files = proc.stdout.splitlines()[: self.max_files]
            except (OSError, subprocess.SubprocessError):
                files = []
        else:
            for root, dirs, names in os.walk(self.cwd):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                rel = os.path.relpath(root, self.cwd)
                files.extend(name if rel == "." else f"{rel}/{name}" for name in names)
                if len(files) >= self.max_files:
                    break
        directories: set[str] = set()
        for f in files:
            parts = f.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                directories.add("/".join(parts[:depth]) + "/")
        return sorted(files) + sorted(directories)

    def children(self, folder: str) -> builtins.list[str]:
        """The direct entries of ``folder`` (``"src/"``), folders first, each part sorted."""
        depth = folder.count("/")
        inside = [path for path in self.list() if path.startswith(folder) and path != folder]
        direct = [path for path in inside if path.rstrip("/").count("/") == depth]
        return sorted(direct, key=lambda path: (not path.endswith("/"), path.lower()))

    def complete(self, query: str, limit: int = 20) -> builtins.list[Completion]:
        # A folder's own entries once it is complete (Tab on ``@src/`` steps into it, as in Pi).
        folder = self.children(query) if query.endswith("/") else []
        out = []
        for path in folder[:limit] or fuzzy_filter(query, self.list(), limit):
            shown = f'"{path}"' if " " in path else path
            out.append(Completion(path, "@" + shown + ("" if path.endswith("/") else " ")))
        return out
