"""The app-level key actions (bound in :mod:`pi_coder.tui.keys`), as a mixin of ``PiApp``.

The ones that open dialogs run the flows of :mod:`pi_coder.tui.screens.navigation`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.actions import SkipAction

from pi_coder.tui.keys import display_keys
from pi_coder.tui.screens import navigation
from pi_coder.tui.widgets.panels import PendingMessages

if TYPE_CHECKING:
    from pi_coder.tui.context import AppHost

__all__ = ["KeyActionsMixin"]

_DOUBLE_PRESS_SECONDS = 0.5


class KeyActionsMixin:
    """Esc, Ctrl+C, Ctrl+D, Shift+Tab, Ctrl+P, Ctrl+O, Ctrl+T, Alt+Up, End and the dialog keys. A binding whose
    action does not apply raises ``SkipAction`` so the key reaches the editor."""

    _last_clear: float = 0.0

    def _busy(self: AppHost) -> bool:
        session = self.session
        return session.is_streaming or session.is_compacting or session.is_retrying

    async def action_interrupt(self: AppHost) -> None:
        editor = self.editor
        if editor.close_menu() or navigation.cancel_branch_summary(self):
            return
        if self.session.is_bash_running:
            self.session.abort_bash()
            return
        if self._busy():
            restored = list(self.session.abort() or [])
            if restored:
                _restore_queued(self, restored)
            self.query_one(PendingMessages).show_queue([], [])
            return
        if editor.text.startswith("!"):
            editor.set_text("")
            return
        if navigation.handle_idle_escape(self):
            return
        raise SkipAction()

    async def action_clear(self: AppHost) -> None:
        now = time.monotonic()
        if now - self._last_clear < _DOUBLE_PRESS_SECONDS:
            await self.quit_app()
            return
        self._last_clear = now
        self.editor.set_text("")
        self.editor.close_menu()
        hint = f"Press {display_keys(self.effective_keys['app.clear'])} again to exit"
        self.status_line.note(hint)
        status = self.status_line
        status.set_timer(_DOUBLE_PRESS_SECONDS, lambda: status.clear_note(hint))  # ends with the widget

    async def action_exit(self: AppHost) -> None:
        if self.editor.text:
            raise SkipAction()
        await self.quit_app()

    async def action_cycle_thinking_level(self: AppHost) -> None:
        # The session's level only: the default changes with /settings or /thinking (as in Pi).
        level = self.session.cycle_thinking_level(save_default=False)
        if level is None:
            self.status("Current model does not support thinking")
        else:
            self.status(f"Thinking level: {level}")
        self.editor.set_thinking_level(self.session.thinking_level)
        self.refresh_footer()

    async def action_cycle_model(self: AppHost, direction: int = 1) -> None:
        # This session only: Ctrl+S in the model picker saves a default (as in Pi).
        result = self.session.cycle_model(direction, save_default=False)
        if result is None:
            self.status("Only one model in scope")
        else:
            model, level = result
            thinking = f" (thinking: {level})" if model.reasoning else ""
            self.status(f"Switched to {model.name or model.id}{thinking}")
        self.editor.set_thinking_level(self.session.thinking_level)
        self.refresh_footer()

    def action_toggle_tools(self: AppHost) -> None:
        self.tools_expanded = not self.tools_expanded
        if self.controller is not None:
            self.controller.set_tools_expanded(self.tools_expanded)

    def action_toggle_thinking(self: AppHost) -> None:
        self.set_thinking_hidden(not self.hide_thinking)
        try:  # remembered for the next start, as Pi does
            navigation.save_settings(self, {"hide_thinking_block": self.hide_thinking})
        except Exception as exc:
            self.status(f"Could not save hide_thinking_block: {exc}", "warning")
            return
        self.status("Thinking blocks hidden" if self.hide_thinking else "Thinking blocks shown")

    def set_thinking_hidden(self: AppHost, hidden: bool) -> None:
        """Collapse (or expand) every thinking block, now and for blocks still to come."""
        self.hide_thinking = hidden
        if self.controller is not None:
            self.controller.set_thinking_hidden(hidden)

    def action_select_model(self: AppHost) -> None:
        navigation.run_dialog(self, navigation.open_model_picker(self))

    def action_open_tree(self: AppHost) -> None:
        navigation.run_dialog(self, navigation.open_tree(self))

    def action_open_fork(self: AppHost) -> None:
        navigation.run_dialog(self, navigation.open_fork(self))

    def action_open_resume(self: AppHost) -> None:
        navigation.run_dialog(self, navigation.open_session_picker(self))

    async def action_new_session(self: AppHost) -> None:
        await self.new_session()

    def action_dequeue(self: AppHost) -> None:
        texts = list(self.session.dequeue() or [])
        if not texts:
            self.status("No queued messages to restore")
            return
        _restore_queued(self, texts)
        self.query_one(PendingMessages).show_queue([], [])
        self.status(f"Restored {len(texts)} queued message{'s' if len(texts) != 1 else ''}")

    def action_scroll_page(self: AppHost, direction: int) -> None:
        # A multi-line draft keeps PageUp/PageDown for moving in the editor.
        if self.editor.document.line_count > 1:
            raise SkipAction()
        transcript = self.transcript
        if direction < 0:
            transcript.scroll_page_up(animate=False)
        else:
            transcript.scroll_page_down(animate=False)

    def action_jump_to_end(self: AppHost) -> None:
        transcript = self.transcript
        if transcript.following:
            raise SkipAction()
        transcript.jump_to_end()


def _restore_queued(app: AppHost, texts: list[str]) -> None:
    """Queued messages back into the editor, one line apart (as Pi), before any draft."""
    editor = app.editor
    existing = editor.text
    editor.set_text("\n".join([*texts, existing] if existing.strip() else texts))
