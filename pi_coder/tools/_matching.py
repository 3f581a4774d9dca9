"""Pure text matching for the edit tool (no I/O).

``find_match(haystack, old, new)`` locates ``old`` in ``haystack`` through tiers, each of
which must find exactly one match:

1. ``exact``: the substring as given;
2. ``trailing_whitespace``: trailing spaces/tabs on every line ignored;
3. ``unicode``: additionally NFKC-equivalent, smart quotes, dashes and special spaces folded;
4. ``indentation``: whole lines compared with leading whitespace ignored (the relative
   indentation must still be consistent); the replacement is re-indented to the match.

A tier with several matches stops the search (``Ambiguous``): a looser tier never picks one
of them. Positions are offsets into the given haystack, so callers change only the matched
region. Both inputs are expected with LF line endings.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from math import gcd
from typing import Literal, TypeAlias

__all__ = [
    "Ambiguous",
    "Candidate",
    "Found",
    "MatchOutcome",
    "MatchTier",
    "NotFound",
    "find_match",
    "line_number_at",
]

MatchTier: TypeAlias = Literal["exact", "trailing_whitespace", "unicode", "indentation"]

_MAX_COUNTED = 1000


@dataclass(frozen=True, slots=True)
class Found:
    """A unique match: ``haystack[start:end]`` is to be replaced by ``replacement``."""

    start: int
    end: int
    tier: MatchTier
    replacement: str


@dataclass(frozen=True, slots=True)
class Ambiguous:
    """More than one match in ``tier``; ``starts`` holds (up to 50) match offsets."""

    tier: MatchTier
    count: int
    starts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Candidate:
    """The region of the haystack most similar to the text that was not found."""

    start_line: int
    """1-based first line of the region."""
    lines: tuple[str, ...]
    diff_line: int | None
    """1-based haystack line of the first difference (``None``: no line differs)."""
    expected: str = ""
    actual: str = ""
    column: int = 0
    """1-based column of the first differing character."""


@dataclass(frozen=True, slots=True)
class NotFound:
    candidate: Candidate | None


MatchOutcome: TypeAlias = Found | Ambiguous | NotFound


def line_number_at(text: str, offset: int) -> int:
    """1-based line number of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


# ------------------------------------------------------------------ normalisation with offset maps

_SPECIAL = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    **dict.fromkeys("\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a", " "),
    **dict.fromkeys("\u202f\u205f\u3000", " "),
    **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff", ""),
}
_HSPACE = "[ \\t\\f\\v\u00a0\u2000-\u200a\u202f\u205f\u3000]"
_TRAILING = re.compile(f"(?P<ws>{_HSPACE}+)(?=\\n|\\Z)")
_TRAILING_OR_UNICODE = re.compile(f"(?P<ws>{_HSPACE}+)(?=\\n|\\Z)|[^\\x00-\\x7f]")
_char_cache: dict[str, str] = {}


def _fold_char(ch: str) -> str:
    folded = _char_cache.get(ch)
    if folded is None:
        folded = _SPECIAL.get(ch)
        if folded is None:
            # NFKD per character: two strings are NFKC-equal iff their NFKD forms are equal,
            # and NFKD (unlike NFKC) can be applied character by character.
            folded = "".join(_SPECIAL.get(c, c) for c in unicodedata.normalize("NFKD", ch))
        _char_cache[ch] = folded
    return folded


class _Normalized:
    """Normalised text plus a map from its offsets back to the original's."""

    __slots__ = ("text", "_norm", "_orig", "_expand")

    def __init__(self, text: str, *, unicode: bool) -> None:
        pattern = _TRAILING_OR_UNICODE if unicode else _TRAILING
        pieces: list[str] = []
        norm: list[int] = [0]
        orig: list[int] = [0]
        expand: list[bool] = [False]
        last = 0
        out_len = 0
        for m in pattern.finditer(text):
            if m.lastgroup == "ws":
                replacement = ""
            else:
                replacement = _fold_char(m.group())
                if len(replacement) == 1:
                    # Same length: offsets are unchanged, no breakpoint needed.
                    pieces.append(text[last : m.start()])
                    pieces.append(replacement)
                    out_len += m.start() - last + 1
                    last = m.end()
                    continue
            pieces.append(text[last : m.start()])
            out_len += m.start() - last
            norm.append(out_len)
            orig.append(m.start())
            expand.append(len(replacement) > 1)
            pieces.append(replacement)
            out_len += len(replacement)
            norm.append(out_len)
            orig.append(m.end())
            expand.append(False)
            last = m.end()
        pieces.append(text[last:])
        self.text = "".join(pieces)
        self._norm = norm
        self._orig = orig
        self._expand = expand

    def to_original(self, pos: int, *, end: bool) -> int:
        k = bisect_right(self._norm, pos) - 1
        if self._expand[k] and pos > self._norm[k]:
            # Inside the expansion of one original character: snap to that character.
            return self._orig[k + 1] if end else self._orig[k]
        return self._orig[k] + (pos - self._norm[k])


# ------------------------------------------------------------------ substring tiers


def _find_all(haystack: str, needle: str) -> list[int]:
    starts: list[int] = []
    i = haystack.find(needle)
    while i >= 0 and len(starts) < _MAX_COUNTED:
        starts.append(i)
        i = haystack.find(needle, i + 1)
    return starts


def _substring_tier(haystack: str, old: str, new: str, tier: MatchTier) -> MatchOutcome | None:
    if tier == "exact":
        starts = _find_all(haystack, old)
        if len(starts) == 1:
            return Found(starts[0], starts[0] + len(old), tier, new)
        return Ambiguous(tier, len(starts), tuple(starts[:50])) if starts else None
    unicode = tier == "unicode"
    needle = _Normalized(old, unicode=unicode).text
    if not needle.strip():
        return None
    hay = _Normalized(haystack, unicode=unicode)
    starts = _find_all(hay.text, needle)
    if not starts:
        return None
    mapped = tuple(hay.to_original(s, end=False) for s in starts[:50])
    if len(starts) > 1:
        return Ambiguous(tier, len(starts), mapped)
    return Found(mapped[0], hay.to_original(starts[0] + len(needle), end=True), tier, new)


# ------------------------------------------------------------------ indentation tier

_INDENT = re.compile(r"[ \t]*")


def _indent(line: str) -> str:
    m = _INDENT.match(line)
    return m.group() if m else ""


def _width(indent: str, tab: int = 4) -> int:
    return sum(tab if c == "\t" else 1 for c in indent)


def _key(line: str) -> str:
    return _Normalized(line, unicode=True).text.strip() if not line.isascii() else line.strip()


def _line_starts(text: str) -> list[int]:
    starts = [0]
    i = text.find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = text.find("\n", i + 1)
    return starts


def _consistent(old_lines: list[str], file_lines: list[str]) -> dict[str, str] | None:
    """The old-indent -> file-indent map if the window's relative indentation agrees, else None."""
    mapping: dict[str, str] = {}
    for o, f in zip(old_lines, file_lines, strict=True):
        if not o.strip():
            continue
        oi, fi = _indent(o), _indent(f)
        if mapping.setdefault(oi, fi) != fi:
            return None
    pairs = sorted(((_width(o), _width(f)) for o, f in mapping.items()))
    for (ow1, fw1), (ow2, fw2) in zip(pairs, pairs[1:], strict=False):
        if (ow1 < ow2) != (fw1 < fw2) or (ow1 == ow2) != (fw1 == fw2):
            return None
    return mapping


def _unit(widths: list[int]) -> int:
    g = 0
    for w in widths:
        g = gcd(g, w)
    return g


def _reindent(new: str, old_lines: list[str], mapping: dict[str, str]) -> str:
    old_base = next(_indent(line) for line in old_lines if line.strip())
    file_base = mapping[old_base]
    old_w0 = _width(old_base)
    old_unit = _unit([abs(_width(o) - old_w0) for o in mapping]) or 4
    uses_tabs = any("\t" in f for f in mapping.values())
    file_w0 = _width(file_base)
    file_unit = _unit([abs(_width(f) - file_w0) for f in mapping.values()])
    if uses_tabs:
        unit_str = "\t"
    else:
        unit_str = " " * (file_unit or old_unit)
    out: list[str] = []
    for line in new.split("\n"):
        if not line.strip():
            out.append("")
            continue
        indent = _indent(line)
        body = line[len(indent) :]
        if indent in mapping:
            out.append(mapping[indent] + body)
            continue
        prefix = max((o for o in mapping if indent.startswith(o)), key=len, default=None)
        if prefix is not None:
            extra = _width(indent[len(prefix) :])
            levels, rest = divmod(extra, old_unit)
            out.append(mapping[prefix] + unit_str * levels + " " * rest + body)
            continue
        levels = round((_width(indent) - old_w0) / old_unit)
        target = file_base
        for _ in range(-levels):
            if target.endswith(unit_str):
                target = target[: -len(unit_str)]
            else:
                target = target[:-1] if target else target
        out.append(target + body)
    return "\n".join(out)


def _indentation_tier(haystack: str, old: str, new: str) -> MatchOutcome | None:
    trailing_newline = old.endswith("\n")
    old_body = old[:-1] if trailing_newline else old
    old_lines = old_body.split("\n")
    old_keys = [_key(line) for line in old_lines]
    anchor = next((j for j, k in enumerate(old_keys) if k), None)
    if anchor is None:
        return None
    file_lines = haystack.split("\n")
    n = len(old_lines)
    hits: list[tuple[int, dict[str, str]]] = []
    key0 = old_keys[anchor]
    for i, line in enumerate(file_lines):
        if (line.isascii() and key0 not in line) or _key(line) != key0:
            continue
        start = i - anchor
        if start < 0 or start + n > len(file_lines):
            continue
        window = file_lines[start : start + n]
        if any(_key(f) != k for f, k in zip(window, old_keys, strict=True)):
            continue
        mapping = _consistent(old_lines, window)
        if mapping is not None:
            hits.append((start, mapping))
    if not hits:
        return None
    starts = _line_starts(haystack)
    if len(hits) > 1:
        return Ambiguous("indentation", len(hits), tuple(starts[s] for s, _ in hits[:50]))
    first, mapping = hits[0]
    region_start = starts[first]
    last = first + n - 1
    region_end = starts[last] + len(file_lines[last])
    new_body = new[:-1] if trailing_newline and new.endswith("\n") else new
    replacement = _reindent(new_body, old_lines, mapping)
    if trailing_newline and region_end < len(haystack):
        region_end += 1  # the matched lines' final newline belongs to the region too
        if new.endswith("\n"):
            replacement += "\n"
    return Found(region_start, region_end, "indentation", replacement)


# ------------------------------------------------------------------ closest candidate


def _closest(haystack: str, old: str) -> Candidate | None:
    old_lines = old[:-1].split("\n") if old.endswith("\n") else old.split("\n")
    file_lines = haystack.split("\n")
    n = len(old_lines)
    keys = [line.strip() for line in old_lines]
    wanted = {k for k in keys if k}
    positions: dict[str, list[int]] = {}
    for i, line in enumerate(file_lines):
        k = line.strip()
        if k in wanted:
            positions.setdefault(k, []).append(i)
    votes: Counter[int] = Counter()
    for j, k in enumerate(keys):
        hits = positions.get(k, ())
        if k and len(hits) <= 200:
            for i in hits:
                votes[i - j] += 1
    if not votes:
        anchor = next((j for j, k in enumerate(keys) if k), None)
        if anchor is None or len(file_lines) > 20000:
            return None
        matcher = difflib.SequenceMatcher(autojunk=False)
        matcher.set_seq2(keys[anchor])
        best, best_ratio = None, 0.5
        for i, line in enumerate(file_lines):
            matcher.set_seq1(line.strip())
            if matcher.real_quick_ratio() > best_ratio and matcher.quick_ratio() > best_ratio:
                ratio = matcher.ratio()
                if ratio > best_ratio:
                    best, best_ratio = i, ratio
        if best is None:
            return None
        votes[best - anchor] = 1
    joined_old = "\n".join(old_lines)
    best_start, best_score = 0, -1.0
    for start, _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[:10]:
        lo = max(0, min(start, len(file_lines) - 1))
        window = "\n".join(file_lines[lo : lo + n])
        score = difflib.SequenceMatcher(None, joined_old, window, autojunk=False).ratio()
        if score > best_score:
            best_start, best_score = lo, score
    window_lines = file_lines[best_start : best_start + n]
    for row, expected in enumerate(old_lines):
        actual = window_lines[row] if row < len(window_lines) else ""
        if expected != actual:
            col = next(
                (c for c, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
                min(len(expected), len(actual)),
            )
            return Candidate(
                start_line=best_start + 1, lines=tuple(window_lines), diff_line=best_start + row + 1,
                expected=expected, actual=actual, column=col + 1,
            )  # fmt: skip
    return Candidate(start_line=best_start + 1, lines=tuple(window_lines), diff_line=None)


# ------------------------------------------------------------------ entry point

_TIERS: tuple[MatchTier, ...] = ("exact", "trailing_whitespace", "unicode")


def find_match(haystack: str, old: str, new: str, *, hint: bool = True) -> MatchOutcome:
    """Find the unique region of ``haystack`` that ``old`` denotes.

    Args:
        haystack: The file text (LF line endings).
        old: The text to replace (LF line endings, non-empty).
        new: Its replacement; returned re-indented when the indentation tier matched.
        hint: Compute the closest candidate region when nothing matches.

    Returns:
        ``Found`` for exactly one match, ``Ambiguous`` when a tier matched several times,
        ``NotFound`` (with the closest candidate) otherwise.
    """
    for tier in _TIERS:
        outcome = _substring_tier(haystack, old, new, tier)
        if outcome is not None:
            return outcome
    outcome = _indentation_tier(haystack, old, new)
    if outcome is not None:
        return outcome
    return NotFound(_closest(haystack, old) if hint else None)
