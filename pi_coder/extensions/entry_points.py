"""The ``pi_coder.extensions`` entry points of pi's environment, read once per process.

Both the start-up check (is there any extension to load at all?) and the loader need them;
reading every ``*.dist-info/entry_points.txt`` on ``sys.path`` twice cost a few milliseconds of
each ``pi -p``. A folder is read again when its mtime changes (a package was installed into it,
then ``/reload``). No ``importlib.metadata``: it is slower than this scan.
"""

from __future__ import annotations

import os
from collections.abc import Collection

from pi_coder.packages.entry_point_file import GROUP, group_entries

__all__ = ["GROUP", "declared"]

_cache: dict[str, tuple[int, list[tuple[str, str, str]]]] = {}
"""folder -> (its mtime when read, its entries): an install into the folder changes its mtime."""


def _folder_entries(folder: str) -> list[tuple[str, str, str]]:
    try:
        stamp = os.stat(folder or ".").st_mtime_ns
    except OSError:
        return []
    cached = _cache.get(folder)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    found: list[tuple[str, str, str]] = []
    try:
        names = [n for n in os.listdir(folder or ".") if n.endswith(".dist-info")]
    except OSError:
        names = []
    for name in sorted(names):
        try:
            with open(os.path.join(folder or ".", name, "entry_points.txt"), encoding="utf-8") as fh:
                text = fh.read()
        except OSError:
            continue
        if f"[{GROUP}]" not in text:
            continue
        dist = name[: -len(".dist-info")].rsplit("-", 1)[0]
        found.extend((dist, key, value) for key, value in group_entries(text))
    _cache[folder] = (stamp, found)
    return found


def declared(path: Collection[str], skip: Collection[str] = ()) -> list[tuple[str, str, str]]:
    """``(distribution, entry point name, target)`` of every ``pi_coder.extensions`` entry point in
    the ``path`` folders (in order), except the ``skip`` folders."""
    return [entry for folder in path if folder not in skip for entry in _folder_entries(folder)]
