"""What a ``packages`` entry names: a PyPI requirement, a git repository at a ref, or a local folder.

An entry of the ``packages`` setting is a string (the source as the user typed it) or a table
``{source = "...", extensions = [...], skills = [...], prompts = [...], themes = [...]}`` whose
lists narrow what the package contributes (see :func:`allowed`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pi_coder.errors import UserError

__all__ = [
    "RESOURCE_KINDS",
    "PackageEntry",
    "PackageSource",
    "Scope",
    "allowed",
    "entries_from",
    "normalize_name",
    "parse_source",
]

Scope = Literal["user", "project"]
SourceKind = Literal["pypi", "git", "local"]
RESOURCE_KINDS = ("extensions", "skills", "prompts", "themes")

_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")
_GIT_PREFIXES = ("git:", "git+", "ssh://", "git://", "git@", "file://", "http://", "https://")


@dataclass(frozen=True, slots=True)
class PackageSource:
    """A parsed source. ``identity`` tells two entries for the same package apart from two packages."""

    spec: str
    """The source as written in the settings."""
    kind: SourceKind
    identity: str
    """PyPI: the normalised distribution name; git: the URL without the ref; local: the absolute path."""
    name: str
    """The short name shown to the user and accepted by ``pi remove``/``pi update``."""
    requirement: str = ""
    """PyPI: the requirement handed to pip (``name>=1.2``)."""
    url: str = ""
    """git: what ``git clone`` receives."""
    ref: str | None = None
    """git: branch, tag or commit (None: the remote's default branch)."""
    path: str = ""
    """local: the folder."""


@dataclass(frozen=True, slots=True)
class PackageEntry:
    """One entry of a scope's ``packages`` list, with its resource filters."""

    source: PackageSource
    scope: Scope
    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Resource kind -> the entry's list for it; a kind not present loads everything."""
    raw: object = None
    """The entry as it stands in the settings file (a string or a table)."""


def normalize_name(name: str) -> str:
    """PyPI's name normalisation (PEP 503): ``My_Pkg`` -> ``my-pkg``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_source(spec: str, base: str | os.PathLike[str]) -> PackageSource:
    """Parse a source; relative local paths resolve against ``base`` (the settings file's folder
    for a settings entry, the working directory on the command line).

    Raises:
        UserError: The text names neither a path, a git repository nor a PyPI requirement.
    """
    text = spec.strip()
    if not text:
        raise UserError("empty package source: give a PyPI name, a git URL or a path")
    if text.startswith("pypi:"):
        return _pypi(spec, text[len("pypi:") :].strip())
    if text.startswith(_GIT_PREFIXES) or text.rstrip("/").rpartition("@")[0].endswith(".git") or text.rstrip("/").endswith(".git"):
        if text.startswith((".", "/", "~")):  # a repository on disk, e.g. a bare one: an absolute path
            path, at, ref = text.rpartition("@") if "@" in text.rsplit("/", 1)[-1] else (text, "", "")
            text = os.path.realpath(os.path.join(os.fspath(base), os.path.expanduser(path))) + (at + ref)
        return _git(spec, text)
    if _is_path(text, base):
        folder = os.path.realpath(os.path.join(os.fspath(base), os.path.expanduser(text)))
        return PackageSource(spec=spec, kind="local", identity=folder, name=Path(folder).name, path=folder)
    return _pypi(spec, text)


def _is_path(text: str, base: str | os.PathLike[str]) -> bool:
    if text.startswith((".", "/", "~")) or os.sep in text:
        return True
    return os.path.isdir(os.path.join(os.fspath(base), text))


def _pypi(spec: str, text: str) -> PackageSource:
    match = _NAME.match(text)
    rest = match.group(3).strip() if match else ""
    if match is None or (rest and not rest.startswith(("=", "<", ">", "!", "~", ";", "@"))):
        raise UserError(
            f"cannot read package source {spec!r}: give a PyPI requirement (name or name>=1.0), "
            "a git URL (git:host/owner/repo@ref) or a path (./folder)"
        )
    name = normalize_name(match.group(1))
    return PackageSource(spec=spec, kind="pypi", identity=name, name=name, requirement=text)


def _git(spec: str, text: str) -> PackageSource:
    url = text[len("git+") :] if text.startswith("git+") else text
    if url.startswith("git:") and not url.startswith("git://"):
        url = url[len("git:") :]
        if not url.startswith(("/", "file:", "ssh:", "http:", "https:")) and "@" not in url.split("/", 1)[0]:
            url = "https://" + url
    ref: str | None = None
    tail_start = url.rfind("/") + 1
    at = url.rfind("@")
    if at >= tail_start and at > 0 and not url[:at].endswith(":"):  # "repo@v1"; not "git@host:..."
        url, ref = url[:at], url[at + 1 :] or None
    url = url.rstrip("/")
    name = url.rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    name = name[: -len(".git")] if name.endswith(".git") else name
    return PackageSource(spec=spec, kind="git", identity=url, name=name or url, url=url, ref=ref)


def entries_from(data: Mapping[str, object], scope: Scope, base: str | os.PathLike[str], warnings: list[str]) -> list[PackageEntry]:
    """The ``packages`` entries of one scope's settings data; bad entries become warnings."""
    value = data.get("packages")
    if value is None:
        return []
    if not isinstance(value, list):
        warnings.append("setting packages: expected a list of sources")
        return []
    out: list[PackageEntry] = []
    seen: set[str] = set()
    for item in value:
        spec = item.get("source") if isinstance(item, Mapping) else item
        if not isinstance(spec, str):
            warnings.append(f"setting packages: entry {item!r} has no source")
            continue
        try:
            source = parse_source(spec, base)
        except UserError as exc:
            warnings.append(f"setting packages: {exc}")
            continue
        if source.identity in seen:
            continue
        seen.add(source.identity)
        filters: dict[str, tuple[str, ...]] = {}
        if isinstance(item, Mapping):
            for kind in RESOURCE_KINDS:
                listed = item.get(kind)
                if isinstance(listed, list):
                    filters[kind] = tuple(str(x) for x in listed)
        out.append(PackageEntry(source=source, scope=scope, filters=filters, raw=item))
    return out


def allowed(filters: Sequence[str] | None, name: str) -> bool:
    """Whether the resource ``name`` loads under a filter list (Pi's rules, by name):
    no list loads all; ``[]`` loads none; plain names are an allowlist; ``-name`` and ``!name``
    leave one out; ``+name`` adds one back."""
    if filters is None:
        return True
    plain = [f for f in filters if not f.startswith(("-", "!", "+"))]
    result = name in plain if plain else bool(filters)
    for entry in filters:
        if entry[:1] in ("-", "!") and entry[1:] == name:
            result = False
        elif entry[:1] == "+" and entry[1:] == name:
            result = True
    return result
