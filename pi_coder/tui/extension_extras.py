"""The TUI's ``ctx.ui.custom()``, theme, header/footer, editor paste, tools expansion and the
hidden-thinking label (docs/extensions.md, "Custom components").

``custom(factory)`` calls ``factory(done, theme)`` for a Textual widget and shows it in a
:class:`CustomScreen`: docked above the editor (inline) or centred over the transcript
(``overlay=True``). The widget gets the focus, so it takes the keys; it closes the screen by
calling ``done(value)``, Escape closes it with None.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding, BindingType
from textual.screen import ModalScreen

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.widget import Widget

    from pi_coder.extensions.theme import ThemeView
    from pi_coder.tui.context import AppHost

__all__ = ["CustomScreen", "TuiExtras"]


class CustomScreen(ModalScreen[Any]):
    """Holds an extension's widget; see the module docstring."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close", show=False)]
    DEFAULT_CSS = """
    CustomScreen { align: center bottom; background: $background 0%; }
    CustomScreen.-overlay { align: center middle; background: $pi-overlay; }
    CustomScreen > * { width: 100%; height: auto; max-height: 80%; border: round $accent; }
    CustomScreen.-overlay > * { width: 80%; }
    """

    def __init__(self, widget: Widget, overlay: bool) -> None:
        super().__init__(classes="-overlay" if overlay else "")
        self._widget = widget

    def compose(self) -> ComposeResult:
        yield self._widget

    def on_mount(self) -> None:
        if self._widget.can_focus:
            self._widget.focus()
        else:
            self.focus_next()

    def action_close(self) -> None:
        self.dismiss(None)


class TuiExtras:
    """Mixed into ``TuiUI`` (which sets ``_app``)."""

    _app: AppHost

    async def custom(
        self, factory: Callable[..., Any], *, overlay: bool = False, fallback: Callable[[], Any] | None = None
    ) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def done(value: Any = None) -> None:
            if not future.done():
                future.set_result(value)
            if screen is not None and screen in self._app.screen_stack:
                screen.dismiss(value) if screen is self._app.screen else self._app.pop_screen()

        screen: CustomScreen | None = None
        widget = factory(done, self.theme)
        screen = CustomScreen(widget, overlay)
        await self._app.push_screen(screen, lambda value: None if future.done() else future.set_result(value))
        return await future

    @property
    def theme(self) -> ThemeView:
        from pi_coder.extensions.theme import ThemeView

        return ThemeView(self._app.themes.theme)

    def get_all_themes(self) -> list[str]:
        return [info.name for info in self._app.themes.available()]

    def set_theme(self, name: str) -> bool:
        if name not in self.get_all_themes():
            return False
        return self._app.themes.use(name) is None

    def set_header(self, lines: Sequence[str] | None) -> None:
        """Pi draws a header above the transcript; here it is the first block above the editor."""
        self._lines("#widgets-above", "\0header", lines)

    def set_footer(self, lines: Sequence[str] | None) -> None:
        self._lines("#widgets-below", "\0footer", lines)

    def _lines(self, where: str, key: str, lines: Sequence[str] | None) -> None:
        from pi_coder.tui.widgets.panels import ExtensionWidgets

        self._app.query_one(where, ExtensionWidgets).set_lines(key, lines)

    def paste_to_editor(self, text: str) -> None:
        self._app.editor.insert(text)

    def get_tools_expanded(self) -> bool:
        return bool(self._app.tools_expanded)

    def set_tools_expanded(self, expanded: bool) -> None:
        if bool(self._app.tools_expanded) != expanded:
            self._app.action_toggle_tools()

    def add_autocomplete_provider(self, provider: Callable[[str], Any], trigger_characters: Sequence[str]) -> None:
        triggers = "".join(trigger_characters)
        self._app.autocomplete_providers.insert(0, (provider, triggers))
        editor = self._app.editor
        editor.trigger_characters = "".join(dict.fromkeys(editor.trigger_characters + triggers))

    def on_terminal_input(self, handler: Callable[[str, str | None], Any]) -> Callable[[], None]:
        handlers = self._app.terminal_input_handlers
        handlers.append(handler)

        def unsubscribe() -> None:
            if handler in handlers:
                handlers.remove(handler)

        return unsubscribe

    def set_working_indicator(self, frames: Sequence[str] | None = None, interval_ms: int | None = None) -> None:
        self._app.status_line.set_indicator(frames, interval_ms)

    def set_working_visible(self, visible: bool) -> None:
        self._app.status_line.display = bool(visible)

    def set_hidden_thinking_label(self, label: str | None) -> None:
        from pi_coder.tui.widgets.assistant_message import ThinkingBlock

        ThinkingBlock.hidden_label = label or "Thinking..."
        for block in self._app.query(ThinkingBlock).results():
            block.relabel()
