"""The prompt editor: submit / steer / follow-up keys, history, completion, bash-mode border."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from textual import events
from textual.actions import SkipAction
from textual.message import Message
from textual.widgets import TextArea

from pi_coder.tui.completion import (
    Completion,
    CompletionContext,
    common_prefix,
    path_completions,
    path_token,
    token_context,
)
from pi_coder.tui.keys import bindings_for
from pi_coder.tui.widgets.completion_menu import CompletionMenu
from pi_coder.tui.widgets.image_markers import ImageMarkers, PendingImage
from pi_coder.tui.widgets.paste_markers import PasteMarkers

__all__ = ["PromptEditor", "PromptHistory"]

CompletionSource = Callable[[CompletionContext], list[Completion]]
ClipboardImageReader = Callable[[], "tuple[bytes, str] | None"]
"""Returns the clipboard's image (bytes, mime type) or None; called in a thread on Ctrl+V."""


def _system_clipboard_image() -> tuple[bytes, str] | None:
    from pi_coder.tui.clipboard_image import read_clipboard_image

    return read_clipboard_image()


class PromptHistory:
    """Submitted prompts, newest last; at most ``limit``, no consecutive duplicates."""

    def __init__(self, entries: Sequence[str] = (), limit: int = 100) -> None:
        self.limit = limit
        self.entries: list[str] = []
        for entry in entries:
            self.add(entry)

    def add(self, text: str) -> None:
        text = text.strip()
        if not text or (self.entries and self.entries[-1] == text):
            return
        self.entries.append(text)
        del self.entries[: -self.limit]


class PromptEditor(TextArea):
    """Multi-line editor. Posts :class:`Submitted`; Enter with a trailing ``\\`` inserts a newline."""

    DEFAULT_CSS = """
    PromptEditor {
        height: auto; min-height: 3; max-height: 12; margin: 0 0; padding: 0 1;
        border: round $primary 60%; background: $background; scrollbar-size-vertical: 0;
    }
    PromptEditor:focus { border: round $primary; }
    PromptEditor.-bash, PromptEditor.-bash:focus { border: round $warning; }
    PromptEditor.-bash-excluded, PromptEditor.-bash-excluded:focus { border: round $warning 50%; }
    PromptEditor.-thinking-minimal:focus { border: round $foreground 50%; }
    PromptEditor.-thinking-low:focus { border: round $secondary; }
    PromptEditor.-thinking-medium:focus { border: round $accent; }
    PromptEditor.-thinking-high:focus, PromptEditor.-thinking-xhigh:focus, PromptEditor.-thinking-max:focus {
        border: round $error 80%;
    }
    PromptEditor > .text-area--cursor-line { background: transparent; }
    """

    BINDINGS = bindings_for("editor")

    @dataclass
    class Submitted(Message):
        """The user sent the editor's text (``follow_up`` for Alt+Enter)."""

        editor: PromptEditor
        text: str
        follow_up: bool = False
        images: list[PendingImage] = field(default_factory=list)
        """Images whose ``[image #N]`` markers are in ``text``, in order."""

        @property
        def control(self) -> PromptEditor:
            return self.editor

    def __init__(
        self,
        *,
        prompt_history: PromptHistory | None = None,
        menu: CompletionMenu | None = None,
        completion_source: CompletionSource | None = None,
        cwd: str = ".",
        clipboard_image: ClipboardImageReader | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__("", soft_wrap=True, show_line_numbers=False, tab_behavior="focus", id=id)
        self.prompt_history = prompt_history or PromptHistory()
        self.menu = menu
        self.completion_source = completion_source
        self.trigger_characters = ""
        """Characters starting a token an extension's autocomplete provider completes."""
        self.cwd = cwd
        self._history_index: int | None = None
        self._draft = ""
        self._programmatic = False
        self._thinking_class = ""
        self.pastes = PasteMarkers()
        self.images = ImageMarkers()
        self.clipboard_image = clipboard_image or _system_clipboard_image

    async def _on_paste(self, event: events.Paste) -> None:
        # Textual runs each class's handler in turn: a small paste goes on to TextArea's.
        if self.read_only or not PasteMarkers.is_large(event.text):
            return
        event.prevent_default()
        if result := self._replace_via_keyboard(self.pastes.add(event.text), *self.selection):
            self.move_cursor(result.end_location)
            self.focus()

    def action_delete_left(self) -> None:
        start, end = self.selection
        if (self.pastes or self.images) and start == end:
            row, column = end
            line = self.document[row]
            begin = self.pastes.marker_before(line, column)
            if begin is None:
                begin = self.images.marker_before(line, column)
            if begin is not None:
                self.delete((row, begin), end)
                return
        super().action_delete_left()

    def action_paste(self) -> None:
        """Ctrl+V: the clipboard's image as an ``[image #N]`` marker, else the text paste as before."""
        if self.read_only:
            return
        self.run_worker(self._paste_clipboard(), group="clipboard-image", exit_on_error=False)

    async def _paste_clipboard(self) -> None:
        try:
            image = await asyncio.to_thread(self.clipboard_image)
        except Exception:
            image = None
        if image is None:
            super().action_paste()
            return
        self.insert_image(image[0], image[1], "clipboard")

    def insert_image(self, data: bytes, mime_type: str, source: str) -> None:
        """Put an image into the draft: its marker goes where the cursor (or selection) is."""
        marker = self.images.add(data, mime_type, source)
        if result := self._replace_via_keyboard(marker, *self.selection):
            self.move_cursor(result.end_location)

    @property
    def expanded_text(self) -> str:
        """The text with paste markers replaced by what was pasted (what is sent)."""
        return self.pastes.expand(self.text)

    # ------------------------------------------------------------------ text helpers

    def set_text(self, text: str, *, keep_history: bool = False) -> None:
        """Replace the text and put the cursor at the end."""
        self._programmatic = keep_history
        if not text:
            self.pastes.clear()
            self.images.clear()
        self.load_text(text)
        self.move_cursor(self.document.end)
        if not keep_history:
            self._history_index = None

    def set_thinking_level(self, level: str | None) -> None:
        if self._thinking_class:
            self.remove_class(self._thinking_class)
        self._thinking_class = f"-thinking-{level}" if level and level != "off" else ""
        if self._thinking_class:
            self.add_class(self._thinking_class)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        text = self.text
        self.set_class(text.startswith("!") and not text.startswith("!!"), "-bash")
        self.set_class(text.startswith("!!"), "-bash-excluded")
        if self._programmatic:
            self._programmatic = False
        else:
            self._history_index = None
        self._update_completion()

    @property
    def _draw_cursor(self) -> bool:
        # ``show_hardware_cursor``: the terminal's own cursor marks the caret, none is drawn.
        return not self.has_class("-hardware-cursor") and bool(super()._draw_cursor)

    def on_focus(self) -> None:
        display = getattr(self.app, "terminal_display", None)  # the hardware cursor (tui/terminal_display.py)
        if display is not None:
            display.editor_focus(True)

    def on_blur(self) -> None:
        if self.menu is not None:
            self.menu.close()
        display = getattr(self.app, "terminal_display", None)
        if display is not None:
            display.editor_focus(False)

    # ------------------------------------------------------------------ completion

    def _update_completion(self) -> None:
        if self.menu is None or self.completion_source is None:
            return
        row, column = self.cursor_location
        context = token_context(self.document[row], column, row)
        if context is None and self.trigger_characters:
            token, start = path_token(self.document[row], column)
            if token and token[0] in self.trigger_characters:
                context = CompletionContext("extension", token, start, column)
        if context is None:
            menu_context = self.menu.context
            if self.menu.is_open and menu_context is not None and menu_context.kind == "path":
                token, start = path_token(self.document[row], column)
                items = path_completions(token, self.cwd) if start == menu_context.start else []
                if len(items) > 1:
                    self.menu.show(CompletionContext("path", token, start, column), items)
                    return
            self.menu.close()
            return
        self.menu.show(context, self.completion_source(context))

    def _image_file(self, replacement: str) -> tuple[bytes, str, str] | None:
        """``(bytes, mime, path)`` when an ``@file`` completion names an image."""
        from pi_coder.core.attachments import read_image_file

        name = replacement.strip().removeprefix("@").strip('"')
        if not name or name.endswith("/"):
            return None
        path = os.path.join(self.cwd, os.path.expanduser(name))
        found = read_image_file(path)
        return None if found is None else (found[0], found[1], name)

    def _apply(self, item: Completion, context: CompletionContext) -> None:
        row, _ = self.cursor_location
        replacement = item.replacement
        if context.kind == "file" and (image := self._image_file(replacement)) is not None:
            replacement = self.images.add(image[0], image[1], image[2]) + " "
        if context.kind == "slash" and not replacement.endswith(" "):
            replacement += " "
        self.replace(replacement, (row, context.start), (row, context.end))
        self.move_cursor((row, context.start + len(replacement)))
        if self.menu is not None:
            self.menu.close()

    def _complete_path(self) -> bool:
        row, column = self.cursor_location
        token, start = path_token(self.document[row], column)
        items = path_completions(token, self.cwd)
        if not items:
            return False
        context = CompletionContext("path", token, start, column)
        if len(items) == 1:
            self._apply_raw(items[0].replacement, context)
            return True
        prefix = common_prefix([i.replacement for i in items])
        if len(prefix) > len(token):
            self._apply_raw(prefix, context)
            context = CompletionContext("path", prefix, start, start + len(prefix))
        if self.menu is not None:
            self.menu.show(context, items)
        return True

    def _apply_raw(self, text: str, context: CompletionContext) -> None:
        row, _ = self.cursor_location
        self._programmatic = True
        self.replace(text, (row, context.start), (row, context.end))
        self.move_cursor((row, context.start + len(text)))

    # ------------------------------------------------------------------ actions (priority bindings)
    #
    # Priority bindings run as soon as the App reads the key, while the characters typed before it
    # are still waiting in this widget's queue: a fast "text<Enter>" burst (tmux send-keys, a
    # quick typist, a paste without bracketed-paste mode) would submit before the text arrives and
    # then lose it. The text-dependent actions therefore run through ``call_later``, which puts
    # them in this widget's queue behind the keys that came first.

    def _menu_open(self) -> bool:
        """Whether the menu is open, brought up to date with the text first: keys that came in one
        burst with Enter or Tab are inserted before the action runs, but the ``Changed`` messages
        that update the menu queue behind it, so the menu may still show an earlier token."""
        if self.menu is None or not self.menu.is_open:
            return False
        context = self.menu.context
        row, column = self.cursor_location
        if context is None or column != context.end or not self.document[row][context.start : column].endswith(context.query):
            self._update_completion()
        return self.menu.is_open

    def action_submit(self) -> None:
        self.call_later(self._submit)

    def action_follow_up(self) -> None:
        self.call_later(self._follow_up)

    def action_newline(self) -> None:
        self.call_later(self.insert, "\n")

    def _submit(self) -> None:
        if self._menu_open():
            assert self.menu is not None
            item, context = self.menu.selected(), self.menu.context
            if item is not None and context is not None:
                if context.kind in ("slash", "argument") and self.text.strip() == item.replacement.strip():
                    self.menu.close()  # already complete: Enter sends it
                else:
                    self._apply(item, context)
                    return
        self._send(follow_up=False)

    def _follow_up(self) -> None:
        if self.menu is not None:
            self.menu.close()
        self._send(follow_up=True)

    def _send(self, *, follow_up: bool) -> None:
        row, column = self.cursor_location
        line = self.document[row]
        if column > 0 and line[:column].endswith("\\") and column == len(line):
            self.replace("\n", (row, column - 1), (row, column))
            return
        text = self.expanded_text
        if not text.strip():
            return
        images = self.images.in_text(self.text)
        self.prompt_history.add(text)
        self._history_index = None
        # Cleared here, in this widget's queue, not later by the app: keys typed after Enter (already
        # queued behind it in a fast burst) belong to the next message and must not be wiped or joined.
        self.set_text("")
        self.post_message(self.Submitted(self, text, follow_up, images))

    def action_complete(self) -> None:
        if self._menu_open():
            assert self.menu is not None
            item, context = self.menu.selected(), self.menu.context
            if item is not None and context is not None:
                if context.kind == "path":
                    self._apply_raw(item.replacement, context)
                    self.menu.close()
                else:
                    self._apply(item, context)
            return
        if not self._complete_path():
            raise SkipAction()

    def action_history_prev(self) -> None:
        if self._menu_open():
            assert self.menu is not None
            self.menu.move(-1)
            return
        entries = self.prompt_history.entries
        if self._history_index is None:
            if self.text or not entries:
                raise SkipAction()
            self._history_index = len(entries) - 1
        else:
            if self.cursor_location[0] != 0:
                raise SkipAction()
            if self._history_index == 0:
                return
            self._history_index -= 1
        self.set_text(entries[self._history_index], keep_history=True)
        self.move_cursor((0, len(self.document[0])))

    def action_history_next(self) -> None:
        if self._menu_open():
            assert self.menu is not None
            self.menu.move(1)
            return
        if self._history_index is None or self.cursor_location[0] != self.document.line_count - 1:
            raise SkipAction()
        entries = self.prompt_history.entries
        if self._history_index >= len(entries) - 1:
            self._history_index = None
            self.set_text("")
            return
        self._history_index += 1
        self.set_text(entries[self._history_index], keep_history=True)

    def close_menu(self) -> bool:
        """Close the completion menu; True if it was open (Esc uses this)."""
        if self._menu_open():
            assert self.menu is not None
            self.menu.close()
            return True
        return False
