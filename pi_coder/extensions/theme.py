"""``ThemeView``: the theme object renderers and ``ctx.ui.theme`` give extensions.

``fg(token, text)``/``bg(token, text)`` colour ``text`` with a theme token (``accent``,
``success``, ``error``, ``muted``, ``toolTitle``, ... see docs/themes.md) and return a string with
ANSI escapes, so pieces can be joined like plain strings (the TUI reads them with
``Text.from_ansi``). Without a theme (print, json and RPC mode) they return ``text`` unchanged.
The escapes are written here (24-bit colour), so no UI library is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.resources.themes import Theme

__all__ = ["ThemeView"]


class ThemeView:
    """A theme for extensions (see the module docstring)."""

    def __init__(self, theme: Theme | None) -> None:
        self._theme = theme

    @property
    def name(self) -> str | None:
        return self._theme.name if self._theme is not None else None

    def color(self, token: str) -> str | None:
        """``token`` as ``#rrggbb`` (None: the terminal default or no theme; KeyError: unknown token)."""
        return self._theme.hex(token) if self._theme is not None else None

    def fg(self, token: str, text: str) -> str:
        return self._colour(38, token, text)

    def bg(self, token: str, text: str) -> str:
        return self._colour(48, token, text)

    def bold(self, text: str) -> str:
        return self._flag("1", "22", text)

    def italic(self, text: str) -> str:
        return self._flag("3", "23", text)

    def underline(self, text: str) -> str:
        return self._flag("4", "24", text)

    def dim(self, text: str) -> str:
        return self._flag("2", "22", text)

    def strikethrough(self, text: str) -> str:
        return self._flag("9", "29", text)

    def inverse(self, text: str) -> str:
        return self._flag("7", "27", text)

    def _colour(self, layer: int, token: str, text: str) -> str:
        if self._theme is None:
            return text
        value = self._theme.hex(token)  # KeyError for an unknown token
        if value is None:  # the terminal's default colour
            return text
        r, g, b = int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)
        return f"\x1b[{layer};2;{r};{g};{b}m{text}\x1b[{layer + 1}m"

    def _flag(self, on: str, off: str, text: str) -> str:
        return text if self._theme is None else f"\x1b[{on}m{text}\x1b[{off}m"
