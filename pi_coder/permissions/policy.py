"""The decision for one tool call: the permission mode applied to the rules.

=============  ==================================================================================
``auto``       everything runs (Pi's behaviour); deny rules and the user's ask rules still apply
``ask``        reads run; anything that can change something asks unless an allow rule covers it
``accept-edits`` like ``ask``, but write and edit inside the working folder run
``plan``       reads only (read, grep, find, ls, bash the parser proves read-only); the rest is
               refused with the planning reason
``deny``       like ``ask``, but what would ask is refused (headless use); never waits
=============  ==================================================================================

In every mode but ``auto``, write and edit of a protected path (anything in a ``.git`` or ``.pi``
folder, pi's config folder with its ``credentials.json``) ask even in ``accept-edits`` (and are
refused in ``plan`` and ``deny``) unless an allow rule with a pattern, or an approval for this
session, covers the call. Every path is judged on its real path (``tools._paths.real_path``);
the decision carries the real target of a write or edit so the gate can pin it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_coder.permissions.bash import Analysis, analyze, is_read_only
from pi_coder.permissions.rules import Match, RuleSet
from pi_coder.tools import lexical_path, real_path

__all__ = ["MODES", "Decision", "Policy", "PLAN_REASON", "protected_reason", "suggest_rule"]

Mode = Literal["auto", "ask", "accept-edits", "plan", "deny"]
MODES: tuple[str, ...] = ("auto", "ask", "accept-edits", "plan", "deny")
READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})
EDIT_TOOLS = frozenset({"edit", "write"})

PLAN_REASON = (
    "Plan mode: only read-only tools may run (read, grep, find, ls and read-only bash commands). "
    "Do not try to change anything; finish with a numbered plan for the user to approve."
)


@dataclass(slots=True)
class Decision:
    action: Literal["allow", "ask", "deny"]
    reason: str = ""
    rules: list[str] = field(default_factory=list)
    """Allow rules that would cover this call (offered by "allow this session" / "always allow")."""
    target: Path | None = None
    """The real path a write or edit call was judged on (the gate pins it for the tool)."""
    saveable: bool = True
    """Whether a saved allow rule would hold next time (not when one of your ask rules asked:
    ask beats allow, so the dialog does not offer "always allow" then)."""
    confine: bool = False
    """Allowed only because the parser judged the bash command read-only: run it in the read-only
    sandbox (``pi_coder.tools._shell.confine``) so a parser mistake cannot write."""


PROTECTED_FOLDERS = (".git", ".pi")


def protected_reason(path: str, cwd: str) -> str | None:
    """Why writing ``path`` (a tool argument) needs the user, or None: it lies in a ``.git`` or
    ``.pi`` folder or in pi's config folder (``credentials.json``, ``settings.toml``, ...),
    judged on its real path and on its spelling."""
    from pi_coder.paths import config_dir

    config = os.path.realpath(config_dir())
    for candidate in dict.fromkeys((str(real_path(path, cwd)), lexical_path(path, cwd))):
        if candidate == config or candidate.startswith(config.rstrip("/") + "/"):
            return f"{candidate} is in pi's config folder, which is protected."
        parts = candidate.split("/")[:-1]
        for folder in PROTECTED_FOLDERS:
            if folder in parts:
                return f"{candidate} is in a {folder} folder, which is protected."
    return None


def suggest_rule(tool_name: str, args: dict[str, Any], cwd: str, analysis: Analysis | None) -> list[str]:
    if tool_name == "bash" and analysis is not None and analysis.understood:
        texts = dict.fromkeys(
            c.text.replace("(", "?").replace(")", "?") for c in analysis.commands if not c.wrapper
        )
        return [f"bash({t})" for t in texts]
    if tool_name == "bash":
        return []
    if tool_name in EDIT_TOOLS or tool_name in READ_ONLY_TOOLS:
        path = args.get("path")
        if isinstance(path, str) and path:
            absolute = str(real_path(path, cwd))
            rel = os.path.relpath(absolute, os.path.realpath(cwd))
            shown = absolute if rel.startswith("..") else rel
            kind = "edit" if tool_name in EDIT_TOOLS else "read"
            return [f"{kind}({shown})"]
    return [tool_name]


class Policy:
    """The mode, the configured rules and the rules granted for this session."""

    def __init__(
        self, mode: str, rules: RuleSet, cwd: str, *, read_only_tools: frozenset[str] = frozenset()
    ) -> None:
        if mode not in MODES:
            raise ValueError(f'Unknown permission mode "{mode}": use one of {", ".join(MODES)}')
        self.mode: str = mode
        self.rules = rules
        self.session_rules = RuleSet(secret_rules=False)
        self.cwd = cwd
        self.read_only_tools = READ_ONLY_TOOLS | read_only_tools

    def decide(self, tool_name: str, args: dict[str, Any], *, tool_read_only: bool = False) -> Decision:
        """The decision for one call; ``tool_read_only``: the tool is marked read-only (extension
        ``read_only=True``, MCP ``readOnlyHint``), so it counts like ``read``."""
        mode = self.mode
        analysis = analyze(str(args.get("command", ""))) if tool_name == "bash" else None
        path = args.get("path") if tool_name in EDIT_TOOLS else None
        target = real_path(path, self.cwd) if isinstance(path, str) and path else None
        match = self.rules.match(tool_name, args, self.cwd, bash=analysis, secrets=mode != "auto")
        if match.verdict == "deny":
            return Decision("deny", "Blocked by a deny rule in the permission settings.")
        granted = self.session_rules.verdict(tool_name, args, self.cwd, bash=analysis, secrets=False) == "allow"
        verdict = "allow" if granted else match.verdict
        suggestion = suggest_rule(tool_name, args, self.cwd, analysis)
        if mode == "auto":
            if verdict == "ask":
                return Decision("ask", _ask_reason(match), suggestion, target, saveable=match.secret)
            if analysis is not None and not analysis.understood and self.rules.has_bash_deny():
                why = "; ".join(analysis.problems[:1]) or "not understood"
                return Decision(
                    "ask", f"The command cannot be checked against the deny rules ({why}).", suggestion, target
                )
            return Decision("allow", target=target)
        bash_read_only = analysis is not None and is_read_only(analysis, self.cwd)
        read_only = tool_read_only or tool_name in self.read_only_tools or bash_read_only
        if mode == "plan":
            if not read_only:
                return Decision("deny", PLAN_REASON)
            if verdict == "ask":
                return Decision("ask", _ask_reason(match), suggestion, saveable=match.secret)
            return Decision("allow", confine=bash_read_only)
        if verdict == "ask":
            decision = self._ask(mode, _ask_reason(match), suggestion, target)
            decision.saveable = match.secret
            return decision
        protected = protected_reason(path, self.cwd) if isinstance(path, str) and path else None
        if protected is not None and not granted and not self.rules.allows(tool_name, args, self.cwd, explicit=True):
            return self._ask(mode, protected, suggestion, target)
        if verdict == "allow" or read_only:
            return Decision("allow", target=target, confine=bash_read_only and verdict != "allow")
        if mode == "accept-edits" and tool_name in EDIT_TOOLS and self._inside(target):
            return Decision("allow", target=target)
        why = (
            "The command is not understood well enough to allow it."
            if analysis is not None and not analysis.understood
            else ""
        )
        return self._ask(mode, why, suggestion, target)

    def _ask(self, mode: str, reason: str, suggestion: list[str], target: Path | None = None) -> Decision:
        if mode == "deny":
            return Decision(
                "deny",
                f"Permission mode deny: this call would need approval, so it was refused. {reason}".strip(),
            )
        return Decision("ask", reason, suggestion, target)

    def _inside(self, target: Path | None) -> bool:
        if target is None:
            return False
        real_cwd = os.path.realpath(self.cwd)
        absolute = str(target)
        return absolute == real_cwd or absolute.startswith(real_cwd.rstrip(os.sep) + os.sep)


def _ask_reason(match: Match) -> str:
    """The dialog's reason for an "ask" verdict: the rule that asked, in words."""
    if match.rule is None:
        return ""
    if match.secret:
        return f"It may reveal or change a secret (built-in secret rule {match.rule.source})."
    return f"Your ask rule {match.rule.source} covers this call."
