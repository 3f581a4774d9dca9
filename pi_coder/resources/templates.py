"""Prompt templates: ``/name args`` expands a Markdown file into the prompt.

Templates are ``*.md`` files (not recursive) in ``config_dir()/prompts`` and
``<cwd>/.pi/prompts``; a project template wins over a global one of the same name, and files or
folders passed as ``extra_paths`` (the ``prompts`` setting, ``--prompt-template``) win over both.
The name is the file name without ``.md``. An optional frontmatter block sets ``description``
(else the first non-empty line is used) and ``argument-hint``.

Arguments are split like a shell does (single and double quotes group words) and substituted in
one pass, so an argument containing ``$1`` is not expanded again:
``$1`` ... ``$N`` (missing -> empty), ``${N:-default}``, ``$@`` and ``$ARGUMENTS`` (all arguments
joined by spaces), ``${@:N}`` (from the N-th on) and ``${@:N:L}`` (L arguments from the N-th).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pi_coder.paths import config_dir, project_dir

__all__ = [
    "PromptTemplate",
    "expand_template",
    "load_templates",
    "parse_frontmatter",
    "split_args",
    "substitute_args",
]

_DESCRIPTION_MAX = 60

_PLACEHOLDER = re.compile(
    r"\$\{@:(?P<start>\d+)(?::(?P<length>\d+))?\}"
    r"|\$\{(?P<num_d>\d+):-(?P<default>[^}]*)\}"
    r"|\$ARGUMENTS"
    r"|\$@"
    r"|\$(?P<num>[1-9]\d*)"
)


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """One template file."""

    name: str
    description: str
    content: str
    """The body, without frontmatter."""
    path: Path
    source: Literal["global", "project", "path"]
    argument_hint: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    """All frontmatter keys."""

    def expand(self, args_text: str) -> str:
        """The template body with ``args_text`` split and substituted."""
        return substitute_args(self.content, split_args(args_text))


def load_templates(
    cwd: str | os.PathLike[str],
    *,
    extra_paths: Iterable[str | os.PathLike[str]] = (),
    warnings: list[str] | None = None,
    project_trusted: bool = True,
    discover: bool = True,
) -> dict[str, PromptTemplate]:
    """Discover templates for ``cwd``.

    Args:
        cwd: The session's working directory.
        extra_paths: More template files or folders; these win on name clashes.
        warnings: Receives a message for each file that cannot be read.
        project_trusted: False skips ``.pi/prompts`` (the folder is not trusted).
        discover: False reads only ``extra_paths`` (``-np/--no-prompt-templates``).

    Returns:
        Templates by name, sorted by name.
    """
    sink = warnings if warnings is not None else []
    found: dict[str, PromptTemplate] = {}
    sources: list[tuple[Path, Literal["global", "project", "path"]]] = []
    if discover:
        sources.append((config_dir() / "prompts", "global"))
    if discover and project_trusted:
        sources.append((project_dir(cwd) / "prompts", "project"))
    sources.extend((Path(p).expanduser(), "path") for p in extra_paths)
    for location, source in sources:
        for file in _markdown_files(location):
            template = _load_file(file, source, sink)
            if template is not None:
                found[template.name] = template
    return dict(sorted(found.items()))


def expand_template(text: str, templates: Mapping[str, PromptTemplate] | Iterable[PromptTemplate]) -> str:
    """Expand ``/name args`` when a template called ``name`` exists; otherwise return ``text``.

    Args:
        text: What the user typed.
        templates: Templates by name, or an iterable of templates.

    Returns:
        The expanded template, or ``text`` unchanged.
    """
    if not text.startswith("/"):
        return text
    match = re.match(r"/(\S+)(?:\s+(.*))?\Z", text, re.DOTALL)
    if match is None:
        return text
    by_name = templates if isinstance(templates, Mapping) else {t.name: t for t in templates}
    template = by_name.get(match.group(1))
    if template is None:
        return text
    return template.expand(match.group(2) or "")


def split_args(text: str) -> list[str]:
    """Split ``text`` into arguments like a shell: whitespace separates, quotes group.

    Backslashes are kept as typed (Windows paths survive). An unclosed quote runs to the end.
    ``""`` is an empty argument.
    """
    args: list[str] = []
    current: list[str] = []
    in_token = False
    quote: str | None = None
    for ch in text:
        if quote is not None:
            if ch == quote:
                quote = None
            else:
                current.append(ch)
        elif ch in "\"'":
            quote = ch
            in_token = True
        elif ch.isspace():
            if in_token:
                args.append("".join(current))
                current, in_token = [], False
        else:
            current.append(ch)
            in_token = True
    if in_token:
        args.append("".join(current))
    return args


def substitute_args(content: str, args: Sequence[str]) -> str:
    """Replace the placeholders in ``content`` with ``args`` (one pass, no recursion)."""

    def replace(m: re.Match[str]) -> str:
        if m.group("start") is not None:
            start = max(int(m.group("start")) - 1, 0)
            length = m.group("length")
            picked = args[start:] if length is None else args[start : start + int(length)]
            return " ".join(picked)
        if m.group("num_d") is not None:
            index = int(m.group("num_d")) - 1
            value = args[index] if 0 <= index < len(args) else ""
            return value or m.group("default")
        if m.group("num") is not None:
            index = int(m.group("num")) - 1
            return args[index] if index < len(args) else ""
        return " ".join(args)  # $@ and $ARGUMENTS

    return _PLACEHOLDER.sub(replace, content)


def parse_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """Split simple ``key: value`` frontmatter from a Markdown body.

    Only flat ``key: value`` lines are understood (quotes around a value are removed); lines
    that are not of that shape are ignored. Without a closing ``---`` there is no frontmatter.

    Returns:
        The keys (lower-case) and the body.
    """
    normalized = text.lstrip("\ufeff").replace("\r\n", "\n")
    if not normalized.startswith("---\n"):
        return {}, normalized
    end = re.search(r"^---[ \t]*$", normalized[4:], re.MULTILINE)
    if end is None:
        return {}, normalized
    block = normalized[4 : 4 + end.start()]
    body = normalized[4 + end.end() :].removeprefix("\n")
    meta: dict[str, str] = {}
    for line in block.splitlines():
        if line.lstrip().startswith("#") or ":" not in line:
            continue
        key, value = line.split(":", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        meta[key.strip().lower()] = value
    return meta, body


def _markdown_files(location: Path) -> list[Path]:
    if location.is_file():
        return [location] if location.suffix.lower() == ".md" else []
    try:
        entries = sorted(location.iterdir())
    except OSError:
        return []
    return [p for p in entries if p.suffix.lower() == ".md" and p.is_file()]


def _load_file(
    path: Path, source: Literal["global", "project", "path"], warnings: list[str]
) -> PromptTemplate | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        warnings.append(f"{path}: cannot read prompt template ({exc.strerror or exc})")
        return None
    meta, body = parse_frontmatter(text)
    description = meta.get("description") or _first_line(body)
    return PromptTemplate(
        name=path.stem,
        description=description,
        content=body,
        path=path,
        source=source,
        argument_hint=meta.get("argument-hint") or None,
        metadata=meta,
    )


def _first_line(body: str) -> str:
    for line in body.splitlines():
        line = line.strip()
        if line:
            if len(line) > _DESCRIPTION_MAX:
                return line[: _DESCRIPTION_MAX - 3].rstrip() + "..."
            return line
    return ""
