"""``/export file.jsonl``: the current branch as a session file Pi (and pi_coder) can open.

The file holds the session's header (same id, cwd and ``parentSession``) and the entries of
the path root -> leaf, in order. Labels on that path whose target is not on it are left out,
so every ``parentId`` and ``targetId`` resolves. ``pi --session <file>`` continues from it.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from pi_coder.paths import write_atomic
from pi_coder.session.entries import LabelEntry
from pi_coder.session.store import SessionStore

__all__ = ["export_branch_jsonl", "is_jsonl_path"]


def is_jsonl_path(path: str) -> bool:
    """Whether an export target names a JSONL file (by its extension)."""
    return path.lower().endswith(".jsonl")


def export_branch_jsonl(store: SessionStore, path: str | Path) -> Path:
    """Write the current branch of ``store`` to ``path`` (created 0600, replaced atomically).

    Returns:
        The absolute path written.

    Raises:
        OSError: The file cannot be written.
    """
    target = Path(path).expanduser().absolute()
    branch = store.get_branch()
    ids = {entry.id for entry in branch}
    kept = [entry for entry in branch if not (isinstance(entry, LabelEntry) and entry.target_id not in ids)]
    header = dict(store.header.to_json_dict())
    lines = [orjson.dumps(header), *(orjson.dumps(entry.to_json_dict()) for entry in kept)]
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, b"\n".join(lines) + b"\n")
    return target
