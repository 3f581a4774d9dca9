"""Server-sent events decoder: bytes chunks in, events out (pure, no I/O).

Follows the WHATWG "event stream interpretation" rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
UTF-8 decoding that tolerates a character split across chunks, an optional leading BOM,
lines ended by CRLF, LF or CR (a CRLF split across two chunks counts once), ``:`` comments,
``field: value`` with one optional space removed, multi-line ``data`` joined with LF,
``id`` (ignored when it contains NUL) persisting across events, ``retry`` (digits only), and
a blank line dispatching the event. An event with no ``data`` line is not dispatched.

The hot path handles one network chunk at a time with ``str.split`` and a tight loop over
lines, so the per-event cost stays around a microsecond.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = ["SSEDecoder", "ServerSentEvent"]


@dataclass(slots=True)
class ServerSentEvent:
    """One dispatched event."""

    event: str = "message"
    """The ``event`` field, ``"message"`` when absent."""
    data: str = ""
    """The ``data`` lines joined with LF."""
    id: str = ""
    """The last event id seen so far in the stream (ids persist across events)."""
    retry: int | None = None
    """The reconnection time in milliseconds, when this event set one."""


class SSEDecoder:
    """Incremental SSE decoder.

    Feed raw byte chunks to :meth:`decode`, which returns the events completed by that chunk;
    call :meth:`flush` at end of stream. Chunk boundaries may fall anywhere, including inside
    a multi-byte UTF-8 character or between the CR and LF of a line ending.
    """

    __slots__ = (
        "_utf8",
        "_bom_checked",
        "_skip_lf",
        "_tail",
        "_event",
        "_data",
        "_last_id",
        "_retry",
        "reconnection_time",
    )

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._bom_checked = False
        self._skip_lf = False
        self._tail: list[str] = []
        """Pieces of the current unterminated line (a list keeps long lines linear)."""
        self._event = ""
        self._data: list[str] = []
        self._last_id = ""
        self._retry: int | None = None
        self.reconnection_time: int | None = None
        """The last ``retry`` value seen in the stream (milliseconds), if any."""

    @property
    def last_event_id(self) -> str:
        """The last event id buffer (what a client would send as ``Last-Event-ID``)."""
        return self._last_id

    def decode(self, chunk: bytes) -> list[ServerSentEvent]:
        """Decode one chunk and return the events it completes (possibly none)."""
        text = self._utf8.decode(chunk)
        if not text:
            return []
        return self._feed(text)

    def flush(self) -> list[ServerSentEvent]:
        """End of stream: decode what is left and return it.

        Per the standard an event not terminated by a blank line is discarded; this decoder is
        lenient instead and dispatches it, because servers that close right after the last
        ``data:`` line are common.
        """
        text = self._utf8.decode(b"", True)
        events = self._feed(text + "\n\n") if (text or self._tail or self._data) else []
        self._tail.clear()
        return events

    def _feed(self, text: str) -> list[ServerSentEvent]:
        if not self._bom_checked:
            if not text:
                return []
            self._bom_checked = True
            if text[0] == "\ufeff":
                text = text[1:]
                if not text:
                    return []
        if self._skip_lf:
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return []
        if "\r" in text:
            # A CR at the very end may be the first half of a CRLF split across chunks.
            self._skip_lf = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "\n" not in text:
            self._tail.append(text)
            return []
        lines = text.split("\n")
        if self._tail:
            self._tail.append(lines[0])
            lines[0] = "".join(self._tail)
            self._tail.clear()
        last = lines.pop()
        if last:
            self._tail.append(last)
        return self._process(lines)

    def _process(self, lines: list[str]) -> list[ServerSentEvent]:
        events: list[ServerSentEvent] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append(
                        ServerSentEvent(self._event or "message", "\n".join(data), self._last_id, self._retry)
                    )
                    data.clear()
                self._event = ""
                self._retry = None
                continue
            if line[0] == ":":
                continue
            name, _, value = line.partition(":")
            if value and value[0] == " ":
                value = value[1:]
            if name == "data":
                data.append(value)
            elif name == "event":
                self._event = value
            elif name == "id":
                if "\0" not in value:
                    self._last_id = value
            elif name == "retry":
                if value.isascii() and value.isdigit():
                    self._retry = self.reconnection_time = int(value)
        return events
