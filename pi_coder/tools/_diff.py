"""Diffs for edit results: Pi's numbered display diff and a standard unified patch.

Both work on line opcodes (``difflib`` style: ``(tag, i1, i2, j1, j2)`` over the
``text.split("\\n")`` lists). The edit tool passes opcodes built from the regions it
replaced, so large files are never diffed whole.
"""

from __future__ import annotations

import difflib
from bisect import bisect_right, insort
from collections.abc import Iterator, Sequence
from typing import overload

__all__ = ["LineOp", "LineView", "display_diff", "line_ops", "unified_patch"]

LineOp = tuple[str, int, int, int, int]


class LineView(Sequence[str]):
    """Random access to the lines of ``text.split("\\n")`` without splitting the whole text.

    Lines are located by walking from the nearest known line start (``anchors``), so looking
    at a few lines around an edit in a large file costs next to nothing.
    """

    def __init__(self, text: str, anchors: Sequence[tuple[int, int]] = ()) -> None:
        self.text = text
        self.newlines = text.count("\n")
        self._lines = [0]
        self._offsets = [0]
        for line, offset in anchors:
            self.add_anchor(line, offset)

    def add_anchor(self, line: int, offset: int) -> None:
        """Record that line ``line`` starts at ``offset``."""
        k = bisect_right(self._lines, line)
        if self._lines[k - 1] != line:
            insort(self._lines, line)
            self._offsets.insert(k, offset)

    def start(self, i: int) -> int:
        """The offset where line ``i`` starts (``len(text) + 1`` past the end)."""
        if i > self.newlines:
            return len(self.text) + 1
        k = bisect_right(self._lines, i) - 1
        below = i - self._lines[k]
        if k + 1 < len(self._lines) and self._lines[k + 1] - i < below:
            offset = self._offsets[k + 1]
            for _ in range(self._lines[k + 1] - i):
                offset = self.text.rfind("\n", 0, offset - 1) + 1
        else:
            offset = self._offsets[k]
            for _ in range(below):
                offset = self.text.find("\n", offset) + 1
        self.add_anchor(i, offset)
        return offset

    def __len__(self) -> int:
        return self.newlines + 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    # typeshed's bare ``slice`` stands for ``slice[Any, Any, Any]``; Sequence's signature forces it.
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...  # type: ignore[explicit-any]

    def __getitem__(self, index: int | slice) -> str | list[str]:  # type: ignore[explicit-any]
        if isinstance(index, slice):
            first, stop, _ = index.indices(len(self))
            if first >= stop:
                return []
            return self.text[self.start(first) : self.start(stop) - 1].split("\n")
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.text[self.start(index) : self.start(index + 1) - 1]

    def keep(self, i: int) -> str:
        """Line ``i`` with its newline, as ``splitlines(keepends=True)`` would give it."""
        return self[i] + ("\n" if i < self.newlines else "")

    def real_lines(self) -> int:
        """The number of lines not counting the empty part after a final newline."""
        return self.newlines + (1 if self.text and not self.text.endswith("\n") else 0)


def _view(text: str | LineView) -> LineView:
    return text if isinstance(text, LineView) else LineView(text)


def _merge_equal(ops: list[LineOp]) -> list[LineOp]:
    merged: list[LineOp] = []
    for op in ops:
        if op[1] == op[2] and op[3] == op[4]:
            continue
        if merged and op[0] == "equal" and merged[-1][0] == "equal":
            prev = merged.pop()
            op = ("equal", prev[1], op[2], prev[3], op[4])
        merged.append(op)
    return merged


def line_ops(a: Sequence[str], b: Sequence[str], offset_a: int = 0, offset_b: int = 0) -> list[LineOp]:
    """Opcodes turning ``a`` into ``b`` (common prefix and suffix trimmed first, for speed)."""
    limit = min(len(a), len(b))
    p = 0
    while p < limit and a[p] == b[p]:
        p += 1
    s = 0
    while s < limit - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    ops: list[LineOp] = [("equal", 0, p, 0, p)]
    matcher = difflib.SequenceMatcher(None, a[p : len(a) - s], b[p : len(b) - s], autojunk=False)
    ops.extend((tag, i1 + p, i2 + p, j1 + p, j2 + p) for tag, i1, i2, j1, j2 in matcher.get_opcodes())
    ops.append(("equal", len(a) - s, len(a), len(b) - s, len(b)))
    return _merge_equal([(t, i1 + offset_a, i2 + offset_a, j1 + offset_b, j2 + offset_b) for t, i1, i2, j1, j2 in ops])


def display_diff(
    old_text: str | LineView, new_text: str | LineView, context: int = 4, ops: list[LineOp] | None = None
) -> tuple[str, int | None]:
    """Pi's display diff of two texts, and the first changed line of the new text.

    Changed lines read ``-<n> text`` / ``+<n> text``; up to ``context`` unchanged lines around
    each change read `` <n> text``; skipped lines are one `` <pad> ...`` line. Numbers are
    right-aligned to the widest line number.
    """
    a = _view(old_text)
    b = _view(new_text)
    ops = _merge_equal(ops) if ops is not None else line_ops(a.text.split("\n"), b.text.split("\n"))
    width = len(str(max(len(a), len(b))))
    skip = f" {'':>{width}} ..."
    out: list[str] = []
    first_changed: int | None = None

    def ctx(rows: range | list[int]) -> None:
        out.extend(f" {i + 1:>{width}} {a[i]}" for i in rows)

    for idx, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "equal":
            if first_changed is None:
                first_changed = j1 + 1
            out.extend(f"-{i + 1:>{width}} {a[i]}" for i in range(i1, i2))
            out.extend(f"+{j + 1:>{width}} {b[j]}" for j in range(j1, j2))
            continue
        after_change = idx > 0
        before_change = idx < len(ops) - 1
        rows = range(i1, i2)
        if after_change and before_change:
            if len(rows) > 2 * context:
                ctx(rows[:context])
                out.append(skip)
                ctx(rows[-context:])
            else:
                ctx(rows)
        elif after_change:
            ctx(rows[:context])
            if len(rows) > context:
                out.append(skip)
        elif before_change:
            if len(rows) > context:
                out.append(skip)
            ctx(rows[-context:])
    return "\n".join(out), first_changed


def _clip(ops: list[LineOp], na: int, nb: int) -> list[LineOp]:
    """Restrict opcodes over ``split("\\n")`` lists to the real lines (no trailing empty part)."""
    out: list[LineOp] = []
    for tag, i1, i2, j1, j2 in ops:
        i1, i2, j1, j2 = min(i1, na), min(i2, na), min(j1, nb), min(j2, nb)
        if tag == "equal" and i2 - i1 != j2 - j1:
            k = min(i2 - i1, j2 - j1)
            out.append(("equal", i1, i1 + k, j1, j1 + k))
            i1, j1, tag = i1 + k, j1 + k, "replace"
        if i1 == i2 and j1 == j2:
            continue
        if tag != "equal":
            tag = "replace" if i1 < i2 and j1 < j2 else ("delete" if i1 < i2 else "insert")
        out.append((tag, i1, i2, j1, j2))
    return _merge_equal(out)


def _groups(ops: list[LineOp], n: int) -> Iterator[list[LineOp]]:
    if not ops:
        return
    ops = list(ops)
    if ops[0][0] == "equal":
        tag, i1, i2, j1, j2 = ops[0]
        ops[0] = (tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2)
    if ops[-1][0] == "equal":
        tag, i1, i2, j1, j2 = ops[-1]
        ops[-1] = (tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n))
    group: list[LineOp] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, stop: int) -> str:
    length = stop - start
    first = start + 1
    if length == 1:
        return str(first)
    if length == 0:
        first -= 1
    return f"{first},{length}"


def unified_patch(
    old_text: str | LineView, new_text: str | LineView, path: str, context: int = 3, ops: list[LineOp] | None = None
) -> str:
    """A standard unified diff (``--- a/path``, ``+++ b/path``, ``@@`` hunks)."""
    a = _view(old_text)
    b = _view(new_text)
    if ops is None:
        ops = line_ops(a.text.split("\n"), b.text.split("\n"))
    ops = _clip(ops, a.real_lines(), b.real_lines())
    out: list[str] = []

    def emit(prefix: str, line: str) -> None:
        out.append(prefix + line if line.endswith("\n") else f"{prefix}{line}\n\\ No newline at end of file\n")

    for group in _groups(ops, context):
        if not out:
            out.append(f"--- a/{path}\n+++ b/{path}\n")
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for i in range(i1, i2):
                    emit(" ", a.keep(i))
                continue
            for i in range(i1, i2):
                emit("-", a.keep(i))
            for j in range(j1, j2):
                emit("+", b.keep(j))
    return "".join(out)
