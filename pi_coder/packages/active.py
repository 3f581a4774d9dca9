"""The packages a session loads: the configured entries, resolved, with one line per problem."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pi_coder.packages.resolve import ResolvedPackage, configured, resolve_all

__all__ = ["PackagePaths", "active_packages", "missing_line", "package_paths", "summary_lines"]


@dataclass(frozen=True, slots=True)
class PackagePaths:
    """The resource files and folders the loaded packages contribute."""

    skills: tuple[str, ...] = ()
    prompts: tuple[str, ...] = ()
    themes: tuple[str, ...] = ()
    notices: tuple[str, ...] = field(default=())
    summary: tuple[str, ...] = ()
    """One line per configured package (:func:`summary_lines`), for ``--verbose`` and ``/reload``."""
    roots: tuple[tuple[str, str, str], ...] = ()
    """``(folder, source spec, scope)`` of each installed package, for the resources' ``sourceInfo``."""


def active_packages(
    cwd: str,
    global_data: Mapping[str, object],
    project_data: Mapping[str, object],
    *,
    project_trusted: bool,
    warnings: list[str] | None = None,
    config_dir: Path | None = None,
) -> list[ResolvedPackage]:
    """The user's packages and, in a trusted folder, the project's, as found on disk (nothing is
    installed here: a missing one adds a :func:`missing_line` to ``warnings``)."""
    if not global_data.get("packages") and not (project_trusted and project_data.get("packages")):
        return []
    if config_dir is None:
        from pi_coder.paths import config_dir as default_config_dir

        config_dir = default_config_dir()
    sink = warnings if warnings is not None else []
    entries = configured(cwd, global_data, project_data, project_trusted=project_trusted, global_base=config_dir, warnings=sink)
    packages = resolve_all(cwd, entries)
    sink.extend(missing_line(p) for p in packages if not p.installed)
    return packages


def missing_line(package: ResolvedPackage) -> str:
    source = package.entry.source
    local = package.entry.scope == "project"
    if source.kind == "local":
        return f"Package {source.name}: folder {source.path} not found; fix or remove it (pi remove{' -l' if local else ''} {source.name})"
    return f"Package {source.name} is not installed; run pi update{' -l' if local else ''} {source.name} to install it"


def package_paths(packages: list[ResolvedPackage]) -> PackagePaths:
    installed = [p for p in packages if p.installed]
    return PackagePaths(
        skills=tuple(path for p in installed for path in p.skills),
        prompts=tuple(path for p in installed for path in p.prompts),
        themes=tuple(path for p in installed for path in p.themes),
        summary=tuple(summary_lines(packages)),
        roots=tuple((p.root, p.entry.source.spec, p.entry.scope) for p in installed if p.root),
    )


def summary_lines(packages: list[ResolvedPackage]) -> list[str]:
    """One line per package: ``name version (scope, source): what it contributes``."""
    out = []
    for p in packages:
        version = f" {p.version}" if p.version else ""
        what = p.contributes() if p.installed else "not installed"
        out.append(f"{p.name}{version} ({p.entry.scope}, {p.entry.source.spec}): {what}")
    return out
