"""Reading a distribution's ``entry_points.txt`` for pi's group, without importlib.metadata."""

from __future__ import annotations

__all__ = ["GROUP", "group_entries"]

GROUP = "pi_coder.extensions"
"""The entry point group a distribution declares its pi extensions in."""


def group_entries(text: str) -> list[tuple[str, str]]:
    """``(name, target)`` of every entry in the ``[pi_coder.extensions]`` section of ``text``."""
    out, inside = [], False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            inside = line == f"[{GROUP}]"
        elif inside and "=" in line and not line.startswith(("#", ";")):
            key, _, value = line.partition("=")
            out.append((key.strip(), value.strip()))
    return out
