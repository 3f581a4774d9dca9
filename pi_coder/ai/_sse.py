"""Server-sent events decoder: bytes chunks in, events out (pure, no I/O).

Follows the WHATWG "event stream interpretation" rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
an optional leading UTF-8 BOM, lines ended by CRLF, LF or CR (a CRLF split across two chunks
counts once), ``:`` comments, ``field: value`` with one optional leading space removed,
multi-line ``data`` joined with LF, ``id`` (ignored when it contains NUL) persisting across
events, ``retry`` (digits only), and a blank line dispatching the event. An event without
``data`` is not dispatched.

The decoder works on bytes: LF, CR and ``:`` never occur inside a multi-byte UTF-8 sequence,
so splitting bytes gives the same lines as splitting decoded text, and a character split
across chunks needs no special care. Field values are decoded with replacement of invalid
sequences, as the standard's UTF-8 decode does. Keeping the payload as bytes lets providers
hand it straight to a bytes JSON parser (``ServerSentEvent.raw``) without a decode/encode
round trip.

Speed: a chunk is split into whole events at blank lines, and the two shapes real APIs
send (``data: ...`` and ``event: ...`` + ``data: ...``) take a fast path; everything else goes
through the general line-by-line rules.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SSEDecoder", "ServerSentEvent"]

_BOM = b"\xef\xbb\xbf"
_LF = 0x0A
_CR = 0x0D


@dataclass(slots=True)
class ServerSentEvent:
    """One dispatched event."""

    event: str = "message"
    """The ``event`` field, ``"message"`` when absent or empty."""
    raw: bytes = b""
    """The ``data`` lines joined with LF, as UTF-8 bytes."""
    id: str = ""
    """The last event id seen so far in the stream (ids persist across events)."""
    retry: int | None = None
    """The reconnection time in milliseconds, when this event set one."""

    @property
    def data(self) -> str:
        """The ``data`` field as text."""
        return self.raw.decode("utf-8", "replace")


class SSEDecoder:
    """Incremental SSE decoder.

    Feed raw byte chunks to :meth:`decode`, which returns the events completed by that chunk;
    call :meth:`flush` at end of stream. Chunk boundaries may fall anywhere, including inside
    a multi-byte UTF-8 character or between the CR and LF of a line ending.
    """

    __slots__ = ("_head", "_started", "_skip_lf", "_tail", "_last_id", "_names", "reconnection_time")

    def __init__(self) -> None:
        self._head = b""
        self._started = False
        self._skip_lf = False
        self._tail: list[bytes] = []
        """Bytes after the last blank line (a list keeps long events linear in chunk count)."""
        self._last_id = ""
        self._names: dict[bytes, str] = {}
        self.reconnection_time: int | None = None
        """The last valid ``retry`` value seen in the stream (milliseconds), if any."""

    @property
    def last_event_id(self) -> str:
        """The last event id buffer (what a client would send as ``Last-Event-ID``)."""
        return self._last_id

    def decode(self, chunk: bytes) -> list[ServerSentEvent]:
        """Decode one chunk and return the events it completes (possibly none)."""
        if not chunk:
            return []
        if not self._started:
            head = self._head + chunk
            if len(head) < 3 and _BOM.startswith(head):
                self._head = head
                return []
            self._started = True
            self._head = b""
            chunk = head[3:] if head.startswith(_BOM) else head
            if not chunk:
                return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[0] == _LF:
                chunk = chunk[1:]
                if not chunk:
                    return []
        if b"\r" in chunk:
            # A CR at the very end may be the first half of a CRLF split across chunks.
            self._skip_lf = chunk[-1] == _CR
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        tail = self._tail
        if tail:
            boundary = chunk[0] == _LF and tail[-1][-1] == _LF
            tail.append(chunk)
            if not boundary and b"\n\n" not in chunk:
                return []
            chunk = b"".join(tail)
            tail.clear()
        elif b"\n\n" not in chunk:
            tail.append(chunk)
            return []
        blocks = chunk.split(b"\n\n")
        rest = blocks.pop()
        if rest:
            tail.append(rest)
        return self._blocks(blocks)

    def flush(self) -> list[ServerSentEvent]:
        """End of stream: return what is left.

        Per the standard an event not terminated by a blank line is discarded; this decoder is
        lenient instead and dispatches it, because servers that close right after the last
        ``data:`` line exist.
        """
        pending = b"".join(self._tail)
        self._tail.clear()
        if not self._started and self._head:
            pending = self._head
            self._head = b""
        if not pending.strip(b"\n"):
            return []
        return self._blocks([pending.rstrip(b"\n")])

    def _blocks(self, blocks: list[bytes]) -> list[ServerSentEvent]:
        """Turn complete events (the lines between blank lines) into dispatched events."""
        events: list[ServerSentEvent] = []
        names = self._names
        for block in blocks:
            if block[:6] == b"data: ":
                if b"\n" not in block:
                    events.append(ServerSentEvent("message", block[6:], self._last_id))
                    continue
            elif block[:7] == b"event: ":
                nl = block.find(b"\n")
                if nl > 7 and block[nl + 1 : nl + 7] == b"data: " and block.find(b"\n", nl + 1) < 0:
                    key = block[7:nl]
                    name = names.get(key)
                    if name is None:
                        name = names[key] = key.decode("utf-8", "replace")
                    events.append(ServerSentEvent(name, block[nl + 7 :], self._last_id))
                    continue
            self._general(block, events)
        return events

    def _general(self, block: bytes, events: list[ServerSentEvent]) -> None:
        """The standard's line rules for one block (ends with a dispatch)."""
        event = b""
        data: list[bytes] = []
        retry: int | None = None
        for line in block.split(b"\n"):
            if not line:
                if data:
                    events.append(self._make(event, data, retry))
                event, data, retry = b"", [], None
                continue
            if line[0] == 0x3A:  # ":" comment
                continue
            name, _, value = line.partition(b":")
            if value[:1] == b" ":
                value = value[1:]
            if name == b"data":
                data.append(value)
            elif name == b"event":
                event = value
            elif name == b"id":
                if b"\0" not in value:
                    self._last_id = value.decode("utf-8", "replace")
            elif name == b"retry":
                if value.isdigit():
                    retry = self.reconnection_time = int(value)
        if data:
            events.append(self._make(event, data, retry))

    def _make(self, event: bytes, data: list[bytes], retry: int | None) -> ServerSentEvent:
        name = event.decode("utf-8", "replace") if event else "message"
        return ServerSentEvent(name, b"\n".join(data), self._last_id, retry)
