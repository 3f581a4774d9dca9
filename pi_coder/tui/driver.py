"""Terminal input: recover the modified Enter keys that Textual's parser drops.

In the legacy encoding (tmux without ``extended-keys``, most terminals) Alt+Enter arrives as ESC CR
and Textual reports a plain ``enter``; xterm's modifyOtherKeys form (``CSI 27;3;13~``) arrives as a
bare ``\\r`` key. Both lose the follow-up key. The parser below maps them to ``alt+enter`` (and the
Shift/Ctrl variants) before Textual sees them; a lone Esc is still reported after the usual delay.
Under the kitty keyboard protocol (``CSI 13;3u``) Textual already reports ``alt+enter``.
"""

from __future__ import annotations

import os
import selectors
import sys
from codecs import getincrementaldecoder
from collections.abc import Iterable
from typing import Any

from textual import events
from textual._parser import ParseError
from textual._xterm_parser import XTermParser

__all__ = ["PiXTermParser", "driver_class"]

_EXTRA_SEQUENCES: dict[str, str] = {
    "\x1b\r": "alt+enter",
    "\x1b[27;2;13~": "shift+enter",
    "\x1b[27;3;13~": "alt+enter",
    "\x1b[27;5;13~": "ctrl+enter",
    "\x1b[27;6;13~": "ctrl+shift+enter",
}


class PiXTermParser(XTermParser):
    """Textual's xterm parser plus the modified-Enter sequences above."""

    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        key = _EXTRA_SEQUENCES.get(sequence)
        if key is not None:
            return [events.Key(key, None)]
        return super()._sequence_to_key_events(sequence, alt)


def driver_class() -> type | None:
    """The Linux/macOS driver using :class:`PiXTermParser`, or None to keep Textual's choice."""
    if sys.platform == "win32" or os.environ.get("TEXTUAL_DRIVER"):
        return None
    from textual.drivers.linux_driver import LinuxDriver

    class PiLinuxDriver(LinuxDriver):
        def run_input_thread(self) -> None:
            selector = selectors.SelectSelector()
            selector.register(self.fileno, selectors.EVENT_READ)
            parser = PiXTermParser(self._debug)
            decode = getincrementaldecoder("utf-8")().decode

            def pump(ready: list[Any], final: bool = False) -> None:
                for index, (_key, mask) in enumerate(ready):
                    if mask & selectors.EVENT_READ:
                        data = decode(os.read(self.fileno, 4096), final=final and index == len(ready) - 1)
                        if not data:
                            break
                        for event in parser.feed(data):
                            self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)

            try:
                while not self.exit_event.is_set():
                    pump(selector.select(0.1))
                selector.unregister(self.fileno)
                pump(selector.select(0.1), final=True)
            finally:
                selector.close()
                try:
                    for _event in parser.feed(""):
                        pass
                except (EOFError, ParseError):
                    pass

    return PiLinuxDriver
