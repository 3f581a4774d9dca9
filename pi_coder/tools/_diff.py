"""Diffs for edit results: Pi's numbered display diff and a standard unified patch."""

from __future__ import annotations

import difflib

__all__ = ["display_diff", "unified_patch"]

_Op = tuple[str, int, int, int, int]


def _opcodes(a: list[str], b: list[str]) -> list[_Op]:
    # Trim the common prefix and suffix first: edits touch small regions of large files.
    limit = min(len(a), len(b))
    p = 0
    while p < limit and a[p] == b[p]:
        p += 1
    s = 0
    while s < limit - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    ops: list[_Op] = []
    if p:
        ops.append(("equal", 0, p, 0, p))
    matcher = difflib.SequenceMatcher(None, a[p : len(a) - s], b[p : len(b) - s], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        ops.append((tag, i1 + p, i2 + p, j1 + p, j2 + p))
    if s:
        ops.append(("equal", len(a) - s, len(a), len(b) - s, len(b)))
    merged: list[_Op] = []
    for op in ops:
        if merged and op[0] == "equal" and merged[-1][0] == "equal":
            prev = merged.pop()
            op = ("equal", prev[1], op[2], prev[3], op[4])
        merged.append(op)
    return merged


def display_diff(old_text: str, new_text: str, context: int = 4) -> tuple[str, int | None]:
    """Pi's display diff of two texts, and the first changed line of the new text.

    Changed lines read ``-<n> text`` / ``+<n> text``; up to ``context`` unchanged lines around
    each change read `` <n> text``; skipped lines are one `` <pad> ...`` line. Numbers are
    right-aligned to the widest line number.
    """
    a = old_text.split("\n")
    b = new_text.split("\n")
    width = len(str(max(len(a), len(b))))
    skip = f" {'':>{width}} ..."
    out: list[str] = []
    first_changed: int | None = None
    ops = _opcodes(a, b)
    for idx, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "equal":
            if first_changed is None:
                first_changed = j1 + 1
            out.extend(f"-{i + 1:>{width}} {a[i]}" for i in range(i1, i2))
            out.extend(f"+{j + 1:>{width}} {b[j]}" for j in range(j1, j2))
            continue
        after_change = idx > 0
        before_change = idx < len(ops) - 1
        rows = list(range(i1, i2))
        if not (after_change or before_change):
            continue
        if after_change and before_change:
            if len(rows) > 2 * context:
                head, tail = rows[:context], rows[-context:]
                out.extend(f" {i + 1:>{width}} {a[i]}" for i in head)
                out.append(skip)
                out.extend(f" {i + 1:>{width}} {a[i]}" for i in tail)
            else:
                out.extend(f" {i + 1:>{width}} {a[i]}" for i in rows)
        elif after_change:
            out.extend(f" {i + 1:>{width}} {a[i]}" for i in rows[:context])
            if len(rows) > context:
                out.append(skip)
        else:
            if len(rows) > context:
                out.append(skip)
            out.extend(f" {i + 1:>{width}} {a[i]}" for i in rows[-context:])
    return "\n".join(out), first_changed


def unified_patch(old_text: str, new_text: str, path: str, context: int = 3) -> str:
    """A standard unified diff (``--- a/path``, ``+++ b/path``, ``@@`` hunks)."""
    a = old_text.splitlines(keepends=True)
    b = new_text.splitlines(keepends=True)
    lines: list[str] = []
    for line in difflib.unified_diff(a, b, f"a/{path}", f"b/{path}", n=context):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        lines.append(line)
    return "".join(lines)
