"""The system prompt.

Default prompt, in order: who the assistant is; ``Available tools:`` with one line per active
tool; a note that more tools may exist; ``Guidelines:`` (which depend on the active tools); where
pi's own documentation lives; the append text; ``# Project Context`` with each context file; the
skills list (only when ``read`` is active); the current date; the working directory.

A custom prompt (SYSTEM.md or ``--system-prompt``) replaces everything up to the docs block; the
append text, project context, skills, date and cwd still follow it.

The function takes plain data so it can be tested without tools or files; callers pass the tool
snippets from ``pi_coder.tools`` and the files from ``pi_coder.resources.context_files``.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pi_coder.resources.context_files import ContextFile, load_project_context, read_prompt_argument

if TYPE_CHECKING:
    from pi_coder.resources.skills import Skill

__all__ = [
    "DEFAULT_TOOL_SNIPPETS",
    "PromptBuilder",
    "SystemPromptOptions",
    "build_system_prompt",
    "default_docs_paths",
    "format_skills",
    "load_system_prompt",
    "read_prompt_argument",
]

DEFAULT_TOOL_SNIPPETS: dict[str, str] = {
    "read": "Read the contents of a file (text or image)",
    "bash": "Run a shell command in the working directory (ls, grep, find, tests, git, ...)",
    "edit": "Make a surgical edit to a file by replacing an exact piece of text",
    "write": "Create a file or overwrite it completely",
    "grep": "Search file contents by regex or literal text (respects .gitignore)",
    "find": "Find files by glob pattern (respects .gitignore)",
    "ls": "List the entries of a directory",
}
"""Fallback one-line descriptions of the built-in tools, used when no snippet is passed."""

_IDENTITY = (
    "You are an expert coding assistant operating inside pi, a coding agent harness. "
    "You help the user by reading files, running commands, editing code and writing new files."
)

_CUSTOM_TOOLS_NOTE = "Other tools may also be available to you, depending on the project."

ToolSpec = str | tuple[str, str]


def build_system_prompt(
    *,
    cwd: str | os.PathLike[str],
    tools: Sequence[ToolSpec] | None = None,
    tool_snippets: Mapping[str, str] | None = None,
    guidelines: Sequence[str] = (),
    context_files: Iterable[ContextFile] = (),
    custom_prompt: str | None = None,
    append_prompt: str | None = None,
    skills: Sequence[Skill] | str | None = None,
    docs: Mapping[str, str | os.PathLike[str]] | None = None,
    date: _dt.date | str | None = None,
) -> str:
    """Assemble the system prompt.

    Args:
        cwd: Working directory shown at the end (backslashes become ``/``).
        tools: Active tools, each a name or ``(name, one-line description)``. ``None`` means
            the tool set is unknown (a custom prompt then still lists skills).
        tool_snippets: Descriptions by tool name for tools given by name only; built-in tools
            fall back to ``DEFAULT_TOOL_SNIPPETS``.
        guidelines: Extra guideline bullets (e.g. from tools), added after the built-in ones.
        context_files: AGENTS.md / CLAUDE.md files, in order.
        custom_prompt: SYSTEM.md or ``--system-prompt`` text; replaces the default prompt.
        append_prompt: APPEND_SYSTEM.md or ``--append-system-prompt`` text.
        skills: Skills the model may load, or a pre-formatted block.
        docs: Label -> path of pi's own documentation; ``None`` uses ``default_docs_paths()``.
        date: The current date; today by default.

    Returns:
        The prompt text.
    """
    resolved = _resolve_tools(tools, tool_snippets) if tools is not None else None
    names = [name for name, _ in resolved] if resolved is not None else None
    parts: list[str] = []
    if custom_prompt is not None and custom_prompt.strip():
        parts.append(custom_prompt.strip())
    else:
        parts.append(_default_body(resolved or [], guidelines, default_docs_paths() if docs is None else docs))
    skill_tool = "read" if names is None or "read" in names else ("bash" if "bash" in names else None)
    if append_prompt and append_prompt.strip():
        parts.append(append_prompt.strip())
    context = _project_context(context_files)
    if context:
        parts.append(context)
    if skill_tool is not None and skills:
        block = skills if isinstance(skills, str) else format_skills(skills, tool=skill_tool)
        if block:
            parts.append(block.strip())
    parts.append(f"Current date: {_date_text(date)}\nCurrent working directory: {_cwd_text(cwd)}")
    return "\n\n".join(parts)


@dataclass(slots=True, kw_only=True)
class SystemPromptOptions:
    """The base inputs of the system prompt, as an extension's ``ctx.get_system_prompt_options()``
    sees them (a copy: changing it changes nothing). Context files hold their full text."""

    cwd: str
    custom_prompt: str | None = None
    """SYSTEM.md or ``--system-prompt`` text, replacing the default body."""
    append_prompt: str | None = None
    """APPEND_SYSTEM.md or ``--append-system-prompt`` text."""
    selected_tools: list[str] = field(default_factory=list)
    tool_snippets: dict[str, str] = field(default_factory=dict)
    """One-line description by tool name (built-ins and extension tools' ``prompt_snippet``)."""
    prompt_guidelines: list[str] = field(default_factory=list)
    context_files: list[ContextFile] = field(default_factory=list)
    skills: list[Skill] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class PromptBuilder:
    """Builds the prompt for a set of active tools from the inputs read at start or ``/reload``."""

    cwd: str
    tool_snippets: dict[str, str]
    context_files: list[ContextFile]
    custom_prompt: str | None
    append_prompt: str | None
    skills: Sequence[Skill] | str | None

    def __call__(self, active: Sequence[ToolSpec], guidelines: Sequence[str] = ()) -> str:
        return build_system_prompt(
            cwd=self.cwd,
            tools=active,
            tool_snippets=self.tool_snippets,
            guidelines=guidelines,
            context_files=self.context_files,
            custom_prompt=self.custom_prompt,
            append_prompt=self.append_prompt,
            skills=self.skills,
        )

    def options(self, active: Sequence[ToolSpec], guidelines: Sequence[str] = ()) -> SystemPromptOptions:
        snippets = dict(self.tool_snippets)
        names: list[str] = []
        for spec in active:
            if isinstance(spec, tuple):
                names.append(spec[0])
                snippets[spec[0]] = spec[1]
            else:
                names.append(spec)
        return SystemPromptOptions(
            cwd=self.cwd,
            custom_prompt=self.custom_prompt,
            append_prompt=self.append_prompt,
            selected_tools=names,
            tool_snippets=snippets,
            prompt_guidelines=list(guidelines),
            context_files=[ContextFile(path=f.path, content=f.content) for f in self.context_files],
            skills=[] if self.skills is None or isinstance(self.skills, str) else list(self.skills),
        )


def load_system_prompt(
    cwd: str | os.PathLike[str],
    *,
    tools: Sequence[ToolSpec] | None = None,
    tool_snippets: Mapping[str, str] | None = None,
    guidelines: Sequence[str] = (),
    system_prompt: str | None = None,
    append_system_prompt: str | None = None,
    context_files: bool = True,
    skills: Sequence[Skill] | str | None = None,
    date: _dt.date | str | None = None,
    project_trusted: bool = True,
) -> tuple[str, list[str]]:
    """Read SYSTEM.md, APPEND_SYSTEM.md and the context files for ``cwd`` and build the prompt.

    Args:
        cwd: The session's working directory.
        tools: Active tools (see ``build_system_prompt``).
        tool_snippets: Descriptions by tool name.
        guidelines: Extra guideline bullets.
        system_prompt: ``--system-prompt`` (text or a file path); overrides SYSTEM.md.
        append_system_prompt: ``--append-system-prompt`` (text or a file path); overrides
            APPEND_SYSTEM.md.
        context_files: False skips AGENTS.md/CLAUDE.md (``--no-context-files``).
        skills: Skills for the prompt.
        date: The current date; today by default.
        project_trusted: False ignores ``.pi/SYSTEM.md`` and ``.pi/APPEND_SYSTEM.md``.

    Returns:
        The prompt and warnings about files that could not be read.
    """
    ctx = load_project_context(cwd, context_files=context_files, project_trusted=project_trusted)
    if system_prompt is not None:
        custom: str | None = read_prompt_argument(system_prompt, cwd)
    else:
        custom = ctx.system.content if ctx.system is not None else None
    if append_system_prompt is not None:
        append: str | None = read_prompt_argument(append_system_prompt, cwd)
    else:
        append = ctx.append_system.content if ctx.append_system is not None else None
    prompt = build_system_prompt(
        cwd=cwd,
        tools=tools,
        tool_snippets=tool_snippets,
        guidelines=guidelines,
        context_files=ctx.context_files,
        custom_prompt=custom,
        append_prompt=append,
        skills=skills,
        date=date,
    )
    return prompt, ctx.warnings


def _resolve_tools(tools: Sequence[ToolSpec], snippets: Mapping[str, str] | None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for tool in tools:
        name, snippet = (tool, None) if isinstance(tool, str) else tool
        if name in seen:
            continue
        seen.add(name)
        if not snippet:
            snippet = (snippets or {}).get(name) or DEFAULT_TOOL_SNIPPETS.get(name, "")
        out.append((name, " ".join(snippet.split())))
    return out


def _default_body(
    tools: list[tuple[str, str]], extra_guidelines: Sequence[str], docs: Mapping[str, str | os.PathLike[str]]
) -> str:
    if tools:
        tool_lines = "\n".join(f"- {name}: {snippet}" if snippet else f"- {name}" for name, snippet in tools)
    else:
        tool_lines = "(none)"
    names = {name for name, _ in tools}
    bullets = _guidelines(names)
    for extra in extra_guidelines:
        text = " ".join(extra.split())
        if text and text not in bullets:
            bullets.append(text)
    sections = [
        _IDENTITY,
        f"Available tools:\n{tool_lines}",
        _CUSTOM_TOOLS_NOTE,
        "Guidelines:\n" + "\n".join(f"- {b}" for b in bullets),
    ]
    docs_block = _docs_block(docs)
    if docs_block:
        sections.append(docs_block)
    return "\n\n".join(sections)


def _guidelines(names: set[str]) -> list[str]:
    out: list[str] = []
    search_tools = sorted(names & {"grep", "find", "ls"})
    if "bash" in names and not search_tools:
        out.append("Use bash to explore files and folders (ls, rg, find)")
    elif "bash" in names:
        out.append(
            f"Prefer the {'/'.join(search_tools)} tools over bash for exploring files: "
            "they are faster and respect .gitignore"
        )
    if "read" in names and "edit" in names:
        out.append("Read a file with the read tool before editing it; do not use cat or sed for this")
    if "edit" in names:
        out.append("Use edit for precise changes; the old text must match the file exactly")
    if "write" in names:
        out.append("Use write only for new files or complete rewrites")
    if "edit" in names or "write" in names:
        out.append(
            "When you summarise what you did, write plain text; do not cat files or use bash to show your work"
        )
    out.append("Be concise in your responses")
    out.append("Show file paths clearly when working with files")
    return out


def _docs_block(docs: Mapping[str, str | os.PathLike[str]]) -> str:
    entries = [(label, str(path)) for label, path in docs.items() if path]
    if not entries:
        return ""
    lines = "\n".join(f"- {label}: {path}" for label, path in entries)
    return (
        "Pi documentation (read it only when the user asks about pi itself: its settings, "
        "themes, prompt templates, keybindings, sessions or models):\n" + lines
    )


def _project_context(files: Iterable[ContextFile]) -> str:
    blocks = [f"## {_slashes(str(f.path))}\n\n{f.content.strip()}" for f in files]
    if not blocks:
        return ""
    return "# Project Context\n\nProject-specific instructions and guidelines:\n\n" + "\n\n".join(blocks)


def format_skills(skills: Sequence[Skill], *, tool: str = "read") -> str:
    """The ``<available_skills>`` block that tells the model which skills it may load (docs/architecture.md#skills-prompt-block).

    ``tool`` is the tool the intro tells the model to load a skill's file with (``read``, else
    ``bash``). Skills marked ``disable_model_invocation`` are left out. Returns "" when none remain.
    """
    rows: list[str] = []
    for skill in skills:
        if skill.disable_model_invocation or not skill.name:
            continue
        rows.append(
            "  <skill>\n"
            f"    <name>{_escape(skill.name)}</name>\n"
            f"    <description>{_escape(skill.description)}</description>\n"
            f"    <location>{_escape(_slashes(skill.location))}</location>\n"
            "  </skill>"
        )
    if not rows:
        return ""
    return (
        "The following skills provide specialized instructions for specific tasks. When a task "
        f"matches a skill's description, use the {tool} tool to load the skill's file at its location "
        "and follow its instructions. When a skill file references a relative path, resolve it against "
        "the skill's directory (the parent of its location) and use that absolute path in tool calls.\n\n"
        "<available_skills>\n" + "\n".join(rows) + "\n</available_skills>"
    )


def default_docs_paths() -> dict[str, str]:
    """pi_coder's README and settings reference, when they exist next to the package."""
    root = Path(__file__).resolve().parents[2]
    out: dict[str, str] = {}
    for label, name in (("README", "README.md"), ("Settings reference", "settings.example.toml")):
        path = root / name
        if path.is_file():
            out[label] = str(path)
    return out


def _escape(text: str) -> str:
    """XML-escape ``text`` (xml.sax.saxutils would pull in urllib: ~7 ms of imports)."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&apos;")
    )


def _date_text(date: _dt.date | str | None) -> str:
    if date is None:
        return _dt.date.today().isoformat()
    if isinstance(date, _dt.datetime):
        return date.date().isoformat()
    return date.isoformat() if isinstance(date, _dt.date) else date


def _cwd_text(cwd: str | os.PathLike[str]) -> str:
    return _slashes(os.fspath(cwd))


def _slashes(text: str) -> str:
    return text.replace("\\", "/")
