"""``ThemeView``: the theme object renderers and ``ctx.ui.theme`` give extensions.

``fg(token, text)``/``bg(token, text)`` colour ``text`` with a theme token (``accent``,
``success``, ``error``, ``muted``, ``toolTitle``, ... see docs/themes.md) and return a string with
ANSI escapes, so pieces can be joined like plain strings (the TUI reads them with
``Text.from_ansi``). Without a theme (print, json and RPC mode) they return ``text`` unchanged.
``rich`` is imported only when a colour is applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.core.themes import Theme

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
        return self._style(text, color=token)

    def bg(self, token: str, text: str) -> str:
        return self._style(text, bgcolor=token)

    def bold(self, text: str) -> str:
        return self._style(text, bold=True)

    def italic(self, text: str) -> str:
        return self._style(text, italic=True)

    def underline(self, text: str) -> str:
        return self._style(text, underline=True)

    def dim(self, text: str) -> str:
        return self._style(text, dim=True)

    def strikethrough(self, text: str) -> str:
        return self._style(text, strike=True)

    def inverse(self, text: str) -> str:
        return self._style(text, reverse=True)

    def _style(self, text: str, *, color: str | None = None, bgcolor: str | None = None, **flags: bool) -> str:
        if self._theme is None:
            return text
        from rich.style import Style

        style = Style(
            color=self._theme.rich(color) if color is not None else None,
            bgcolor=self._theme.rich(bgcolor) if bgcolor is not None else None,
        ) + Style.parse(" ".join(name for name, on in flags.items() if on) or "none")
        from rich.color import ColorSystem

        return style.render(text, color_system=ColorSystem.TRUECOLOR)
