"""``pi install``, ``remove``, ``update``: fetch into the scope's environment, then record the
entry in that scope's settings (the user's settings.toml, or ``.pi/settings.toml`` with ``-l``).

The caller decides trust: project packages are installed only for a trusted folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from pi_coder.errors import UserError
from pi_coder.packages.env import PackageEnv
from pi_coder.packages.resolve import ResolvedPackage, dependencies_of, resolve
from pi_coder.packages.sources import (
    PackageEntry,
    PackageSource,
    Scope,
    entries_from,
    normalize_name,
    parse_source,
)

__all__ = ["Packages"]


class Packages:
    """The packages of one scope: its settings file and its environment.

    Args:
        scope: ``user`` (global settings) or ``project`` (``<cwd>/.pi/settings.toml``).
        cwd: The project folder (for ``project``, and for relative paths on the command line).
        env_root: The environments' parent folder (default ``<data>/packages``).
    """

    def __init__(self, scope: Scope, cwd: str, env_root: Path | None = None) -> None:
        # pi_coder.paths, not pi_coder.settings: reading needs no pydantic (slow to import)
        from pi_coder.paths import config_dir, project_dir

        self.scope = scope
        self.cwd = os.path.realpath(cwd)
        self.settings_path = (config_dir() if scope == "user" else project_dir(self.cwd)) / "settings.toml"
        self.env = PackageEnv(scope, self.cwd, env_root)

    # -- reading ---------------------------------------------------------------------------

    def entries(self, warnings: list[str] | None = None) -> list[PackageEntry]:
        return entries_from(self._data(), self.scope, self.settings_path.parent, warnings if warnings is not None else [])

    def resolved(self) -> list[ResolvedPackage]:
        return [resolve(entry, self.env) for entry in self.entries()]

    def find(self, name: str) -> PackageEntry:
        """The entry ``name`` means: its source as written, its short name, or the same source.

        Raises:
            UserError: No entry matches.
        """
        for entry in self.entries():
            if name in (entry.source.spec, entry.source.name, entry.source.identity) or normalize_name(name) == entry.source.identity:
                return entry
        try:
            identity = parse_source(name, self.cwd).identity
        except UserError:
            identity = None
        for entry in self.entries():
            if entry.source.identity == identity:
                return entry
        where = "this project's .pi/settings.toml" if self.scope == "project" else "your settings"
        raise UserError(f"no package {name!r} in {where} (pi list shows them)")

    # -- changing --------------------------------------------------------------------------

    def install(self, spec: str, progress: Callable[[str], None] = lambda _: None) -> ResolvedPackage:
        """Fetch ``spec`` and record it (an entry for the same package is replaced, its filters kept).

        Raises:
            UserError: A bad source, a missing folder, or pip/uv/git failed (nothing is recorded then).
        """
        source = parse_source(spec, self.cwd)
        if source.kind == "local" and not os.path.isdir(source.path):
            raise UserError(f"no folder {source.path}: a local package is a folder")
        self._fetch(source, upgrade=False, progress=progress)
        written = self._written_spec(source)
        items = self._items()
        kept: object = written
        for index, item in enumerate(items):
            old = item.get("source") if isinstance(item, Mapping) else item
            if isinstance(old, str) and self._identity(old) == source.identity:
                kept = {**item, "source": written} if isinstance(item, Mapping) else written
                del items[index]
                break
        items.append(kept)
        self._write(items)
        entry = next(e for e in self.entries() if e.source.identity == source.identity)
        return resolve(entry, self.env)

    def remove(self, name: str) -> PackageEntry:
        """Forget the package ``name`` and delete what pi installed for it (a local folder stays).

        Raises:
            UserError: No such package.
        """
        entry = self.find(name)
        source = entry.source
        if source.kind == "pypi":
            self.env.pip_uninstall(source.identity)
        elif source.kind == "git":
            self.env.remove_clone(source)
        items = [
            item
            for item in self._items()
            if self._identity(item.get("source") if isinstance(item, Mapping) else item) != source.identity
        ]
        self._write(items)
        return entry

    def update(self, name: str | None = None, progress: Callable[[str], None] = lambda _: None) -> list[ResolvedPackage]:
        """Bring one package (or every package of the scope) to the newest version its source allows,
        installing what is missing.

        Raises:
            UserError: No such package, or pip/uv/git failed.
        """
        entries = [self.find(name)] if name is not None else self.entries()
        for entry in entries:
            self._fetch(entry.source, upgrade=True, progress=progress)
        return [resolve(entry, self.env) for entry in entries]

    def set_enabled(self, name: str, kind: str, resource: str, enabled: bool) -> None:
        """Turn one resource of a package on or off: the entry becomes a table whose ``kind`` list
        says so (``-name`` to leave one out), exactly what a hand edit would write.

        Raises:
            UserError: No such package.
        """
        from pi_coder.packages.sources import allowed

        identity = self.find(name).source.identity
        items = self._items()
        for index, item in enumerate(items):
            spec = item.get("source") if isinstance(item, Mapping) else item
            if self._identity(spec) != identity:
                continue
            table: dict[str, object] = dict(item) if isinstance(item, Mapping) else {"source": item}
            listed = table.get(kind)
            rules: list[str] | None = [str(r) for r in listed] if isinstance(listed, list) else None
            if rules is None:
                rules = [] if enabled else [f"-{resource}"]
                if enabled:
                    return
            elif enabled:
                rules = [r for r in rules if r not in (f"-{resource}", f"!{resource}")]
                if not rules and isinstance(listed, list) and listed:
                    rules = []
                    table.pop(kind)
                elif not allowed(rules, resource):
                    plain = not rules or any(not r.startswith(("-", "!", "+")) for r in rules)
                    rules.append(resource if plain else f"+{resource}")
            else:
                rules = [r for r in rules if r not in (resource, f"+{resource}")]
                if allowed(rules, resource):
                    rules.append(f"-{resource}")
            if kind in table or rules:
                table[kind] = rules
            items[index] = table if set(table) != {"source"} else table["source"]
            self._write(items)
            return

    def _fetch(self, source: PackageSource, *, upgrade: bool, progress: Callable[[str], None]) -> None:
        if source.kind == "pypi":
            progress(f"Installing {source.requirement} into {self.env.venv}")
            self.env.pip_install([source.requirement], upgrade=upgrade)
            return
        if source.kind == "git":
            progress(f"Fetching {source.url}" + (f" at {source.ref}" if source.ref else ""))
            folder = self.env.pull(source) if upgrade else self.env.clone(source)
        else:
            folder = Path(source.path)
        deps = dependencies_of(folder)
        if deps:
            progress(f"Installing the dependencies of {source.name} into {self.env.venv}")
            self.env.pip_install(deps, upgrade=upgrade)

    def _written_spec(self, source: PackageSource) -> str:
        """The source as recorded: a local path absolute, or for a project relative to ``.pi/``
        when it lies inside the project (the settings file's own folder is the base)."""
        if source.kind != "local":
            return source.spec.strip()
        if self.scope == "project" and Path(source.path).is_relative_to(self.cwd):
            return os.path.relpath(source.path, self.settings_path.parent)
        return source.path

    def _identity(self, spec: object) -> str | None:
        if not isinstance(spec, str):
            return None
        try:
            return parse_source(spec, self.settings_path.parent).identity
        except UserError:
            return None

    def _items(self) -> list[object]:
        """The scope's ``packages`` list as the settings file has it (a copy)."""
        value = self._data().get("packages")
        return list(value) if isinstance(value, list) else []

    def _data(self) -> dict[str, object]:
        import tomllib

        try:
            return tomllib.loads(self.settings_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise UserError(f"{self.settings_path}: cannot read ({exc})") from None

    def _write(self, items: list[object]) -> None:
        from pi_coder.settings import update_settings_file

        update_settings_file(self.settings_path, {"packages": items or None})
