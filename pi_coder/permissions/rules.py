"""Permission rules: ``tool(pattern)`` entries in ``allow``, ``ask`` and ``deny`` lists.

- ``bash(git status*)``: a bash command; the pattern is matched against *each* simple command of
  the command line (see :mod:`pi_coder.permissions.bash`), ``*`` matching anything,
  spaces included. ``bash(npm test:*)`` is ``npm test`` alone or followed by arguments.
- ``read(.env*)``, ``edit(src/**)``, ``write(/tmp/**)``: a path. A pattern without ``/`` matches
  the file name in any folder; one with ``/`` matches the path relative to the working folder
  (or absolute, or ``~/``). ``**`` crosses folders, ``*`` does not. ``edit`` covers write too;
  ``read`` covers grep, find and ls. Static words of bash commands are paths too: ``cat .env``
  meets ``read(.env)``.
- ``mcp__github__*``, ``write``: a tool name (glob) alone covers every call of the tool.

Deny beats ask beats allow.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pi_coder.permissions.bash import Analysis, SimpleCommand

__all__ = ["DEFAULT_SECRET_RULES", "PATH_TOOLS", "Rule", "RuleSet", "parse_rule", "RuleError"]

Verdict = Literal["allow", "ask", "deny"]

DEFAULT_SECRET_PATTERNS = (".env", ".env.*", "*.pem", "id_rsa*", "~/.ssh/**", "~/.aws/credentials")
DEFAULT_SECRET_RULES = tuple(f"{tool}({p})" for p in DEFAULT_SECRET_PATTERNS for tool in ("read", "edit"))
"""Asked in every mode but ``auto`` (``permissions.secret_rules = false`` drops them)."""

PATH_TOOLS: dict[str, tuple[str, ...]] = {
    "read": ("read", "grep", "find", "ls"),
    "edit": ("edit", "write"),
    "write": ("write",),
}
"""Rule tool name -> the tools whose path argument it covers."""

_RULE = re.compile(r"^\s*([A-Za-z0-9_\-*?.]+)\s*(?:\((.*)\))?\s*$", re.S)


class RuleError(ValueError):
    """A rule that is not ``tool`` or ``tool(pattern)``."""


@dataclass(frozen=True, slots=True)
class Rule:
    tool: str
    pattern: str | None
    source: str

    def covers_tool(self, tool_name: str) -> bool:
        if self.tool in PATH_TOOLS and self.pattern is not None:
            return tool_name in PATH_TOOLS[self.tool]
        return _glob(self.tool.lower(), path=False).fullmatch(tool_name.lower()) is not None


def parse_rule(text: str) -> Rule:
    match = _RULE.match(text)
    if match is None:
        raise RuleError(f'Permission rule "{text}" is not tool or tool(pattern)')
    tool, pattern = match.group(1), match.group(2)
    if pattern is not None:
        pattern = pattern.strip()
        if pattern in ("", "*", "**"):
            pattern = None
    return Rule(tool=tool.lower(), pattern=pattern, source=text.strip())


@lru_cache(maxsize=512)
def _glob(pattern: str, *, path: bool) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            if path and pattern.startswith("**", i):
                i += 2
                if pattern.startswith("/", i):
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*" if path else ".*")
        elif ch == "?":
            out.append("[^/]" if path else ".")
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out), re.S)


def _bash_pattern(pattern: str) -> re.Pattern[str]:
    if pattern.endswith(":*"):
        stem = pattern[:-2].rstrip()
        return re.compile(_glob(stem, path=False).pattern + r"(?:\s.*)?", re.S)
    return _glob(pattern, path=False)


def _expand(pattern: str) -> str:
    return os.path.expanduser(pattern) if pattern.startswith("~") else pattern


def path_matches(pattern: str, path: str, cwd: str) -> bool:
    """Whether ``path`` (as the model gave it) meets a path rule's ``pattern``."""
    if not path:
        return False
    expanded = os.path.expanduser(path)
    absolute = os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded))
    if "/" not in pattern:
        return _glob(pattern, path=True).fullmatch(os.path.basename(absolute)) is not None
    pat = _expand(pattern)
    if os.path.isabs(pat):
        return (
            _glob(os.path.normpath(pat) if not pat.endswith("/**") else pat, path=True).fullmatch(absolute)
            is not None
        )
    pat = pat[2:] if pat.startswith("./") else pat
    rel = os.path.relpath(absolute, cwd)
    if rel.startswith(".."):
        return False
    return _glob(pat, path=True).fullmatch(rel) is not None


def tool_paths(tool_name: str, args: dict[str, Any]) -> list[str]:
    """The file paths a built-in tool call touches."""
    value = args.get("path") if tool_name in ("read", "edit", "write", "grep", "find", "ls") else None
    if value is None:
        value = args.get("file_path")
    if isinstance(value, str):
        return [value]
    return ["."] if tool_name in ("grep", "find", "ls") else []


class RuleSet:
    """The allow, ask and deny lists (plus the secret rules, kept apart so ``auto`` can skip them)."""

    def __init__(
        self,
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        *,
        secret_rules: bool = True,
    ) -> None:
        self.problems: list[str] = []
        self.allow = self._parse(allow)
        self.ask = self._parse(ask)
        self.deny = self._parse(deny)
        self.secrets = [parse_rule(r) for r in DEFAULT_SECRET_RULES] if secret_rules else []

    def _parse(self, items: Iterable[str]) -> list[Rule]:
        rules = []
        for item in items:
            try:
                rules.append(parse_rule(str(item)))
            except RuleError as exc:
                self.problems.append(str(exc))
        return rules

    @property
    def empty(self) -> bool:
        return not (self.allow or self.ask or self.deny)

    def has_bash_deny(self) -> bool:
        return any(r.covers_tool("bash") for r in (*self.deny, *self.ask))

    def add_allow(self, text: str) -> None:
        rule = parse_rule(text)
        if rule not in self.allow:
            self.allow.append(rule)

    # ------------------------------------------------------------------ matching

    def verdict(
        self,
        tool_name: str,
        args: dict[str, Any],
        cwd: str,
        *,
        bash: Analysis | None = None,
        secrets: bool = True,
    ) -> Verdict | None:
        """The strongest rule verdict for one call, None when no rule speaks."""
        ask_rules = [*self.ask, *self.secrets] if secrets else self.ask
        if self._any(self.deny, tool_name, args, cwd, bash):
            return "deny"
        if self._any(ask_rules, tool_name, args, cwd, bash):
            return "ask"
        if self._all_allowed(tool_name, args, cwd, bash):
            return "allow"
        return None

    def _any(
        self, rules: Sequence[Rule], tool_name: str, args: dict[str, Any], cwd: str, bash: Analysis | None
    ) -> bool:
        for rule in rules:
            if tool_name == "bash" and bash is not None:
                if rule.tool == "bash" and rule.covers_tool("bash"):
                    if rule.pattern is None:
                        return True
                    regex = _bash_pattern(rule.pattern)
                    if any(regex.fullmatch(c.text) or regex.fullmatch(c.raw_text) for c in bash.commands):
                        return True
                elif rule.tool in PATH_TOOLS and rule.pattern is not None:
                    if any(_command_touches(c, rule, cwd) for c in bash.commands):
                        return True
                continue
            if rule.covers_tool(tool_name) and self._pattern_hits(rule, tool_name, args, cwd):
                return True
        return False

    def _pattern_hits(self, rule: Rule, tool_name: str, args: dict[str, Any], cwd: str) -> bool:
        if rule.pattern is None:
            return True
        if rule.tool in PATH_TOOLS:
            return any(path_matches(rule.pattern, p, cwd) for p in tool_paths(tool_name, args))
        return False  # a pattern on a tool without a known argument: never matches

    def _all_allowed(self, tool_name: str, args: dict[str, Any], cwd: str, bash: Analysis | None) -> bool:
        if not self.allow:
            return False
        if tool_name == "bash":
            if bash is None or not bash.understood or not bash.commands:
                return any(r.tool == "bash" and r.pattern is None for r in self.allow)
            effective = [c for c in bash.commands if not c.wrapper]
            return all(self._bash_allowed(c) for c in effective)
        return any(
            r.covers_tool(tool_name) and self._pattern_hits(r, tool_name, args, cwd) for r in self.allow
        )

    def _bash_allowed(self, cmd: SimpleCommand) -> bool:
        for rule in self.allow:
            if rule.tool != "bash":
                continue
            if rule.pattern is None:
                return True
            regex = _bash_pattern(rule.pattern)
            if regex.fullmatch(cmd.text) or regex.fullmatch(cmd.raw_text):
                return True
        return False


def _command_touches(cmd: SimpleCommand, rule: Rule, cwd: str) -> bool:
    """A bash command meeting a path rule: a static argument (or written file) matches it."""
    assert rule.pattern is not None
    words = [w for w in cmd.argv[1:] if w is not None and not w.startswith("-")]
    if rule.tool != "read":
        words = [w for w in cmd.writes if w is not None] + (words if cmd.name in _WRITERS else [])
    for word in words:
        for candidate in (word, word.split("=", 1)[-1]):
            if path_matches(rule.pattern, candidate, cwd):
                return True
    return False


_WRITERS = frozenset(
    {"cp", "mv", "rm", "tee", "touch", "truncate", "dd", "sed", "install", "ln", "chmod", "chown", "shred"}
)
