"""What the configured packages contribute, read from disk without installing anything.

:func:`configured` lists the entries of the user's and (in a trusted folder) the project's
settings; :func:`resolve` finds each one's files: a PyPI distribution in the scope's venv, a git
clone, or a local folder. A distribution (or a folder with ``pyproject.toml``) offers extensions
through ``pi_coder.extensions`` entry points and resources through ``skills/``, ``prompts/`` and
``themes/`` folders inside its top-level packages (package data) or at its root; a plain folder
offers ``extensions/*.py`` and the same resource folders.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pi_coder.packages.entry_point_file import GROUP as ENTRY_POINT_GROUP
from pi_coder.packages.entry_point_file import group_entries
from pi_coder.packages.env import PackageEnv
from pi_coder.packages.sources import PackageEntry, Scope, allowed, entries_from, normalize_name

__all__ = ["PackageExtension", "ResolvedPackage", "configured", "dependencies_of", "resolve", "resolve_all"]



@dataclass(frozen=True, slots=True)
class PackageExtension:
    """One extension of a package: an entry point (``module:attr``) or a file or package folder."""

    name: str
    kind: str
    """``entry_point``, ``file`` or ``package`` (the extension loader's source kinds)."""
    target: str


@dataclass(slots=True)
class ResolvedPackage:
    entry: PackageEntry
    installed: bool
    version: str = ""
    root: str = ""
    sys_paths: list[str] = field(default_factory=list)
    """Folders to put on ``sys.path`` before importing the package's extensions."""
    extensions: list[PackageExtension] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    themes: list[str] = field(default_factory=list)
    disabled: dict[str, list[str]] = field(default_factory=dict)
    """Resource kind -> names the entry's filters turn off."""

    @property
    def name(self) -> str:
        return self.entry.source.name

    def contributes(self) -> str:
        """``extensions: a; skills: b, c`` (what loads), or ``nothing``."""
        parts = []
        for kind in ("extensions", "skills", "prompts", "themes"):
            names = resource_names(self, kind)
            if names:
                parts.append(f"{kind}: {', '.join(names)}")
        return "; ".join(parts) or "nothing"


def resource_names(package: ResolvedPackage, kind: str) -> list[str]:
    if kind == "extensions":
        return [ext.name for ext in package.extensions]
    return [_resource_name(path) for path in getattr(package, kind)]


def _resource_name(path: str) -> str:
    p = Path(path)
    return p.parent.name if p.name == "SKILL.md" else p.stem if p.is_file() else p.name


def configured(
    cwd: str, global_data: Mapping[str, object], project_data: Mapping[str, object], *, project_trusted: bool,
    global_base: Path, warnings: list[str] | None = None,
) -> list[PackageEntry]:
    """Project entries (trusted folder only) first, then the user's; a project entry wins over
    the user's entry for the same package."""
    sink = warnings if warnings is not None else []
    project = entries_from(project_data, "project", Path(cwd) / ".pi", sink) if project_trusted else []
    seen = {entry.source.identity for entry in project}
    user = [e for e in entries_from(global_data, "user", global_base, sink) if e.source.identity not in seen]
    return [*project, *user]


def resolve_all(cwd: str, entries: Sequence[PackageEntry], root: Path | None = None) -> list[ResolvedPackage]:
    envs: dict[Scope, PackageEnv] = {}
    out = []
    for entry in entries:
        env = envs.get(entry.scope) or envs.setdefault(entry.scope, PackageEnv(entry.scope, cwd, root))
        out.append(resolve(entry, env))
    return out


def resolve(entry: PackageEntry, env: PackageEnv) -> ResolvedPackage:
    """The files of one entry (``installed`` False when they are not there)."""
    source = entry.source
    site = env.site_packages()
    if source.kind == "pypi":
        dist = _find_dist(site, source.identity) if site is not None else None
        if dist is None or site is None:
            return ResolvedPackage(entry=entry, installed=False)
        package = _from_dist(entry, site, dist)
    else:
        folder = Path(source.path) if source.kind == "local" else env.clone_dir(source)
        if not folder.is_dir():
            return ResolvedPackage(entry=entry, installed=False)
        package = _from_folder(entry, folder)
        if site is not None and dependencies_of(folder):
            package.sys_paths.append(str(site))
    _apply_filters(package)
    return package


def _find_dist(site: Path, name: str) -> Path | None:
    try:
        names = os.listdir(site)
    except OSError:
        return None
    for item in names:
        if item.endswith(".dist-info") and normalize_name(item[: -len(".dist-info")].rsplit("-", 1)[0]) == name:
            return site / item
    return None


def _from_dist(entry: PackageEntry, site: Path, dist: Path) -> ResolvedPackage:
    version = dist.name[: -len(".dist-info")].rsplit("-", 1)[-1]
    package = ResolvedPackage(entry=entry, installed=True, version=version, root=str(dist), sys_paths=[str(site)])
    try:
        text = (dist / "entry_points.txt").read_text(encoding="utf-8")
    except OSError:
        text = ""
    package.extensions = [PackageExtension(n, "entry_point", t) for n, t in group_entries(text)]
    tops: list[Path] = []
    try:
        record = (dist / "RECORD").read_text(encoding="utf-8")
    except OSError:
        record = ""
    for line in record.splitlines():
        first = line.split(",", 1)[0].split("/", 1)
        if len(first) == 2 and not first[0].endswith((".dist-info", ".data")) and first[0] != "..":
            top = site / first[0]
            if top not in tops:
                tops.append(top)
    for top in tops:
        _add_resources(package, top)
    return package


def _from_folder(entry: PackageEntry, folder: Path) -> ResolvedPackage:
    package = ResolvedPackage(entry=entry, installed=True, root=str(folder))
    project = _pyproject(folder)
    if project is not None:
        package.version = str(project.get("version") or "")
        groups = project.get("entry-points")
        points = groups.get(ENTRY_POINT_GROUP) if isinstance(groups, Mapping) else None
        if isinstance(points, Mapping):
            package.extensions = [PackageExtension(str(n), "entry_point", str(t)) for n, t in points.items()]
        code = folder / "src" if (folder / "src").is_dir() else folder
        package.sys_paths.append(str(code))
        for child in sorted(code.iterdir()):
            if (child / "__init__.py").is_file():
                _add_resources(package, child)
    else:
        package.extensions = _scan_extensions(folder / "extensions")
    _add_resources(package, folder)
    head = folder / ".git" / "HEAD"
    if head.exists():
        commit = _git_head(folder)
        package.version = f"{package.version} ({commit})" if package.version and commit else package.version or commit
    return package


def _git_head(folder: Path) -> str:
    """The short commit of a clone, read from its files (no git process: the folder may be a
    project's, not yet trusted, and its git configuration could run commands)."""
    git = folder / ".git"
    try:
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head[:7]
        ref = head[len("ref: ") :]
        try:
            return (git / ref).read_text(encoding="utf-8").strip()[:7]
        except OSError:
            for line in (git / "packed-refs").read_text(encoding="utf-8").splitlines():
                if line.endswith(" " + ref):
                    return line[:7]
    except OSError:
        pass
    return ""


def _pyproject(folder: Path) -> Mapping[str, object] | None:
    try:
        data = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    project = data.get("project")
    return project if isinstance(project, Mapping) else {}


def dependencies_of(folder: Path) -> list[str]:
    """The ``[project] dependencies`` of a folder's pyproject.toml (what the managed venv needs)."""
    project = _pyproject(folder)
    deps = project.get("dependencies") if project is not None else None
    return [str(d) for d in deps] if isinstance(deps, list) else []


def _scan_extensions(folder: Path) -> list[PackageExtension]:
    try:
        items = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for item in items:
        if item.name.startswith(("_", ".")):
            continue
        if item.is_file() and item.name.endswith(".py"):
            out.append(PackageExtension(item.name[:-3], "file", os.path.realpath(item.path)))
        elif item.is_dir() and os.path.isfile(os.path.join(item.path, "__init__.py")):
            out.append(PackageExtension(item.name, "package", os.path.realpath(item.path)))
    return out


def _add_resources(package: ResolvedPackage, folder: Path) -> None:
    """Each skill folder (with SKILL.md) or skill file, each prompt ``.md`` and theme ``.json``."""
    for kind, suffix in (("skills", ".md"), ("prompts", ".md"), ("themes", ".json")):
        target: list[str] = getattr(package, kind)
        try:
            items = sorted(os.scandir(folder / kind), key=lambda e: e.name)
        except OSError:
            continue
        for item in items:
            if item.name.startswith("."):
                continue
            if kind == "skills" and item.is_dir() and os.path.isfile(os.path.join(item.path, "SKILL.md")):
                target.append(item.path)
            elif item.is_file() and item.name.endswith(suffix):
                target.append(item.path)


def _apply_filters(package: ResolvedPackage) -> None:
    filters = package.entry.filters
    for kind in filters:
        rule = filters[kind]
        if kind == "extensions":
            kept = [ext for ext in package.extensions if allowed(rule, ext.name)]
            package.disabled[kind] = [ext.name for ext in package.extensions if ext not in kept]
            package.extensions = kept
            continue
        paths: list[str] = getattr(package, kind)
        keep = [p for p in paths if allowed(rule, _resource_name(p))]
        package.disabled[kind] = [_resource_name(p) for p in paths if p not in keep]
        paths[:] = keep
