"""Search used by the pickers: fuzzy tokens, ``"exact phrase"`` and ``re:<regex>`` queries."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["fuzzy_score", "query_matcher", "rank"]

T = TypeVar("T")


def _token_score(token: str, text: str) -> float | None:
    index = text.find(token)
    if index >= 0:
        word_start = index == 0 or not text[index - 1].isalnum()
        return (0.0 if word_start else 1.0) + index / 1000
    position, gaps = 0, 0
    for char in token:
        found = text.find(char, position)
        if found < 0:
            return None
        gaps += found - position
        position = found + 1
    return 2.0 + min(gaps, 50) / 10


def fuzzy_score(query: str, text: str) -> float | None:
    """Lower is better; None when a whitespace-separated token of ``query`` does not match.

    Each token must be a substring of ``text`` (best at a word start) or, failing that, its
    characters must appear in order. Case-insensitive.
    """
    lowered = text.lower()
    total = 0.0
    for token in query.lower().split():
        score = _token_score(token, lowered)
        if score is None:
            return None
        total += score
    return total


def query_matcher(query: str) -> Callable[[str], float | None]:
    """A scoring function for ``query``: ``re:<regex>``, ``"exact phrase"`` or fuzzy tokens.

    An invalid regular expression matches nothing.
    """
    stripped = query.strip()
    if stripped.startswith("re:"):
        try:
            pattern = re.compile(stripped[3:], re.IGNORECASE)
        except re.error:
            return lambda text: None
        return lambda text: (0.0 + (m.start() / 1000)) if (m := pattern.search(text)) else None
    if len(stripped) >= 2 and stripped.startswith('"') and stripped.endswith('"'):
        phrase = stripped[1:-1].lower()
        return lambda text: (text.lower().find(phrase) / 1000) if phrase in text.lower() else None
    return lambda text: fuzzy_score(stripped, text)


def rank(query: str, items: Sequence[T], text_of: Callable[[T], str], *, stable: bool = False) -> list[T]:
    """The items matching ``query``; best first unless ``stable`` (then in their given order)."""
    if not query.strip():
        return list(items)
    matcher = query_matcher(query)
    scored = [(score, index, item) for index, item in enumerate(items) if (score := matcher(text_of(item))) is not None]
    if not stable:
        scored.sort(key=lambda entry: (entry[0], entry[1]))
    return [item for _, _, item in scored]
