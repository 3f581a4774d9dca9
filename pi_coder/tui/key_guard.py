"""Dialogs that ignore keys sent before they were drawn.

A permission question can pop up while the user is typing: keys already on their way (Down then
Enter for the editor) would otherwise land in the new dialog and pick an option the user never
saw. A :class:`KeyGuard` screen records when it was first drawn: the app marks it as the frame
that shows it is written (``PiApp._display``), and a refresh callback marks it otherwise. The app
(``PiApp.on_event``) drops every key whose event is older than that, so only keys pressed while
the dialog was visible choose anything. (Marking it in the refresh callback alone came too late
on a loaded machine: a key typed after the dialog showed could reach it first and be dropped.)
"""

from __future__ import annotations

import time

from textual import events
from textual.widget import Widget

__all__ = ["KeyGuard"]


class KeyGuard:
    """Mixin for a screen: keys created before its first frame are ignored."""

    drawn_at: float | None = None

    def guard_keys(self, screen: Widget) -> None:
        """Call from ``on_mount``: the guard opens after the first refresh."""
        self.drawn_at = None
        screen.call_after_refresh(self._drawn)

    def _drawn(self) -> None:
        """The dialog is on screen: keys from now on are the user's answer (set once)."""
        if self.drawn_at is None:
            # Textual stamps events with time.monotonic (textual._time on POSIX).
            self.drawn_at = time.monotonic()

    def accepts_key(self, event: events.Key) -> bool:
        return self.drawn_at is not None and event.time >= self.drawn_at
