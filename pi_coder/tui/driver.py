"""Terminal input: recover the modified Enter keys that Textual's parser drops.

In the legacy encoding (tmux without ``extended-keys``, most terminals) Alt+Enter arrives as ESC CR
and Textual reports a plain ``enter``; xterm's modifyOtherKeys form (``CSI 27;3;13~``) arrives as a
bare ``\\r`` key. Both lose the follow-up key. The parser below maps them to ``alt+enter`` (and the
Shift/Ctrl variants) before Textual sees them; a lone Esc is still reported after the usual delay.
Under the kitty keyboard protocol (``CSI 13;3u``) Textual already reports ``alt+enter``.

tmux (with ``extended-keys on``) forwards a modified Enter only to a program that asked for
xterm's ``modifyOtherKeys``; otherwise it drops Shift+Enter altogether. So the driver asks for it
(``CSI > 4;1 m``: mode 1 leaves keys with a usual meaning, Ctrl+C among them, as they are) when
the screen starts and takes it back when it stops or suspends; Shift+Enter then arrives as
``CSI 13;2u`` or ``CSI 27;2;13~``. :func:`tmux_extended_keys_warning` is Pi's start-up warning when
tmux's ``extended-keys`` is off.

The terminal's background colour: the app asks with ``OSC 11 ; ?`` (:data:`BACKGROUND_QUERY`) when
its theme follows the terminal (``system``, ``light/dark``); the answer (``OSC 11 ; rgb:R/G/B``,
whenever it comes, even split over reads) is taken out of the input before Textual's parser sees
it (it would type it into the editor) and posted to the app as :class:`TerminalBackground`.
"""

from __future__ import annotations

import os
import re
import selectors
import sys
from codecs import getincrementaldecoder
from collections.abc import Iterable
from typing import Any

from textual import events
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.message import Message

__all__ = [
    "BACKGROUND_QUERY",
    "PiXTermParser",
    "TerminalBackground",
    "driver_class",
    "take_background_replies",
    "tmux_extended_keys_warning",
]

BACKGROUND_QUERY = "\x1b]11;?\x07"
_BACKGROUND_REPLY = re.compile(
    r"\x1b\]11;rgba?:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})(?:/[0-9a-fA-F]{1,4})?(?:\x07|\x1b\\)"
)


class TerminalBackground(Message):
    """The terminal answered :data:`BACKGROUND_QUERY`: its background, 0-255 per channel."""

    def __init__(self, rgb: tuple[int, int, int]) -> None:
        super().__init__()
        self.rgb = rgb

    @property
    def light(self) -> bool:
        r, g, b = self.rgb
        return (0.299 * r + 0.587 * g + 0.114 * b) > 127.5


def _channel(digits: str) -> int:
    return int(int(digits, 16) * 255 / (16 ** len(digits) - 1) + 0.5)


def take_background_replies(data: str) -> tuple[str, list[tuple[int, int, int]], str]:
    """Split terminal input into (what the parser gets, the background colours answered, an
    unfinished answer to prepend to the next read)."""
    if "\x1b]" not in data:
        return data, [], ""
    found = [(_channel(r), _channel(g), _channel(b)) for r, g, b in (m.groups() for m in _BACKGROUND_REPLY.finditer(data))]
    data = _BACKGROUND_REPLY.sub("", data)
    start = data.rfind("\x1b]11;")
    if start != -1 and len(data) - start < 64 and not re.search(r"\x07|\x1b\\", data[start:]):
        return data[:start], found, data[start:]  # the rest of the answer comes with the next read
    return data, found, ""

MODIFY_OTHER_KEYS_ON = "\x1b[>4;1m"
MODIFY_OTHER_KEYS_OFF = "\x1b[>4;0m"
TMUX_EXTENDED_KEYS_OFF = (
    "tmux extended-keys is off: Shift+Enter may arrive as Enter. "
    "Add `set -g extended-keys on` to ~/.tmux.conf and restart tmux."
)


def tmux_extended_keys_warning() -> str | None:
    """Pi's warning when running inside tmux whose ``extended-keys`` option is off (None otherwise,
    or when tmux cannot be asked within a second)."""
    import shutil
    import subprocess

    if not os.environ.get("TMUX") or shutil.which("tmux") is None:
        return None
    try:
        done = subprocess.run(
            ["tmux", "show-options", "-gv", "extended-keys"],
            capture_output=True, text=True, timeout=1, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout.strip()
    if done.returncode != 0 or not value:
        return None
    return None if value in ("on", "always") else TMUX_EXTENDED_KEYS_OFF

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
        # Bracketed paste is switched on and off with the screen (start, stop, suspend, resume):
        # modifyOtherKeys goes with it.
        def _enable_bracketed_paste(self) -> None:
            super()._enable_bracketed_paste()
            self.write(MODIFY_OTHER_KEYS_ON)

        def _disable_bracketed_paste(self) -> None:
            self.write(MODIFY_OTHER_KEYS_OFF)
            super()._disable_bracketed_paste()

        def run_input_thread(self) -> None:
            selector = selectors.SelectSelector()
            selector.register(self.fileno, selectors.EVENT_READ)
            parser = PiXTermParser(self._debug)
            decode = getincrementaldecoder("utf-8")().decode
            pending = ""

            def pump(ready: list[Any], final: bool = False) -> None:
                nonlocal pending
                for index, (_key, mask) in enumerate(ready):
                    if mask & selectors.EVENT_READ:
                        data = decode(os.read(self.fileno, 4096), final=final and index == len(ready) - 1)
                        if not data:
                            break
                        data, colours, pending = take_background_replies(pending + data)
                        for rgb in colours:
                            self.process_message(TerminalBackground(rgb))
                        if not data:  # all of it was the answer (an empty feed would end the parser)
                            continue
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
