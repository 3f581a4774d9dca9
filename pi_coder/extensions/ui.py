"""``UIProtocol``: what a mode offers extensions as ``ctx.ui`` (docs/extensions-runtime.md#ui-per-mode), and :class:`NoUI` for print
and json mode (confirm is False, dialogs None, notify on stderr)."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from pi_coder.ai.abort import AbortSignal
    from pi_coder.extensions.theme import ThemeView

__all__ = ["NoUI", "NotifyLevel", "UIDefaults", "UIProtocol", "WidgetPlacement"]

NotifyLevel = Literal["info", "warning", "error"]
WidgetPlacement = Literal["above_editor", "below_editor"]


class UIProtocol(Protocol):
    """What a mode offers extensions. ``source`` is the calling extension's name."""

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> bool: ...

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> str | None: ...

    async def input(
        self, title: str, placeholder: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> str | None: ...

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> str | None: ...

    def notify(self, message: str, level: NotifyLevel = "info", *, source: str = "") -> None: ...

    def set_status(self, key: str, text: str | None) -> None: ...

    def set_widget(self, key: str, lines: Sequence[str] | None, placement: WidgetPlacement = "above_editor") -> None: ...

    def set_title(self, title: str) -> None: ...

    def set_editor_text(self, text: str) -> None: ...

    def get_editor_text(self) -> str: ...

    def set_working_message(self, text: str | None) -> None: ...

    async def custom(
        self, factory: Callable[..., Any], *, overlay: bool = False, fallback: Callable[[], Any] | None = None
    ) -> Any: ...

    @property
    def theme(self) -> ThemeView: ...

    def get_all_themes(self) -> list[str]: ...

    def set_theme(self, name: str) -> bool: ...

    def set_header(self, lines: Sequence[str] | None) -> None: ...

    def set_footer(self, lines: Sequence[str] | None) -> None: ...

    def paste_to_editor(self, text: str) -> None: ...

    def get_tools_expanded(self) -> bool: ...

    def set_tools_expanded(self, expanded: bool) -> None: ...

    def set_hidden_thinking_label(self, label: str | None) -> None: ...

    def set_working_indicator(self, frames: Sequence[str] | None = None, interval_ms: int | None = None) -> None: ...

    def set_working_visible(self, visible: bool) -> None: ...

    def on_terminal_input(self, handler: Callable[[str, str | None], Any]) -> Callable[[], None]: ...

    def add_autocomplete_provider(self, provider: Callable[[str], Any], trigger_characters: Sequence[str]) -> None: ...


class UIDefaults:
    """What a mode without a terminal offers for the TUI-only members of ``ctx.ui``: ``custom``
    runs ``fallback`` (None without one), the theme has no colours, the rest does nothing."""

    async def custom(
        self, factory: Callable[..., Any], *, overlay: bool = False, fallback: Callable[[], Any] | None = None
    ) -> Any:
        if fallback is None:
            return None
        value = fallback()
        return await value if inspect.isawaitable(value) else value

    @property
    def theme(self) -> ThemeView:
        from pi_coder.extensions.theme import ThemeView

        return ThemeView(None)

    def get_all_themes(self) -> list[str]:
        return []

    def set_theme(self, name: str) -> bool:
        return False

    def set_header(self, lines: Sequence[str] | None) -> None:
        pass

    def set_footer(self, lines: Sequence[str] | None) -> None:
        pass

    def paste_to_editor(self, text: str) -> None:
        pass

    def get_tools_expanded(self) -> bool:
        return False

    def set_tools_expanded(self, expanded: bool) -> None:
        pass

    def set_hidden_thinking_label(self, label: str | None) -> None:
        pass

    def set_working_indicator(self, frames: Sequence[str] | None = None, interval_ms: int | None = None) -> None:
        pass

    def set_working_visible(self, visible: bool) -> None:
        pass

    def on_terminal_input(self, handler: Callable[[str, str | None], Any]) -> Callable[[], None]:
        return lambda: None

    def add_autocomplete_provider(self, provider: Callable[[str], Any], trigger_characters: Sequence[str]) -> None:
        pass


class NoUI(UIDefaults):
    """Print and json mode: no dialogs (their cancel values at once), notify on stderr."""

    has_ui = False

    async def confirm(self, title: str, message: str, **_: Any) -> bool:
        return False

    async def select(self, title: str, options: Sequence[str], **_: Any) -> str | None:
        return None

    async def input(self, title: str, placeholder: str = "", **_: Any) -> str | None:
        return None

    async def editor(self, title: str, prefill: str = "", **_: Any) -> str | None:
        return None

    def notify(self, message: str, level: NotifyLevel = "info", *, source: str = "") -> None:
        prefix = f"[{source}] " if source else ""
        label = "" if level == "info" else f"{level}: "
        try:
            print(f"{prefix}{label}{message}", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass

    def set_status(self, key: str, text: str | None) -> None:
        pass

    def set_widget(self, key: str, lines: Sequence[str] | None, placement: WidgetPlacement = "above_editor") -> None:
        pass

    def set_title(self, title: str) -> None:
        pass

    def set_editor_text(self, text: str) -> None:
        pass

    def get_editor_text(self) -> str:
        return ""

    def set_working_message(self, text: str | None) -> None:
        pass
