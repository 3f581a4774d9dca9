"""Applying a batch of edits to file text (pure, no I/O), with Pi's error texts.

Every edit is matched against the original text; matches must not overlap; the batch applies
all or nothing. Only matched regions change: the BOM and every byte outside the regions are
kept. CRLF files are matched on an LF view and replacements are written with the file's
dominant line ending.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeAlias

from pi_coder.errors import ToolError
from pi_coder.tools._diff import LineOp, LineView, display_diff, line_ops, unified_patch
from pi_coder.tools._matching import (
    Ambiguous,
    Candidate,
    Found,
    MatchTier,
    NotFound,
    find_match,
    line_number_at,
)

__all__ = [
    "EditError",
    "EditPreview",
    "EditSpec",
    "apply_edits",
    "compute_edit_preview",
    "prepare_edit_arguments",
]


class EditError(ToolError):
    """An edit batch that cannot be applied; the message is what the model sees."""


@dataclass(frozen=True, slots=True)
class EditSpec:
    old_text: str
    new_text: str


@dataclass(slots=True, kw_only=True)
class EditPreview:
    """The outcome of applying edits to a text."""

    new_content: str
    """The full new file text (BOM and line endings as the original)."""
    diff: str
    """Pi's numbered display diff."""
    patch: str
    """Standard unified diff."""
    first_changed_line: int | None
    tiers: list[MatchTier] = field(default_factory=list)
    """The matching tier that located each edit, in the order given."""


class _OldNew(Protocol):
    """An edit item object (the edit tool's ``EditItem``)."""

    @property
    def old_text(self) -> str: ...

    @property
    def new_text(self) -> str: ...


EditLike: TypeAlias = EditSpec | Mapping[str, object] | tuple[str, str] | _OldNew
"""An edit as callers give it: an ``EditSpec``, an ``{"oldText", "newText"}`` mapping, a pair or an item object."""


def _as_spec(edit: EditLike) -> EditSpec:
    if isinstance(edit, EditSpec):
        return edit
    if isinstance(edit, Mapping):
        return EditSpec(str(edit.get("oldText", edit.get("old_text", ""))), str(edit.get("newText", edit.get("new_text", ""))))
    if isinstance(edit, tuple):
        return EditSpec(edit[0], edit[1])
    return EditSpec(edit.old_text, edit.new_text)


def prepare_edit_arguments(raw: object) -> object:
    """Fold legacy top-level ``oldText``/``newText`` and a stringified ``edits`` into ``edits``."""
    if not isinstance(raw, Mapping):
        return raw
    edits = raw.get("edits")
    changed = False
    if isinstance(edits, str):
        try:
            edits = json.loads(edits)
            changed = True
        except ValueError:
            pass
    if "oldText" in raw or "newText" in raw:
        extra = {"oldText": raw.get("oldText", ""), "newText": raw.get("newText", "")}
        edits = [*(edits if isinstance(edits, list) else []), extra]
        changed = True
    if not changed:
        return raw
    prepared = {k: v for k, v in raw.items() if k not in ("oldText", "newText")}
    prepared["edits"] = edits
    return prepared



def _describe_candidate(candidate: Candidate) -> str:
    lines = candidate.lines
    start = candidate.start_line
    if candidate.diff_line is not None and len(lines) > 10:
        offset = max(0, candidate.diff_line - start - 2)
        lines = lines[offset : offset + 10]
        start += offset
    elif len(lines) > 10:
        lines = lines[:10]
    end = start + len(lines) - 1
    width = len(str(end))
    shown = "\n".join(f"{start + i:>{width}}| {line}" for i, line in enumerate(lines))
    where = f"lines {start}-{end}" if end > start else f"line {start}"
    text = f"Closest match in the file ({where}):\n{shown}"
    if candidate.diff_line is not None:
        text += (
            f"\nFirst difference at line {candidate.diff_line}, column {candidate.column}:"
            f"\n  oldText: {candidate.expected!r}\n  file:    {candidate.actual!r}"
        )
    return text


def _not_found(path: str, index: int, total: int, outcome: NotFound) -> EditError:
    if total == 1:
        message = (
            f"Could not find the exact text in {path}. "
            "The old text must match exactly including all whitespace and newlines."
        )
    else:
        message = (
            f"Could not find edits[{index}] in {path}. "
            "The oldText must match exactly including all whitespace and newlines."
        )
    if outcome.candidate is not None:
        message += "\n\n" + _describe_candidate(outcome.candidate)
    return EditError(message)


def _ambiguous(path: str, index: int, total: int, outcome: Ambiguous, text: str) -> EditError:
    subject = "the text" if total == 1 else f"edits[{index}]"
    lines = [line_number_at(text, s) for s in outcome.starts[:20]]
    where = ", ".join(str(n) for n in lines) + (", ..." if outcome.count > len(lines) else "")
    count = f"{outcome.count}+" if outcome.count >= 1000 else str(outcome.count)
    return EditError(
        f"Found {count} occurrences of {subject} in {path}. The text must be unique. "
        f"Please provide more context to make it unique. Matches start at lines {where}."
    )


class _CrlfMap:
    """Maps offsets of the LF view back to the CRLF original."""

    __slots__ = ("_positions",)

    def __init__(self, original: str) -> None:
        self._positions = [m.start() - k for k, m in enumerate(re.finditer("\r\n", original))]

    def __call__(self, pos: int) -> int:
        return pos + bisect_left(self._positions, pos)


def _region_ops(old: str, new: str, matches: list[Found]) -> tuple[list[LineOp], LineView, LineView]:
    """Line opcodes from the replaced regions only: large files are never diffed whole."""
    # [first line, last line, change in line count, line start in old, line start in new]
    regions: list[list[int]] = []
    line = pos = shift = 0
    for match in matches:
        line += old.count("\n", pos, match.start)
        pos = match.start
        removed = old.count("\n", match.start, match.end)
        first, last = line, line + removed  # the line after a consumed newline joins the region
        delta = match.replacement.count("\n") - removed
        if regions and first <= regions[-1][1]:
            regions[-1][1] = max(regions[-1][1], last)
            regions[-1][2] += delta
        else:
            line_start = old.rfind("\n", 0, match.start) + 1
            regions.append([first, last, delta, line_start, line_start + shift])
        shift += len(match.replacement) - (match.end - match.start)
    a = LineView(old, [(first, offset) for first, _, _, offset, _ in regions])
    b = LineView(new)
    ops: list[LineOp] = []
    ia = ib = 0
    for first, last, delta, _, new_offset in regions:
        nb0 = first + (ib - ia)
        b.add_anchor(nb0, new_offset)
        ops.append(("equal", ia, first, ib, nb0))
        count = last - first + 1 + delta
        ops.extend(line_ops(a[first : last + 1], b[nb0 : nb0 + count], first, nb0))
        ia, ib = last + 1, nb0 + count
    ops.append(("equal", ia, len(a), ib, len(b)))
    return ops, a, b


def apply_edits(content: str, edits: Iterable[EditLike], path: str = "file") -> EditPreview:
    """Apply ``edits`` (``EditSpec``, ``{"oldText", "newText"}`` mappings or pairs) to ``content``.

    Raises:
        EditError: an edit is empty, not found, ambiguous or overlaps another, or the batch
            changes nothing. Nothing is applied then.
    """
    specs = [_as_spec(e) for e in edits]
    if not specs:
        raise EditError(f"No edits given for {path}.")
    bom = content.startswith("\ufeff")
    body = content[1:] if bom else content
    lf = body.replace("\r\n", "\n")
    to_body = _CrlfMap(body) if len(lf) != len(body) else None
    crlf_count = len(body) - len(lf)
    eol = "\r\n" if crlf_count and crlf_count * 2 >= lf.count("\n") else "\n"

    found: list[tuple[Found, int]] = []
    for index, spec in enumerate(specs):
        old = spec.old_text.replace("\r\n", "\n")
        new = spec.new_text.replace("\r\n", "\n")
        if not old:
            target = "oldText" if len(specs) == 1 else f"edits[{index}].oldText"
            raise EditError(f"{target} must not be empty in {path}.")
        outcome = find_match(lf, old, new)
        if isinstance(outcome, NotFound):
            raise _not_found(path, index, len(specs), outcome)
        if isinstance(outcome, Ambiguous):
            raise _ambiguous(path, index, len(specs), outcome, lf)
        found.append((outcome, index))

    ordered = sorted(found, key=lambda item: (item[0].start, item[0].end))
    for (a, ia), (b, ib) in zip(ordered, ordered[1:], strict=False):
        if b.start < a.end or (a.start == b.start):
            first, second = sorted((ia, ib))
            raise EditError(
                f"edits[{first}] and edits[{second}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )

    new_lf: list[str] = []
    new_body: list[str] = []
    lf_pos = 0
    body_pos = 0
    for match, _ in ordered:
        start = to_body(match.start) if to_body else match.start
        end = to_body(match.end) if to_body else match.end
        new_lf.append(lf[lf_pos : match.start])
        new_lf.append(match.replacement)
        new_body.append(body[body_pos:start])
        new_body.append(match.replacement.replace("\n", eol) if eol != "\n" else match.replacement)
        lf_pos, body_pos = match.end, end
    new_lf.append(lf[lf_pos:])
    new_body.append(body[body_pos:])
    new_content = ("\ufeff" if bom else "") + "".join(new_body)
    if new_content == content:
        raise EditError(
            f"No changes made to {path}. The replacement produced identical content. This might "
            "indicate an issue with special characters or the text not existing as expected."
        )
    new_text = "".join(new_lf)
    ops, old_view, new_view = _region_ops(lf, new_text, [m for m, _ in ordered])
    diff, first_changed = display_diff(old_view, new_view, ops=ops)
    return EditPreview(
        new_content=new_content,
        diff=diff,
        patch=unified_patch(old_view, new_view, path.lstrip("/"), ops=ops),
        first_changed_line=first_changed,
        tiers=[m.tier for m, _ in found],
    )


def compute_edit_preview(original_text: str, edits: Sequence[EditLike], path: str = "file") -> EditPreview:
    """What an edit call would do, without touching the disk (for the TUI's preview).

    Args:
        original_text: The file's current text.
        edits: ``{"oldText", "newText"}`` mappings, ``EditSpec``s or ``(old, new)`` pairs.
        path: The path shown in messages and the patch header.

    Raises:
        EditError: as ``apply_edits``.
    """
    return apply_edits(original_text, edits, path)
