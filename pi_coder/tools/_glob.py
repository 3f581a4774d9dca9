"""Gitignore-style glob patterns translated to regular expressions (pure).

Semantics follow gitignore (and ripgrep's ``--glob``): a pattern without a slash matches a
name at any depth; a pattern with a slash is anchored to its base directory; ``**`` spans
directories; a trailing slash matches directories only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["GlobPattern", "compile_glob"]


@dataclass(frozen=True, slots=True)
class GlobPattern:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    basename_only: bool = False
    """No slash in the pattern: ``regex`` is matched against the last path component."""

    def matches(self, rel_path: str, is_dir: bool) -> bool:
        """Whether the (POSIX, base-relative) path matches, ignoring negation."""
        if self.dir_only and not is_dir:
            return False
        if self.basename_only:
            rel_path = rel_path.rpartition("/")[2]
        return self.regex.match(rel_path) is not None


def _translate(body: str) -> str:
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c == "*":
            if body.startswith("**", i):
                at_start = i == 0 or body[i - 1] == "/"
                after = i + 2
                if at_start and after < n and body[after] == "/":
                    out.append("(?:.*/)?")
                    i = after + 1
                    continue
                if at_start and after == n:
                    out.append(".*")
                    i = after
                    continue
                out.append("[^/]*")
                i = after
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and body[j] in "!^":
                j += 1
            if j < n and body[j] == "]":
                j += 1
            while j < n and body[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                inner = body[i + 1 : j]
                if inner[:1] in ("!", "^"):
                    inner = "^" + inner[1:]
                out.append("[" + inner.replace("\\", "\\\\") + "]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(body[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def compile_glob(pattern: str) -> GlobPattern | None:
    """Compile one gitignore-style pattern; ``None`` for blank lines and comments."""
    if not pattern or pattern.startswith("#"):
        return None
    negated = pattern.startswith("!")
    if negated:
        pattern = pattern[1:]
    elif pattern.startswith("\\!") or pattern.startswith("\\#"):
        pattern = pattern[1:]
    dir_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if not pattern:
        return None
    anchored = "/" in pattern
    pattern = pattern.lstrip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    regex = re.compile(f"{_translate(pattern)}\\Z", re.DOTALL)
    return GlobPattern(regex=regex, negated=negated, dir_only=dir_only, basename_only=not anchored)
