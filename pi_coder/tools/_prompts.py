"""What each tool contributes to the system prompt."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["TOOL_PROMPT_SNIPPETS", "tool_prompt_guidelines"]

TOOL_PROMPT_SNIPPETS: dict[str, str] = {
    "read": "Read file contents",
    "bash": "Execute bash commands (ls, grep, find, etc.)",
    "edit": "Make surgical edits to files (find exact text and replace)",
    "write": "Create or overwrite files",
    "grep": "Search file contents for patterns (respects .gitignore)",
    "find": "Find files by glob pattern (respects .gitignore)",
    "ls": "List directory contents",
}
"""One line per tool for the system prompt's tool list (``- <name>: <snippet>``)."""


def tool_prompt_guidelines(active: Iterable[str]) -> list[str]:
    """The system prompt's guideline bullets for the active tool names, in Pi's order."""
    names = set(active)
    explore = names & {"grep", "find", "ls"}
    lines: list[str] = []
    if "bash" in names and not explore:
        lines.append("Use bash for file operations like ls, rg, find")
    elif "bash" in names and explore:
        lines.append("Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)")
    if "read" in names and "edit" in names:
        lines.append("Use read to examine files before editing. You must use this tool instead of cat or sed.")
    if "edit" in names:
        lines.append(
            "Use edit for precise changes (old text must match exactly); keep each oldText small but unique, "
            "and put several changes to one file into one call as separate, non-overlapping edits"
        )
    if "write" in names:
        lines.append("Use write only for new files or complete rewrites")
    if "edit" in names or "write" in names:
        lines.append(
            "When summarizing your actions, output plain text directly - do NOT use cat or bash to display "
            "what you did"
        )
    lines.append("Be concise in your responses")
    lines.append("Show file paths clearly when working with files")
    return lines
