"""The decision for one tool call: the permission mode applied to the rules.

=============  ==================================================================================
``auto``       everything runs (Pi's behaviour); deny rules and the user's ask rules still apply
``ask``        reads run; anything that can change something asks unless an allow rule covers it
``accept-edits`` like ``ask``, but write and edit inside the working folder run
``plan``       reads only (read, grep, find, ls, bash the parser proves read-only); the rest is
               refused with the planning reason
``deny``       like ``ask``, but what would ask is refused (headless use); never waits
=============  ==================================================================================
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal

from pi_coder.permissions.bash import Analysis, analyze, is_read_only
from pi_coder.permissions.rules import RuleSet

__all__ = ["MODES", "Decision", "Policy", "PLAN_REASON", "suggest_rule"]

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
    confine: bool = False
    """Allowed only because the parser judged the bash command read-only: run it in the read-only
    sandbox (``pi_coder.tools._shell.confine``) so a parser mistake cannot write."""


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
            absolute = os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
            rel = os.path.relpath(absolute, cwd)
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
        secrets = mode != "auto"
        verdict = self.rules.verdict(tool_name, args, self.cwd, bash=analysis, secrets=secrets)
        if verdict == "deny":
            return Decision("deny", "Blocked by a deny rule in the permission settings.")
        session_verdict = self.session_rules.verdict(tool_name, args, self.cwd, bash=analysis, secrets=False)
        if verdict is None and session_verdict == "allow":
            verdict = "allow"
        suggestion = suggest_rule(tool_name, args, self.cwd, analysis)
        if mode == "auto":
            if verdict == "ask":
                return Decision("ask", "An ask rule covers this call.", suggestion)
            if analysis is not None and not analysis.understood and self.rules.has_bash_deny():
                why = "; ".join(analysis.problems[:1]) or "not understood"
                return Decision(
                    "ask", f"The command cannot be checked against the deny rules ({why}).", suggestion
                )
            return Decision("allow")
        bash_read_only = analysis is not None and is_read_only(analysis, self.cwd)
        read_only = tool_read_only or tool_name in self.read_only_tools or bash_read_only
        if mode == "plan":
            if verdict == "ask":
                return Decision("ask", "An ask rule covers this call.", suggestion)
            if read_only:
                return Decision("allow", confine=bash_read_only)
            return Decision("deny", PLAN_REASON)
        if verdict == "ask":
            return self._ask(mode, "An ask rule covers this call.", suggestion)
        if verdict == "allow" or read_only:
            return Decision("allow", confine=bash_read_only and verdict != "allow")
        if mode == "accept-edits" and tool_name in EDIT_TOOLS and self._inside(args):
            return Decision("allow")
        why = (
            "The command is not understood well enough to allow it."
            if analysis is not None and not analysis.understood
            else ""
        )
        return self._ask(mode, why, suggestion)

    def _ask(self, mode: str, reason: str, suggestion: list[str]) -> Decision:
        if mode == "deny":
            return Decision(
                "deny",
                f"Permission mode deny: this call would need approval, so it was refused. {reason}".strip(),
            )
        return Decision("ask", reason, suggestion)

    def _inside(self, args: dict[str, Any]) -> bool:
        path = args.get("path")
        if not isinstance(path, str) or not path:
            return False
        real_cwd = os.path.realpath(self.cwd)
        absolute = os.path.realpath(os.path.join(self.cwd, os.path.expanduser(path)))
        return absolute == real_cwd or absolute.startswith(real_cwd.rstrip(os.sep) + os.sep)
