"""Images of the draft, shown in the editor as ``[image #N]`` markers.

A clipboard paste (Ctrl+V) or a completed ``@image.png`` reference adds one; the bytes stay
here until the prompt is sent, when :meth:`ImageMarkers.in_text` gives the images whose marker is
still in the text, in marker order. A marker deleted or edited away drops its image.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ImageMarkers", "PendingImage"]

_MARKER = re.compile(r"\[image #(\d+)\]")


@dataclass(frozen=True, slots=True)
class PendingImage:
    """An image waiting in the draft."""

    data: bytes
    mime_type: str
    source: str
    """Where it came from: ``clipboard`` or the file's path."""


class ImageMarkers:
    """The images of one draft, numbered from 1."""

    def __init__(self) -> None:
        self._images: dict[int, PendingImage] = {}
        self._next = 1

    def add(self, data: bytes, mime_type: str, source: str) -> str:
        """Keep an image; returns the marker to insert."""
        number = self._next
        self._next += 1
        self._images[number] = PendingImage(data, mime_type, source)
        return f"[image #{number}]"

    def in_text(self, text: str) -> list[PendingImage]:
        """The images whose markers are in ``text``, in order (each once)."""
        out: list[PendingImage] = []
        seen: set[int] = set()
        for match in _MARKER.finditer(text):
            number = int(match.group(1))
            if number in self._images and number not in seen:
                seen.add(number)
                out.append(self._images[number])
        return out

    def marker_before(self, line: str, column: int) -> int | None:
        """The start column of a known marker ending at ``column`` (Backspace deletes it whole)."""
        for match in _MARKER.finditer(line, 0, column):
            if match.end() == column and int(match.group(1)) in self._images:
                return match.start()
        return None

    def clear(self) -> None:
        self._images.clear()
        self._next = 1

    def __bool__(self) -> bool:
        return bool(self._images)
