"""Display settings of the TUI as a whole: output padding, the transcript's scrollbar, the
hardware cursor and the terminal's progress indicator (Pi's ``outputPad``,
``fullscreenScrollbar``, ``showHardwareCursor`` and ``terminal.showTerminalProgress``; README
"Settings").

- ``output_pad`` (0 or 1): the columns of padding inside transcript blocks (messages, thinking,
  tool and ``!`` output, summaries, notes). 0 puts the app's ``-output-pad-0`` class on, which
  ``pi.tcss`` reads; switching it restyles the transcript once.
- ``fullscreen_scrollbar``: ``auto`` shows the transcript's scrollbar when it overflows,
  ``always`` also when it does not, ``hidden`` never (the transcript still scrolls).
- ``show_hardware_cursor``: the terminal's own cursor shows at the editor's caret and the drawn
  (reverse-video) cursor is not drawn. Textual already moves the hidden terminal cursor to the
  caret after every frame (for input methods); this shows it while the editor has the keys
  (``CSI ? 25 h``) and hides it while a dialog or another widget has them (``CSI ? 25 l``).
- A theme that follows the terminal (``system``, ``light/dark``) asks for the terminal's
  background (``OSC 11 ; ?``); the answer arrives as ``driver.TerminalBackground``.
- ``terminal.show_terminal_progress``: while the agent works the terminal shows its busy
  indicator (``OSC 9 ; 4 ; 3`` in the tab or title bar of terminals that know it: Windows
  Terminal, ConEmu, Ghostty, WezTerm, iTerm2...); it is removed (``OSC 9 ; 4 ; 0``) when the run
  ends and when pi quits.

:class:`TerminalDisplay` holds the three for one app; nothing is written in a headless (test)
app, which has no terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.settings import Settings

__all__ = ["CURSOR_HIDE", "CURSOR_SHOW", "PROGRESS_BUSY", "PROGRESS_CLEAR", "TerminalDisplay"]

CURSOR_SHOW = "\x1b[?25h"
CURSOR_HIDE = "\x1b[?25l"
PROGRESS_BUSY = "\x1b]9;4;3;\x07"
"""OSC 9;4 state 3: indeterminate progress."""
PROGRESS_CLEAR = "\x1b]9;4;0;\x07"


class TerminalDisplay:
    """The terminal-level display settings of one app (see the module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.hardware_cursor = False
        self.progress = False
        """``terminal.show_terminal_progress``."""
        self._busy_shown = False
        self._cursor_shown = False
        self._asked_background = False

    def _write(self, text: str) -> None:
        driver = getattr(self.app, "_driver", None)  # Textual's own copy_to_clipboard writes there too
        if driver is None or self.app.is_headless:
            return
        driver.write(text)

    def apply(self, settings: Settings) -> None:
        """Take the three settings as they are (at start)."""
        # a dialog takes the keys without taking the editor's focus away: follow the screens too
        self.app.screen_change_signal.subscribe(self.app, self._screen_changed)
        self.set_output_pad(settings.output_pad)
        self.set_scrollbar(settings.fullscreen_scrollbar)
        self.set_hardware_cursor(settings.show_hardware_cursor)
        self.set_progress(settings.terminal.show_terminal_progress)
        self.ask_background()

    def ask_background(self) -> None:
        """Ask the terminal for its background when the theme depends on it (once)."""
        if self.app.themes.follows_terminal and not self._asked_background:
            from pi_coder.tui.driver import BACKGROUND_QUERY

            self._asked_background = True
            self._write(BACKGROUND_QUERY)

    # ------------------------------------------------------------------ output padding

    def set_output_pad(self, columns: int) -> None:
        self.app.set_class(columns == 0, "-output-pad-0")

    def set_scrollbar(self, mode: str) -> None:
        styles = self.app.transcript.styles
        styles.scrollbar_size_vertical = 0 if mode == "hidden" else 1
        styles.overflow_y = "scroll" if mode == "always" else "auto"

    # ------------------------------------------------------------------ hardware cursor

    def set_hardware_cursor(self, on: bool) -> None:
        self.hardware_cursor = on
        editor = self.app.editor
        editor.set_class(on, "-hardware-cursor")
        self.editor_focus(editor.has_focus)

    def _screen_changed(self, screen: Any) -> None:
        editor = self.app.editor
        self.editor_focus(screen is editor.screen and editor.has_focus)

    def editor_focus(self, focused: bool) -> None:
        """The editor gained or lost the keys: show or hide the terminal's cursor at its caret."""
        show = self.hardware_cursor and focused
        if show:  # a dialog's search box may have moved it: back to the caret
            editor = self.app.editor
            self.app.cursor_position = editor.cursor_screen_offset
            editor.refresh()  # the next frame carries the move
        if show != self._cursor_shown:
            self._cursor_shown = show
            self._write(CURSOR_SHOW if show else CURSOR_HIDE)

    def resumed(self) -> None:
        """After a suspend (external editor, Ctrl+Z) the driver hid the cursor again."""
        if self._cursor_shown:
            self._write(CURSOR_SHOW)

    # ------------------------------------------------------------------ progress

    def set_progress(self, on: bool) -> None:
        self.progress = on
        if not on:
            self.busy(False)

    def busy(self, working: bool) -> None:
        """The agent started or stopped working."""
        show = self.progress and working
        if show != self._busy_shown:
            self._busy_shown = show
            self._write(PROGRESS_BUSY if show else PROGRESS_CLEAR)

    def close(self) -> None:
        """Pi is quitting: no progress left in the tab."""
        self.busy(False)
