"""The SSE decoder follows the WHATWG event-stream rules at any chunking."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_coder.ai._sse import ServerSentEvent, SSEDecoder


def decode_all(chunks: list[bytes]) -> list[tuple[str, str, str, int | None]]:
    decoder = SSEDecoder()
    events: list[ServerSentEvent] = []
    for chunk in chunks:
        events.extend(decoder.decode(chunk))
    events.extend(decoder.flush())
    return [(e.event, e.data, e.id, e.retry) for e in events]


def split_every(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def reference(text: str) -> list[tuple[str, str, str, int | None]]:
    """A direct transcription of the standard, over decoded text, for comparison."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines: list[str] = []
    current = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\r":
            lines.append(current)
            current = ""
            if i + 1 < len(text) and text[i + 1] == "\n":
                i += 1
        elif ch == "\n":
            lines.append(current)
            current = ""
        else:
            current += ch
        i += 1
    out = []
    event, data, last_id, retry = "", "", "", None
    for line in lines:
        if line == "":
            if data:
                out.append((event or "message", data[:-1] if data.endswith("\n") else data, last_id, retry))
            event, data, retry = "", "", None
            continue
        if line.startswith(":"):
            continue
        if ":" in line:
            name, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
        if name == "data":
            data += value + "\n"
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            retry = int(value)
    return out


def test_data_only_event() -> None:
    """A data line and a blank line make one "message" event."""
    assert decode_all([b"data: hello\n\n"]) == [("message", "hello", "", None)]


def test_named_event_with_multiline_data() -> None:
    """``event`` names the event; several data lines join with LF."""
    stream = b"event: delta\ndata: one\ndata: two\n\n"
    assert decode_all([stream]) == [("delta", "one\ntwo", "", None)]


def test_comments_unknown_fields_and_no_data() -> None:
    """Comments and unknown fields are ignored; an event without data is not dispatched."""
    stream = b": keep-alive\nfoo: bar\n\nevent: ping\n\ndata: x\n\n"
    assert decode_all([stream]) == [("message", "x", "", None)]


def test_space_rules_and_bare_field_names() -> None:
    """One leading space is removed; ``data`` without a colon is an empty value."""
    stream = b"data:no-space\n\ndata:  two spaces\n\ndata\n\n"
    assert decode_all([stream]) == [
        ("message", "no-space", "", None),
        ("message", " two spaces", "", None),
        ("message", "", "", None),
    ]


def test_id_persists_and_nul_id_is_ignored() -> None:
    """The last id carries over to later events; an id containing NUL is ignored."""
    stream = b"id: 7\ndata: a\n\ndata: b\n\nid: x\x00y\ndata: c\n\nid\ndata: d\n\n"
    assert decode_all([stream]) == [
        ("message", "a", "7", None),
        ("message", "b", "7", None),
        ("message", "c", "7", None),
        ("message", "d", "", None),
    ]


def test_retry_digits_only() -> None:
    """``retry`` must be ASCII digits; it is reported on the event and kept on the decoder."""
    decoder = SSEDecoder()
    events = decoder.decode(b"retry: 1500\ndata: a\n\nretry: 1x\ndata: b\n\n")
    assert [(e.data, e.retry) for e in events] == [("a", 1500), ("b", None)]
    assert decoder.reconnection_time == 1500


def test_line_endings_crlf_cr_lf_mixed() -> None:
    """CRLF, CR and LF all end lines, in any mix."""
    stream = b"data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n"
    assert [e[1] for e in decode_all([stream])] == ["a", "b", "c", "d"]


def test_crlf_split_across_chunks_counts_once() -> None:
    """A CR at the end of a chunk and an LF at the start of the next are one line ending."""
    assert decode_all([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]) == [("message", "a\nb", "", None)]


def test_bom_is_stripped_only_at_start() -> None:
    """A leading BOM is dropped, even split across chunks; later BOMs are data."""
    bom = "\ufeff".encode()
    assert decode_all([bom[:1], bom[1:2], bom[2:] + b"data: x\n\n"]) == [("message", "x", "", None)]
    assert decode_all([b"data: " + bom + b"x\n\n"]) == [("message", "\ufeffx", "", None)]


def test_utf8_split_inside_a_character() -> None:
    """Multi-byte characters split across chunks decode intact."""
    stream = 'data: héllo wörld — 日本語 🎉\n\n'.encode()
    for size in range(1, 8):
        assert decode_all(split_every(stream, size)) == [("message", "héllo wörld — 日本語 🎉", "", None)]


def test_invalid_utf8_is_replaced() -> None:
    """Invalid UTF-8 becomes U+FFFD, as the standard's decoder does."""
    assert decode_all([b"data: a\xffb\xe2\x82\n\n"]) == [("message", "a\ufffdb\ufffd", "", None)]


def test_flush_dispatches_an_unterminated_last_event() -> None:
    """At end of stream a final event without its blank line is still dispatched (lenient)."""
    assert decode_all([b"data: a\n\ndata: [DONE]"]) == [("message", "a", "", None), ("message", "[DONE]", "", None)]
    assert decode_all([b"data: a\n\n: trailing comment\n"]) == [("message", "a", "", None)]


def test_raw_bytes_are_the_data_payload() -> None:
    """``raw`` holds the data as bytes for JSON parsers; ``data`` is the text."""
    [event] = SSEDecoder().decode('data: {"t":"é"}\n\n'.encode())
    assert event.raw == '{"t":"é"}'.encode()
    assert event.data == '{"t":"é"}'


RICH = (
    "\ufeff: comment\r\n"
    "event: message_start\ndata: {\"a\": 1}\n\n"
    "id: 42\r\nevent: delta\r\ndata: line one\r\ndata:line two\r\n\r\n"
    "data: é😀\r\r"
    "retry: 300\nevent:\ndata\n\n"
    "event: x\n\n"
    "\n\n"
    "data: last\n\n"
).encode()


def test_every_chunk_size_gives_the_same_events() -> None:
    """Splitting a rich stream into chunks of any size 1..len gives the reference events."""
    expected = reference(RICH.decode())
    assert len(expected) == 5
    for size in range(1, len(RICH) + 1):
        assert decode_all(split_every(RICH, size)) == expected, size


def test_every_two_way_split_gives_the_same_events() -> None:
    """Any single cut point gives the reference events."""
    expected = reference(RICH.decode())
    for cut in range(len(RICH) + 1):
        assert decode_all([RICH[:cut], RICH[cut:]]) == expected, cut


_line = st.one_of(
    st.just(""),
    st.sampled_from(["data", "data:", "data: ", "event: e", "event:", "id: 1", "id", "retry: 5", ": c", "x: y"]),
    st.builds(
        lambda field, value: f"{field}:{value}",
        st.sampled_from(["data", "event", "id", "retry", "other"]),
        st.text(alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=8),
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.tuples(_line, st.sampled_from(["\n", "\r\n", "\r"])), max_size=25),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
)
def test_matches_reference_for_random_streams_and_chunkings(lines: list[tuple[str, str]], cuts: list[int]) -> None:
    """Random streams, cut at random points, decode like the reference implementation."""
    text = "".join(line + end for line, end in lines) + "\n\n"
    data = text.encode()
    points = sorted({c for c in cuts if c < len(data)})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert decode_all(chunks) == reference(text)
