"""Large pastes (over 10 lines or 1,000 characters) shown as ``[paste #N +L lines]`` markers.

The editor keeps the pasted text aside and shows the marker; :meth:`PasteMarkers.expand` puts
the text back when the prompt is sent. A marker edited into something else is left as typed.
"""

from __future__ import annotations

import re

__all__ = ["MAX_CHARS", "MAX_LINES", "PasteMarkers"]

MAX_LINES = 10
MAX_CHARS = 1000

_MARKER = re.compile(r"\[paste #(\d+) (?:\+\d+ lines|\d+ chars)\]")


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


class PasteMarkers:
    """The pastes of one draft, numbered from 1."""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}
        self._next = 1

    @staticmethod
    def is_large(text: str) -> bool:
        text = _lf(text)  # terminals send line ends of a paste as CR
        return text.count("\n") + 1 > MAX_LINES or len(text) > MAX_CHARS

    def add(self, text: str) -> str:
        """Keep ``text`` (tabs as four spaces, CR and CRLF as LF); returns the marker to insert."""
        text = _lf(text).replace("\t", "    ")
        number = self._next
        self._next += 1
        self._texts[number] = text
        lines = text.count("\n") + 1
        return f"[paste #{number} +{lines} lines]" if lines > 1 else f"[paste #{number} {len(text)} chars]"

    def expand(self, text: str) -> str:
        """``text`` with every known marker replaced by its paste."""
        if not self._texts:
            return text

        def replace(match: re.Match[str]) -> str:
            return self._texts.get(int(match.group(1)), match.group(0))

        return _MARKER.sub(replace, text)

    def marker_before(self, line: str, column: int) -> int | None:
        """The start column of a known marker ending at ``column`` of ``line`` (Backspace deletes it whole)."""
        for match in _MARKER.finditer(line, 0, column):
            if match.end() == column and int(match.group(1)) in self._texts:
                return match.start()
        return None

    def clear(self) -> None:
        self._texts.clear()
        self._next = 1

    def __bool__(self) -> bool:
        return bool(self._texts)
