"""Finding and importing extensions (docs/extensions-runtime.md#loading).

Sources, in Pi's order (= handler order = tool and flag precedence): ``-e`` specs; the
project's ``.pi/extensions/`` and project settings ``extensions`` (only when the folder is
trusted); ``<config>/extensions/`` and global settings ``extensions``; the
``pi_coder.extensions`` entry points (read from ``*.dist-info/entry_points.txt`` without
``importlib.metadata``). ``no_extensions`` keeps only the ``-e`` specs. Identity is the real
path (a module name, ``builtin:<name>`` or the entry point otherwise); the first wins.
A load failure is reported and skipped, its registrations rolled back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Collection, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from pi_coder.extensions.types import Extension, ExtensionLoadError, Source

__all__ = ["Source", "discover", "load_extensions", "reimport", "rerun_factories"]

BUILTIN_PACKAGE = "pi_coder.extensions.builtin"




class _Found:
    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.errors: list[tuple[str, str]] = []
        self._seen: set[str] = set()

    def add(self, source: Source) -> None:
        if source.identity not in self._seen:
            self._seen.add(source.identity)
            self.sources.append(source)


def _module_name_for(path: str) -> str:
    return "pi_coder_ext_" + hashlib.sha256(path.encode()).hexdigest()[:8]


def _spec_sources(spec: str, base: Path, scope: Any) -> list[Source] | str:
    """Sources for one spec, or a problem text."""
    if spec.startswith("builtin:"):
        name = spec[len("builtin:") :]
        module = f"{BUILTIN_PACKAGE}.{name.replace('-', '_')}"
        return [Source(identity=spec, name=name, kind="module", target=module, scope=scope)]
    path = Path(os.path.expanduser(spec))
    if not path.is_absolute():
        path = base / path
    if path.is_file():
        real = os.path.realpath(path)
        return [Source(identity=real, name=path.stem, kind="file", target=real, scope=scope)]
    if path.is_dir():
        real = os.path.realpath(path)
        if (path / "__init__.py").is_file():
            return [Source(identity=real, name=path.name, kind="package", target=real, scope=scope)]
        return _scan(path, scope)
    if spec.replace(".", "").replace("_", "").isalnum() and "/" not in spec:
        return [Source(identity=spec, name=spec.rsplit(".", 1)[-1], kind="module", target=spec, scope=scope)]
    return f"extension not found: {spec}"


def _scan(folder: Path, scope: Any) -> list[Source]:
    """``*.py`` files and packages directly in ``folder``, sorted, skipping ``_*`` and ``.*``."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for entry in entries:
        if entry.name.startswith(("_", ".")):
            continue
        if entry.is_file() and entry.name.endswith(".py"):
            real = os.path.realpath(entry.path)
            out.append(Source(identity=real, name=entry.name[:-3], kind="file", target=real, scope=scope))
        elif entry.is_dir() and os.path.isfile(os.path.join(entry.path, "__init__.py")):
            real = os.path.realpath(entry.path)
            out.append(Source(identity=real, name=entry.name, kind="package", target=real, scope=scope))
    return out


def _settings_specs(found: _Found, specs: Sequence[str], base: Path, scope: Any) -> None:
    removed = {s[1:] for s in specs if s.startswith("-")}
    for spec in specs:
        if spec.startswith("-") or spec in removed:
            continue
        result = _spec_sources(spec, base, scope)
        if isinstance(result, str):
            found.errors.append((spec, result))
        else:
            for source in result:
                found.add(dataclasses.replace(source, listed=True))


def entry_point_sources(skip: Collection[str] = ()) -> list[Source]:
    """Entry points of the ``pi_coder.extensions`` group, by name, from the dist-info folders on
    ``sys.path`` (except the ``skip`` folders: package environments, whose entries load as packages)."""
    from pi_coder.extensions.entry_points import declared

    points: dict[str, Source] = {}
    for dist, ep_name, target in declared(sys.path, skip):
        identity = f"entry_point:{dist}:{ep_name}"
        points.setdefault(ep_name, Source(identity=identity, name=ep_name, kind="entry_point", target=target, scope="entry_point"))
    return [points[name] for name in sorted(points)]


def discover(
    *,
    cli_specs: Sequence[str],
    cwd: str,
    config_dir: Path,
    global_specs: Sequence[str] = (),
    project_specs: Sequence[str] = (),
    no_extensions: bool = False,
    project_trusted: bool = False,
    entry_points: bool = True,
    packages: Sequence[Source] = (),
) -> tuple[list[Source], list[tuple[str, str]]]:
    """The sources to load, in order, and ``(spec, problem)`` for specs that name nothing.

    ``packages`` are the installed packages' extensions (``pi_coder.packages``), after the
    settings' own and before the entry points of pi's environment.

    ``project_trusted`` gates the project's ``.pi/extensions/`` and project settings: the
    caller decides trust (``permissions/trust.py``); pass False for an untrusted folder.
    """
    found = _Found()
    for spec in cli_specs:
        result = _spec_sources(spec, Path(cwd), "cli")
        if isinstance(result, str):
            found.errors.append((spec, result))
        else:
            for source in result:
                found.add(source)
    if no_extensions:
        return found.sources, found.errors
    if project_trusted:
        for source in _scan(Path(cwd) / ".pi" / "extensions", "project"):
            found.add(source)
        _settings_specs(found, project_specs, Path(cwd) / ".pi", "project")
    for source in _scan(config_dir / "extensions", "global"):
        found.add(source)
    _settings_specs(found, global_specs, config_dir, "global")
    for source in packages:
        found.add(source)
    if entry_points:
        for source in entry_point_sources(skip={path for pkg in packages for path in pkg.sys_paths}):
            found.add(source)
    return found.sources, found.errors


# ---------------------------------------------------------------------------- importing


def _import(source: Source, *, fresh: bool = False) -> Any:
    """The source's ``extension`` callable (imports the module once; ``fresh`` re-imports)."""
    for folder in source.sys_paths:
        if folder not in sys.path:
            sys.path.append(folder)
    if source.kind == "entry_point":
        module_name, _, attr = source.target.partition(":")
        module = _import_module(module_name.strip(), fresh)
        factory: Any = module
        for part in attr.strip().split(".") if attr.strip() else ["extension"]:
            factory = getattr(factory, part)
        return factory
    if source.kind == "module":
        module = _import_module(source.target, fresh)
    else:
        module = _import_path(source, fresh)
    factory = getattr(module, "extension", None)
    if not callable(factory):
        raise ExtensionLoadError(f"{source.target} defines no extension(pi) function")
    return factory


def _import_module(name: str, fresh: bool) -> ModuleType:
    if fresh and name in sys.modules:
        return importlib.reload(sys.modules[name])
    return importlib.import_module(name)


def _import_path(source: Source, fresh: bool) -> ModuleType:
    name = _module_name_for(source.identity)
    if not fresh and name in sys.modules:
        return sys.modules[name]
    if fresh:
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]
    if source.kind == "package":
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(source.target, "__init__.py"), submodule_search_locations=[source.target]
        )
    else:
        spec = importlib.util.spec_from_file_location(name, source.target)
    if spec is None or spec.loader is None:
        raise ExtensionLoadError(f"cannot import {source.target}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _run_awaitable(value: Any) -> Any:
    """Await a factory's coroutine: in the running loop's caller if any, else in a private loop."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(value)
    finally:
        loop.close()


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _run_factory_sync(runner: Any, ext: Extension) -> bool:
    from pi_coder.extensions.api import ExtensionAPI

    api = ExtensionAPI(runner, ext)
    runner.add(ext, api)
    try:
        result = ext.factory(api)  # type: ignore[misc]
        if inspect.isawaitable(result):
            result = _run_awaitable(result)
        if result is not None:
            raise ExtensionLoadError(f"extension() returned {type(result).__name__}; it must return None")
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise
    except BaseException as exc:
        _rollback(runner, ext, exc)
        return False
    return True


def _rollback(runner: Any, ext: Extension, exc: BaseException) -> None:
    ext.clear()
    runner.extensions.remove(ext)
    runner.report(ext, "load", exc)


def load_extensions(runner: Any, sources: Sequence[Source]) -> None:
    """Import each source and run its factory with a fresh ``ExtensionAPI``, one by one, in order."""
    runner.sources = list(sources)
    for source in sources:
        ext = Extension(path=source.identity, name=source.name, source=source)
        try:
            ext.factory = _import(source)
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except BaseException as exc:
            runner.report(ext, "load", exc)
            continue
        _run_factory_sync(runner, ext)


async def _run_factories(runner: Any, extensions: Sequence[Extension]) -> None:
    from pi_coder.extensions.api import ExtensionAPI

    for ext in extensions:
        ext.clear()
        api = ExtensionAPI(runner, ext)
        runner.add(ext, api)
        try:
            result = await _maybe_await(ext.factory(api))  # type: ignore[misc]
            if result is not None:
                raise ExtensionLoadError(f"extension() returned {type(result).__name__}; it must return None")
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except BaseException as exc:
            _rollback(runner, ext, exc)
    runner.install_tools()


async def rerun_factories(runner: Any) -> None:
    """After a session replacement: fresh APIs, factories re-run, modules not re-imported (docs/extensions-runtime.md#replacement-reload-and-quit)."""
    runner.invalidate()
    extensions = [ext for ext in runner.extensions if ext.factory is not None]
    runner.extensions.clear()
    await _run_factories(runner, extensions)


async def reimport(runner: Any) -> None:
    """``/reload``: re-import every source, then run the factories."""
    runner.invalidate()
    runner.extensions.clear()
    fresh: list[Extension] = []
    for source in runner.sources:
        ext = Extension(path=source.identity, name=source.name, source=source)
        try:
            ext.factory = _import(source, fresh=True)
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except BaseException as exc:
            runner.report(ext, "load", exc)
            continue
        fresh.append(ext)
    await _run_factories(runner, fresh)
