"""The diff an edit call would make, computed from the file before the edit runs."""

from __future__ import annotations

import os
import stat
from typing import Any

__all__ = ["preview_edit"]


def preview_edit(args: dict[str, Any], cwd: str) -> tuple[str | None, str | None]:
    """(diff, None) for a valid edit, (None, error text) when it would fail, (None, None) if unknown."""
    try:
        from pi_coder.tools import compute_edit_preview, prepare_edit_arguments
    except ImportError:
        return None, None
    prepared = prepare_edit_arguments(args)
    if not isinstance(prepared, dict):
        return None, None
    path = str(prepared.get("path") or "")
    edits = prepared.get("edits")
    if not path or not isinstance(edits, list) or not edits:
        return None, None
    raw = path[1:] if path.startswith("@") else path
    full = os.path.join(cwd, os.path.expanduser(raw))
    try:
        if not stat.S_ISREG(os.stat(full).st_mode):
            return None, None  # a FIFO would block the UI here; the tool itself refuses it
        with open(full, encoding="utf-8", newline="") as handle:
            original = handle.read()
    except OSError as exc:
        return None, f"File not found: {path}" if isinstance(exc, FileNotFoundError) else str(exc)
    try:
        preview = compute_edit_preview(original, edits, path)
    except Exception as exc:  # the edit would fail; the tool will report the same error
        return None, str(exc)
    return preview.diff, None
