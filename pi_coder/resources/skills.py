"""Agent Skills: ``SKILL.md`` folders the model loads on demand (docs/architecture.md#skills).

``load_skills`` scans the locations of docs/architecture.md#skill-locations in precedence order (first wins on a name) and
returns the skills plus one warning per problem (bad frontmatter, missing description, invalid
name, collision, missing ``--skill`` path). ``expand_skill_command`` turns ``/skill:name args``
into the ``<skill ...>`` block Pi writes (docs/architecture.md#skill-commands). The prompt block itself is
``pi_coder.resources.system_prompt.format_skills``. No I/O at import; the frontmatter parser is a
small YAML subset (no PyYAML).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FrontmatterError",
    "Skill",
    "SkillSet",
    "expand_skill_command",
    "load_skills",
    "parse_frontmatter",
]

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
_SKIP_DIRS = frozenset({"node_modules", "__pycache__"})
_IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")


class FrontmatterError(ValueError):
    """The frontmatter does not parse; ``line`` is 1-based within the file."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(slots=True, frozen=True)
class Skill:
    name: str
    description: str
    file_path: str
    """Absolute path of ``SKILL.md`` (or the standalone ``*.md``), ``/`` separators."""
    base_dir: str
    source: str
    """Where it was found: ``cli``, ``project``, ``agents``, ``claude``, ``settings``, ``user``, ``extension``."""
    disable_model_invocation: bool = False
    frontmatter: dict[str, Any] = field(default_factory=dict)

    @property
    def location(self) -> str:
        return self.file_path


@dataclass(slots=True)
class SkillSet:
    skills: list[Skill] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    def visible(self) -> list[Skill]:
        """Skills the model is told about (``disable-model-invocation`` ones are not)."""
        return [s for s in self.skills if not s.disable_model_invocation]


# ---------------------------------------------------------------------- frontmatter


def _scalar(raw: str, line: int) -> Any:
    text = raw.strip()
    if not text:
        return ""
    if text[0] in "\"'":
        quote = text[0]
        if len(text) < 2 or not text.endswith(quote):
            raise FrontmatterError("unterminated quoted value", line)
        inner = text[1:-1]
        if quote == '"':
            return inner.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        return inner.replace("''", "'")
    if text.startswith("["):
        if not text.endswith("]"):
            raise FrontmatterError("unterminated list", line)
        body = text[1:-1].strip()
        return [_scalar(part, line) for part in body.split(",")] if body else []
    if " #" in text:
        text = text.split(" #", 1)[0].rstrip()
    lowered = text.lower()
    if lowered in ("true", "yes"):
        return True
    if lowered in ("false", "no"):
        return False
    if lowered in ("null", "~"):
        return None
    return text


def _block(lines: list[str], start: int, style: str) -> tuple[str, int]:
    """A ``|`` or ``>`` block scalar starting at ``lines[start]``; returns (text, next index)."""
    collected: list[str] = []
    indent: int | None = None
    i = start
    while i < len(lines):
        line = lines[i]
        if line.strip() and not line.startswith((" ", "\t")):
            break
        if line.strip():
            current = len(line) - len(line.lstrip())
            indent = current if indent is None else min(indent, current)
        collected.append(line)
        i += 1
    while collected and not collected[-1].strip():
        collected.pop()
    body = [ln[indent or 0 :] if ln.strip() else "" for ln in collected]
    if style.startswith(">"):
        paragraphs, current_par = [], []  # folded: lines join with spaces, blank lines break
        for ln in body:
            if ln:
                current_par.append(ln.strip())
            else:
                paragraphs.append(" ".join(current_par))
                current_par = []
        paragraphs.append(" ".join(current_par))
        return "\n".join(paragraphs), i
    return "\n".join(body), i


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Split ``---`` frontmatter from the body. No frontmatter: ``({}, text)``.

    Raises:
        FrontmatterError: An unclosed block or a line that is not ``key: value``.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        raise FrontmatterError("frontmatter is not closed with ---", 1)
    head = lines[1:end]
    body = "\n".join(lines[end + 1 :])
    data: dict[str, Any] = {}
    i = 0
    while i < len(head):
        line, number = head[i], i + 2
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith((" ", "\t")):
            raise FrontmatterError(f"unexpected indentation: {line.strip()!r}", number)
        key, sep, rest = line.partition(":")
        if not sep or not key.strip():
            raise FrontmatterError(f"expected 'key: value', got {line.strip()!r}", number)
        key, rest = key.strip(), rest.strip()
        if rest in ("|", "|-", "|+", ">", ">-", ">+"):
            data[key], i = _block(head, i, rest)
            continue
        if rest:
            data[key] = _scalar(rest, number)
            continue
        # A nested mapping or a "- item" list on the following indented lines.
        items: list[Any] = []
        mapping: dict[str, Any] = {}
        while i < len(head) and (head[i].startswith((" ", "\t")) or not head[i].strip()):
            sub, sub_number = head[i].strip(), i + 2
            i += 1
            if not sub:
                continue
            if sub.startswith("- ") or sub == "-":
                items.append(_scalar(sub[1:], sub_number))
            else:
                sub_key, sub_sep, sub_rest = sub.partition(":")
                if not sub_sep:
                    raise FrontmatterError(f"expected 'key: value', got {sub!r}", sub_number)
                mapping[sub_key.strip()] = _scalar(sub_rest, sub_number)
        data[key] = items if items else (mapping if mapping else None)
    return data, body


# ---------------------------------------------------------------------- loading


def _slashes(path: str) -> str:
    return path.replace("\\", "/")


class _Loader:
    def __init__(self) -> None:
        self.result = SkillSet()
        self._names: dict[str, Skill] = {}
        self._seen_real: set[str] = set()
        self._reported: set[str] = set()

    def warn(self, text: str) -> None:
        if text not in self._reported:
            self._reported.add(text)
            self.result.warnings.append(text)

    def load_file(self, path: Path, source: str, *, standalone: bool) -> None:
        real = os.path.realpath(path)
        if real in self._seen_real:
            return
        self._seen_real.add(real)
        shown = _slashes(os.path.abspath(path))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.warn(f"skill {shown}: cannot read it ({exc})")
            return
        try:
            meta, _body = parse_frontmatter(text)
        except FrontmatterError as exc:
            self.warn(f"skill {shown}: invalid frontmatter, {exc}; not loaded")
            return
        description = meta.get("description")
        if not isinstance(description, str) or not description.strip():
            if not standalone:  # a plain *.md without a description is just a file, not a skill
                self.warn(f"skill {shown}: no description in its frontmatter; not loaded")
            return
        default = path.stem if standalone else path.parent.name
        name = str(meta.get("name") or default).strip()
        if len(name) > MAX_NAME or not NAME_RE.match(name):
            self.warn(
                f'skill {shown}: name "{name}" should be lowercase letters, digits and single hyphens '
                f"(at most {MAX_NAME} characters)"
            )
        if len(description) > MAX_DESCRIPTION:
            self.warn(f"skill {shown}: description is over {MAX_DESCRIPTION} characters")
        skill = Skill(
            name=name,
            description=description.strip(),
            file_path=shown,
            base_dir=_slashes(os.path.dirname(os.path.abspath(path))),
            source=source,
            disable_model_invocation=meta.get("disable-model-invocation") is True,
            frontmatter=meta,
        )
        first = self._names.get(name)
        if first is not None:
            self.warn(f'skill "{name}" defined twice: using {first.file_path}, ignoring {skill.file_path}')
            return
        self._names[name] = skill
        self.result.skills.append(skill)

    def scan(self, root: Path, source: str) -> None:
        """A skills root: its ``*.md`` files and (recursively) its folders; a ``SKILL.md`` folder is a skill."""
        if (root / "SKILL.md").is_file():
            self.load_file(root / "SKILL.md", source, standalone=False)
            return
        ignored = _ignored_names(root)
        self._walk(root, source, ignored, top=True, visited=set())

    def _walk(self, folder: Path, source: str, ignored: set[str], *, top: bool, visited: set[str]) -> None:
        real = os.path.realpath(folder)
        if real in visited:
            return
        visited.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith(".") or entry.name in _SKIP_DIRS or entry.name in ignored:
                continue
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if (path / "SKILL.md").is_file():
                    self.load_file(path / "SKILL.md", source, standalone=False)
                else:
                    self._walk(path, source, set(), top=False, visited=visited)
            elif top and entry.name.endswith(".md") and entry.name != "SKILL.md":
                self.load_file(path, source, standalone=True)

    def path(self, target: Path, source: str, *, explicit: bool) -> None:
        if target.is_dir():
            self.scan(target, source)
        elif target.is_file():
            self.load_file(target, source, standalone=target.name != "SKILL.md")
        elif explicit:
            self.warn(f"skill path not found: {target}")


def _ignored_names(root: Path) -> set[str]:
    """Plain names listed in the root's ignore files (patterns beyond a bare name are not matched)."""
    names: set[str] = set()
    for ignore in _IGNORE_FILES:
        try:
            text = (root / ignore).read_text(encoding="utf-8")
        except OSError:
            continue
        for line in text.splitlines():
            line = line.strip().strip("/")
            if line and not line.startswith(("#", "!")) and "/" not in line and "*" not in line:
                names.add(line)
    return names


def _git_root(cwd: Path) -> Path | None:
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _agents_folders(cwd: Path) -> list[Path]:
    """``.agents/skills`` in cwd, then its ancestors up to the git root (else ``/``), except ``~``'s."""
    home = Path(os.path.realpath(Path.home()))
    stop = _git_root(cwd)
    out: list[Path] = []
    for folder in (cwd, *cwd.parents):
        if Path(os.path.realpath(folder)) != home:
            out.append(folder / ".agents" / "skills")
        if stop is not None and folder == stop:
            break
    return out


def _resolve(path: str, base: Path) -> Path:
    candidate = Path(os.path.expanduser(path))
    return candidate if candidate.is_absolute() else base / candidate


def load_skills(
    cwd: str | os.PathLike[str],
    *,
    config_dir: str | os.PathLike[str],
    project_trusted: bool,
    cli_paths: Sequence[str] = (),
    no_skills: bool = False,
    project_paths: Sequence[str] = (),
    global_paths: Sequence[str] = (),
    claude_skills: bool = True,
    extra_paths: Sequence[str] = (),
) -> SkillSet:
    """Discover skills in the order of docs/architecture.md#skill-locations; the first of a name wins.

    Args:
        cwd: The session's working directory.
        config_dir: pi's configuration folder (``<config>/skills/``).
        project_trusted: False skips every project location (``.pi/skills``, ``.agents/skills``,
            ``.claude/skills``, the project settings' ``skills``).
        cli_paths: ``--skill PATH`` values (relative to ``cwd``); always read.
        no_skills: ``-ns``: only ``cli_paths``.
        project_paths: The project settings' ``skills`` (already resolved against their file).
        global_paths: The global settings' ``skills``.
        claude_skills: Read ``.claude/skills`` in cwd and ``~/.claude/skills``.
        extra_paths: ``resources_discover`` skill paths.
    """
    root = Path(os.path.abspath(cwd))
    loader = _Loader()
    for path in cli_paths:
        loader.path(_resolve(path, root), "cli", explicit=True)
    if not no_skills:
        if project_trusted:
            loader.path(root / ".pi" / "skills", "project", explicit=False)
            for folder in _agents_folders(root):
                loader.path(folder, "agents", explicit=False)
            if claude_skills:
                loader.path(root / ".claude" / "skills", "claude", explicit=False)
            for path in project_paths:
                loader.path(_resolve(path, root), "settings", explicit=True)
        for path in global_paths:
            loader.path(_resolve(path, Path(config_dir)), "settings", explicit=True)
        home = Path.home()
        loader.path(Path(config_dir) / "skills", "user", explicit=False)
        loader.path(home / ".agents" / "skills", "user", explicit=False)
        if claude_skills:
            loader.path(home / ".claude" / "skills", "user", explicit=False)
        for path in extra_paths:
            loader.path(_resolve(path, root), "extension", explicit=True)
    return loader.result


# ---------------------------------------------------------------------- /skill:name


def expand_skill_command(text: str, skills: SkillSet | Sequence[Skill]) -> str:
    """``/skill:name [args]`` -> Pi's ``<skill>`` block (docs/architecture.md#skill-commands); anything else is returned as is.

    Raises:
        OSError: The skill's file cannot be read (the caller reports it and sends the text as is).
    """
    if not text.startswith("/skill:"):
        return text
    head, _, args = text[len("/skill:") :].partition(" ")
    name = head.split("\n", 1)[0]
    if name != head:
        args = text[len("/skill:") + len(name) :].lstrip(" ")
    found = skills.get(name) if isinstance(skills, SkillSet) else next((s for s in skills if s.name == name), None)
    if found is None:
        return text
    _meta, body = parse_frontmatter(Path(found.file_path).read_text(encoding="utf-8"))
    block = (
        f'<skill name="{found.name}" location="{found.file_path}">\n'
        f"References are relative to {found.base_dir}.\n\n{body.strip()}\n</skill>"
    )
    args = args.strip()
    return f"{block}\n\n{args}" if args else block
