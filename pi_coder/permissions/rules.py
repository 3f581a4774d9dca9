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

Paths are matched on what they name: the argument goes through ``tools._paths.real_path`` (a
leading ``@``, ``~``, ``..``, ``//``, ``/proc/self/root`` and symlinks at every component), so
``@.env``, ``a/../.env`` and a symlink to ``.env`` all meet ``read(.env)``. Deny and ask rules
also match the path as spelled (symlinks kept); allow rules match the real path only.

Deny beats ask beats allow; an allow rule with a pattern beats the built-in secret rules (so
"always allow" for ``cat .env`` holds), a bare ``read`` or ``bash`` does not.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pi_coder.permissions.bash import Analysis, SimpleCommand
from pi_coder.tools import lexical_path, real_path

__all__ = [
    "DEFAULT_SECRET_RULES",
    "PATH_TOOLS",
    "Match",
    "Rule",
    "RuleSet",
    "parse_rule",
    "RuleError",
    "secret_rules",
]

Verdict = Literal["allow", "ask", "deny"]

DEFAULT_SECRET_PATTERNS = (
    ".env",
    ".env.*",
    "*.pem",
    "id_rsa*",
    "~/.ssh/**",
    "~/.aws/credentials",
    "/proc/**/environ",
)
DEFAULT_SECRET_RULES = tuple(f"{tool}({p})" for p in DEFAULT_SECRET_PATTERNS for tool in ("read", "edit"))
"""Asked in every mode but ``auto`` (``permissions.secret_rules = false`` drops them); with
:func:`secret_rules` adding the config folder's ``credentials.json`` and ``models.toml``."""


def secret_rules() -> list[str]:
    """The built-in secret rules, with the config folder's key files (``credentials.json``,
    ``models.toml``) where the config folder is now."""
    from pi_coder.paths import config_dir

    folder = os.path.realpath(config_dir())
    files = (os.path.join(folder, "credentials.json"), os.path.join(folder, "models.toml"))
    return [*DEFAULT_SECRET_RULES, *(f"{tool}({f})" for f in files for tool in ("read", "edit"))]

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


def _real_prefix(pattern: str) -> str:
    """An absolute pattern with the folders before its first wildcard resolved (symlinks)."""
    cut = min((i for i, ch in enumerate(pattern) if ch in "*?"), default=len(pattern))
    head, sep, tail = pattern[:cut].rpartition("/")
    if not sep:
        return pattern
    return os.path.realpath(head or "/").rstrip("/") + "/" + tail + pattern[cut:]


def _matches_one(pattern: str, absolute: str, bases: tuple[str, ...]) -> bool:
    if "/" not in pattern:
        return _glob(pattern, path=True).fullmatch(os.path.basename(absolute)) is not None
    pat = _expand(pattern)
    if os.path.isabs(pat):
        pat = os.path.normpath(pat) if not pat.endswith("/**") else pat
        return any(_glob(p, path=True).fullmatch(absolute) is not None for p in dict.fromkeys((pat, _real_prefix(pat))))
    pat = pat[2:] if pat.startswith("./") else pat
    for base in bases:
        rel = os.path.relpath(absolute, base)
        if not rel.startswith("..") and _glob(pat, path=True).fullmatch(rel) is not None:
            return True
    return False


def path_matches(pattern: str, path: str, cwd: str, *, real_only: bool = False) -> bool:
    """Whether ``path`` (as the model gave it) meets a path rule's ``pattern``: its real path
    (:func:`pi_coder.tools._paths.real_path`) or, unless ``real_only``, its spelling with the
    symlinks kept."""
    if not path:
        return False
    candidates = [str(real_path(path, cwd))]
    if not real_only:
        candidates.append(lexical_path(path, cwd))
    bases = tuple(dict.fromkeys((os.path.normpath(cwd), os.path.realpath(cwd))))
    return any(_matches_one(pattern, a, bases) for a in dict.fromkeys(candidates))


def tool_paths(tool_name: str, args: dict[str, Any]) -> list[str]:
    """The file paths a built-in tool call touches."""
    value = args.get("path") if tool_name in ("read", "edit", "write", "grep", "find", "ls") else None
    if value is None:
        value = args.get("file_path")
    if isinstance(value, str):
        return [value]
    return ["."] if tool_name in ("grep", "find", "ls") else []


@dataclass(frozen=True, slots=True)
class Match:
    """A rule verdict and the rule that gave it (``secret``: one of the built-in secret rules)."""

    verdict: Verdict | None
    rule: Rule | None = None
    secret: bool = False


def _secret_rules() -> list[str]:
    return secret_rules()


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
        self.secrets = [parse_rule(r) for r in _secret_rules()] if secret_rules else []

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
        return self.match(tool_name, args, cwd, bash=bash, secrets=secrets).verdict

    def match(
        self,
        tool_name: str,
        args: dict[str, Any],
        cwd: str,
        *,
        bash: Analysis | None = None,
        secrets: bool = True,
    ) -> Match:
        """The verdict for one call and the rule that gave it: deny, the user's ask rules, allow
        (a patterned allow rule also beats the secret rules), then the secret rules."""
        hit = self._first(self.deny, tool_name, args, cwd, bash)
        if hit is not None:
            return Match("deny", hit)
        hit = self._first(self.ask, tool_name, args, cwd, bash)
        if hit is not None:
            return Match("ask", hit)
        secret = self._first(self.secrets, tool_name, args, cwd, bash) if secrets else None
        if self._all_allowed(tool_name, args, cwd, bash, explicit=secret is not None):
            return Match("allow")
        if secret is not None:
            return Match("ask", secret, secret=True)
        return Match(None)

    def _first(
        self, rules: Sequence[Rule], tool_name: str, args: dict[str, Any], cwd: str, bash: Analysis | None
    ) -> Rule | None:
        for rule in rules:
            if tool_name == "bash" and bash is not None:
                if rule.tool == "bash" and rule.covers_tool("bash"):
                    if rule.pattern is None:
                        return rule
                    regex = _bash_pattern(rule.pattern)
                    if any(regex.fullmatch(c.text) or regex.fullmatch(c.raw_text) for c in bash.commands):
                        return rule
                elif rule.tool in PATH_TOOLS and rule.pattern is not None:
                    if any(_command_touches(c, rule, cwd) for c in bash.commands):
                        return rule
                continue
            if rule.covers_tool(tool_name) and self._pattern_hits(rule, tool_name, args, cwd):
                return rule
        return None

    def _pattern_hits(
        self, rule: Rule, tool_name: str, args: dict[str, Any], cwd: str, *, real_only: bool = False
    ) -> bool:
        if rule.pattern is None:
            return True
        if rule.tool in PATH_TOOLS:
            return any(path_matches(rule.pattern, p, cwd, real_only=real_only) for p in tool_paths(tool_name, args))
        return False  # a pattern on a tool without a known argument: never matches

    def allows(
        self, tool_name: str, args: dict[str, Any], cwd: str, bash: Analysis | None = None, *, explicit: bool = False
    ) -> bool:
        """Whether the allow rules cover the call (``explicit``: only rules with a pattern count)."""
        return self._all_allowed(tool_name, args, cwd, bash, explicit=explicit)

    def _all_allowed(
        self, tool_name: str, args: dict[str, Any], cwd: str, bash: Analysis | None, *, explicit: bool = False
    ) -> bool:
        """Whether the allow rules cover the call (``explicit``: only rules with a pattern count)."""
        allow = [r for r in self.allow if r.pattern is not None] if explicit else self.allow
        if not allow:
            return False
        if tool_name == "bash":
            if bash is None or not bash.understood or not bash.commands:
                return any(r.tool == "bash" and r.pattern is None for r in allow)
            effective = [c for c in bash.commands if not c.wrapper]
            return all(self._bash_allowed(c, allow) for c in effective)
        return any(r.covers_tool(tool_name) and self._pattern_hits(r, tool_name, args, cwd, real_only=True) for r in allow)

    def _bash_allowed(self, cmd: SimpleCommand, allow: Sequence[Rule]) -> bool:
        for rule in allow:
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
