"""``UIProtocol``: what a mode offers extensions as ``ctx.ui`` (docs/extensions-runtime.md#ui-per-mode), and :class:`NoUI` for print
and json mode (confirm is False, dialogs None, notify on stderr)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from pi_coder.ai.abort import AbortSignal

__all__ = ["NoUI", "NotifyLevel", "UIProtocol", "WidgetPlacement"]

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


class NoUI:
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
