"""Search used by the pickers: fuzzy tokens, ``"exact phrase"`` and ``re:<regex>`` queries."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from pi_coder.tui.completion import fuzzy_score

__all__ = ["fuzzy_score", "query_matcher", "rank"]

T = TypeVar("T")


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
