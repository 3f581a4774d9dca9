"""Agent definition files: Markdown with frontmatter, Pi's own and Claude Code's as-is.

Where they are read, first name wins: ``.pi/agents/*.md`` and ``.claude/agents/*.md`` of the
project (only when the folder is trusted), then ``<config>/agents/*.md``, then the built-in
``general-purpose`` agent. Frontmatter keys: ``name``, ``description``, ``tools`` (a comma list
or a list; Claude Code's names ``Read``, ``Bash``, ``Glob``... map to pi's tools, others are
ignored; none: every tool of the parent), ``model`` (a model pattern, or Claude Code's
``sonnet``/``opus``/``haiku``/``inherit``), ``thinking``, ``max_turns``, ``max_budget_usd``. Other
keys (``color``, ``permissionMode``, ``hooks``, ...) are ignored; ``disabled: true`` skips the file. The body is the system prompt.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["GENERAL_PURPOSE", "READ_ONLY_TOOLS", "AgentDefinition", "AgentSet", "load_agents"]

Source = Literal["builtin", "user", "project", "claude"]

READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})
"""Tools that only read: an agent using no other may run in plan mode."""

_CLAUDE_TOOLS = {
    "read": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "bash": "bash",
    "grep": "grep",
    "glob": "find",
    "ls": "ls",
    "find": "find",
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    name: str
    description: str
    prompt: str
    """The system prompt (the file's body); empty: pi's default system prompt."""
    tools: tuple[str, ...] | None = None
    """pi tool names; None: every tool the parent has (but ``task``)."""
    model: str | None = None
    """A model pattern; None or ``inherit``: the parent's model."""
    thinking: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    source: Source = "builtin"
    path: str | None = None
    disabled: bool = False
    """Claude Code's ``disabled: true``: the file is skipped."""

    @property
    def read_only(self) -> bool:
        return self.tools is not None and set(self.tools) <= READ_ONLY_TOOLS


GENERAL_PURPOSE = AgentDefinition(
    name="general-purpose",
    description="General agent for researching questions, searching code and doing multi-step tasks; has every tool.",
    prompt="",
)


@dataclass(slots=True)
class AgentSet:
    agents: list[AgentDefinition]
    warnings: list[str]

    def get(self, name: str) -> AgentDefinition | None:
        return next((a for a in self.agents if a.name == name), None)


def _tools(value: Any) -> tuple[str, ...] | None:
    if value is None or value == "" or value == "*":
        return None
    items = value if isinstance(value, list) else str(value).split(",")
    out: list[str] = []
    for item in items:
        name = str(item).strip()
        name = name.split("(", 1)[0].strip()  # Claude Code's "Bash(git *)" narrows a tool: keep the tool
        mapped = _CLAUDE_TOOLS.get(name.lower(), name if name.islower() else None)
        if mapped and mapped not in out:
            out.append(mapped)
    return tuple(out)


def _number(value: Any, kind: type[int] | type[float]) -> Any:
    if value is None or value == "":
        return None
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number, got {value!r}") from None
    if number <= 0:
        raise ValueError(f"expected a number above 0, got {value!r}")
    return number


def parse_agent(text: str, path: Path, source: Source) -> AgentDefinition:
    """The definition in ``text`` (read from ``path``).

    Raises:
        ValueError: bad frontmatter, name or limit.
    """
    from pi_coder.resources.skills import FrontmatterError, parse_frontmatter

    try:
        data, body = parse_frontmatter(text)
    except FrontmatterError as exc:
        raise ValueError(str(exc)) from None
    name = str(data.get("name") or path.stem).strip()
    if not _NAME.match(name):
        raise ValueError(f"agent name {name!r}: use lower-case letters, digits, - and _")
    model = data.get("model")
    model = None if model in (None, "", "inherit") else str(model).strip()
    thinking = data.get("thinking")
    disallowed = set(_tools(data.get("disallowedTools")) or ())
    tools = _tools(data.get("tools"))
    if tools is not None and disallowed:
        tools = tuple(t for t in tools if t not in disallowed)
    return AgentDefinition(
        name=name,
        description=" ".join(str(data.get("description") or "").split()),
        prompt=body.strip(),
        tools=tools,
        model=model,
        thinking=None if thinking in (None, "") else str(thinking).strip(),
        max_turns=_number(data.get("max_turns") or data.get("maxTurns"), int),
        max_budget_usd=_number(data.get("max_budget_usd"), float),
        source=source,
        path=str(path),
        disabled=data.get("disabled") is True or str(data.get("disabled")).lower() == "true",
    )


def load_agents(cwd: str | os.PathLike[str], config_dir: Path, *, project_trusted: bool) -> AgentSet:
    """Every agent definition for ``cwd`` (see the module docstring); problems become warnings."""
    root = Path(cwd)
    folders: list[tuple[Path, Source]] = []
    if project_trusted:
        folders += [(root / ".pi" / "agents", "project"), (root / ".claude" / "agents", "claude")]
    folders.append((config_dir / "agents", "user"))
    found: dict[str, AgentDefinition] = {}
    warnings: list[str] = []
    for folder, source in folders:
        try:
            files = sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
        except OSError:
            continue
        for file in files:
            try:
                agent = parse_agent(file.read_text(encoding="utf-8"), file, source)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                warnings.append(f"{file}: {exc}; agent skipped")
                continue
            if agent.disabled:
                continue
            found.setdefault(agent.name, agent)
    found.setdefault(GENERAL_PURPOSE.name, GENERAL_PURPOSE)
    return AgentSet(list(found.values()), warnings)
