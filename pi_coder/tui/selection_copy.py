"""Mouse selection copies on release: the text Textual selected (no margins, borders or
scrollbar glyphs) goes to the clipboard with OSC 52, as ``/copy`` does. With
``fullscreen_copy_on_select = false`` a release copies nothing and Ctrl+X copies the selection
(:meth:`SelectionCopyMixin.copy_selection`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.tui.context import AppHost

__all__ = ["SelectionCopyMixin"]


class SelectionCopyMixin:
    """``on_text_selected`` for ``PiApp``."""

    def on_text_selected(self: AppHost, event: Any) -> None:
        if self.session.settings.fullscreen_copy_on_select:
            self.copy_selection()

    def copy_selection(self: AppHost) -> bool:
        """Copy the transcript's selection, if there is one; True when something was copied."""
        try:
            text = self.screen.get_selected_text()
        except Exception:
            return False
        if not text or not text.strip():
            return False
        self.copy_to_clipboard(text)
        status = self.status_line
        status.note("Copied selection to clipboard")
        # The status line's own timer: it ends with the widget when the app exits first.
        status.set_timer(1.5, lambda: status.clear_note("Copied selection to clipboard"))
        return True
