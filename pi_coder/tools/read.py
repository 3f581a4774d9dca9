"""The read tool: text files by line window (offset/limit, head truncation) and images.

Large files are never decoded whole: newlines are counted in binary chunks of a memory map
and only the requested window is decoded, so the last lines of a 50 MB file read in
milliseconds.
"""

from __future__ import annotations

import asyncio
import base64
import mmap
import os
import threading
from bisect import bisect_left
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal, TypeAlias

from pydantic import Field

from pi_coder.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.types import ImageContent, TextContent
from pi_coder.errors import ToolError
from pi_coder.tools._files import describe_os_error, open_regular
from pi_coder.tools._images import detect_image_mime, prepare_image
from pi_coder.tools._paths import resolve_read_path
from pi_coder.tools._schema import ToolParams
from pi_coder.tools._settings import ToolSettings
from pi_coder.tools._truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

__all__ = ["ReadParams", "TextWindow", "create_read_tool", "newline_index", "read_text_window"]

DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are "
    f"sent as attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or "
    f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit for large files. When "
    "you need the full file, continue with offset until complete."
)

_CHUNK = 1 << 22
_SNIFF = 8192


class ReadParams(ToolParams):
    path: str = Field(description="Path to the file to read (relative or absolute)")
    offset: int | None = Field(default=None, description="Line number to start reading from (1-indexed)")
    limit: int | None = Field(default=None, description="Maximum number of lines to read")


@dataclass(slots=True, kw_only=True)
class TextWindow:
    """A window of lines cut from a text buffer."""

    text: str
    start_line: int
    """1-based first line shown."""
    output_lines: int
    total_lines: int
    selected_lines: int
    """Lines the offset/limit selected before truncation."""
    truncated_by: Literal["lines", "bytes"] | None
    output_bytes: int
    selected_bytes: int = 0
    first_line_bytes: int | None = None
    """Set when the first selected line alone exceeds the byte limit (nothing is shown)."""
    replaced_invalid: bool = False
    final_newline: bool = False
    """The window ends at the end of a file whose last line ends in a newline (not in ``text``)."""


_Buffer: TypeAlias = bytes | mmap.mmap
"""A whole file's bytes, read or mapped."""


def newline_index(buf: _Buffer, size: int) -> list[int]:
    """Newlines before each ``_CHUNK``-sized chunk of ``buf``; the last item is the total."""
    counts = [0]
    for pos in range(0, size, _CHUNK):
        counts.append(counts[-1] + buf[pos : pos + _CHUNK].count(b"\n"))
    return counts


def _offset_after(buf: _Buffer, index: list[int], skip: int) -> int:
    """The byte offset just after the ``skip``-th newline (0 when ``skip`` is 0; -1 if absent)."""
    if skip == 0:
        return 0
    if skip > index[-1]:
        return -1
    chunk_no = bisect_left(index, skip) - 1
    pos = chunk_no * _CHUNK
    k = skip - index[chunk_no]
    chunk = buf[pos : pos + _CHUNK]
    sub = 0
    # Narrow to a 64 KB piece first so the find loop below stays short.
    while True:
        piece = chunk[sub : sub + 65536].count(b"\n")
        if piece >= k:
            break
        k -= piece
        sub += 65536
    i = sub - 1
    for _ in range(k):
        i = chunk.find(b"\n", i + 1)
    return pos + i + 1


def read_text_window(
    buf: _Buffer,
    size: int,
    *,
    offset: int = 1,
    limit: int | None = None,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    index: list[int] | None = None,
) -> TextWindow:
    """Cut lines ``offset..offset+limit-1`` from ``buf`` (bytes or mmap), head-truncated.

    A final newline ends the last line rather than starting an empty one (``final_newline``
    says the window ends with it; ``text`` leaves it out). ``index`` is
    ``newline_index(buf, size)`` when the caller has it already.

    Raises:
        ToolError: ``offset`` is past the last line.
    """
    if index is None:
        index = newline_index(buf, size)
    newlines = index[-1]
    start = _offset_after(buf, index, offset - 1)
    total = newlines + (1 if size and buf[size - 1 : size] != b"\n" else 0)
    if offset > max(total, 1):
        raise ToolError(f"Offset {offset} is beyond end of file ({total} lines total)")
    if size and buf[0:3] == b"\xef\xbb\xbf" and start == 0:
        start = 3
    remaining = max(total - offset + 1, 0)
    selected = min(limit, remaining) if limit is not None else remaining
    cap = min(selected, max_lines)
    pos = start
    end = start
    used = 0
    shown = 0
    truncated_by: Literal["lines", "bytes"] | None = None
    while shown < cap:
        nl = buf.find(b"\n", pos)
        line_end = nl if nl >= 0 else size
        cost = line_end - pos + (1 if shown else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        used += cost
        shown += 1
        end = line_end
        pos = line_end + 1
    if truncated_by is None and selected > shown:
        truncated_by = "lines"
    first_line_bytes = None
    if truncated_by == "bytes" and shown == 0:
        nl = buf.find(b"\n", start)
        first_line_bytes = (nl if nl >= 0 else size) - start
    if truncated_by is None:
        selected_bytes = used
    elif limit is None or selected == remaining:
        selected_bytes = size - start - (1 if size and buf[size - 1 : size] == b"\n" else 0)
    else:
        selection_end = _offset_after(buf, index, offset - 1 + selected)
        selected_bytes = max(selection_end - 1 - start, 0)
    final_newline = (
        truncated_by is None and shown > 0 and offset + shown - 1 == total and buf[size - 1 : size] == b"\n"
    )
    raw = bytes(buf[start:end])
    try:
        text = raw.decode("utf-8")
        replaced = False
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
        replaced = True
    return TextWindow(
        text=text, start_line=offset, output_lines=shown, total_lines=total, selected_lines=selected,
        truncated_by=truncated_by, output_bytes=used, selected_bytes=selected_bytes,
        first_line_bytes=first_line_bytes,
        replaced_invalid=replaced, final_newline=final_newline,
    )  # fmt: skip


def _format_window(window: TextWindow, path: str, offset: int, limit: int | None) -> str:
    if window.first_line_bytes is not None:
        return (
            f"[Line {offset} is {format_size(window.first_line_bytes)}, exceeds "
            f"{format_size(DEFAULT_MAX_BYTES)} limit. Use bash: sed -n '{offset}p' {path} | head -c "
            f"{DEFAULT_MAX_BYTES}]"
        )
    text = window.text + ("\n" if window.final_newline else "")  # the model sees the file as it is
    last = offset + window.output_lines - 1
    notice = None
    if window.truncated_by == "lines":
        notice = f"[Showing lines {offset}-{last} of {window.total_lines}. Use offset={last + 1} to continue.]"
    elif window.truncated_by == "bytes":
        notice = (
            f"[Showing lines {offset}-{last} of {window.total_lines} ({format_size(DEFAULT_MAX_BYTES)} limit). "
            f"Use offset={last + 1} to continue.]"
        )
    elif limit is not None and last < window.total_lines:
        notice = f"[{window.total_lines - last} more lines in file. Use offset={last + 1} to continue.]"
    notes = [n for n in (notice,) if n]
    if window.replaced_invalid:
        notes.append("[Note: the file is not valid UTF-8; undecodable bytes are shown as \ufffd.]")
    return text + "".join(f"\n\n{n}" for n in notes)


def _details(window: TextWindow) -> dict[str, object] | None:
    if window.truncated_by is None:
        return None
    truncation = {
        "truncated": True,
        "truncatedBy": window.truncated_by,
        "totalLines": window.selected_lines,
        "totalBytes": window.selected_bytes,
        "outputLines": window.output_lines,
        "outputBytes": window.output_bytes,
        "lastLinePartial": False,
        "firstLineExceedsLimit": window.first_line_bytes is not None,
        "maxLines": DEFAULT_MAX_LINES,
        "maxBytes": DEFAULT_MAX_BYTES,
    }
    return {"truncation": truncation}


_INDEX_CACHE_MIN = 8 * _CHUNK
_index_cache: OrderedDict[tuple[int, ...], list[int]] = OrderedDict()
_index_lock = threading.Lock()


def _cached_index(f: BinaryIO, buf: _Buffer, size: int) -> list[int]:
    """The newline index of a large file, remembered while the file is unchanged.

    The model pages through big files with successive offsets; each read after the first
    then scans one chunk instead of the whole file.
    """
    if size < _INDEX_CACHE_MIN:
        return newline_index(buf, size)
    st = os.fstat(f.fileno())
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _index_lock:
        index = _index_cache.get(key)
        if index is not None:
            _index_cache.move_to_end(key)
            return index
    index = newline_index(buf, size)
    with _index_lock:
        _index_cache[key] = index
        while len(_index_cache) > 16:
            _index_cache.popitem(last=False)
    return index


def _read_sync(file: Path, shown_path: str, offset: int, limit: int | None, auto_resize: bool) -> AgentToolResult:
    fd = open_regular(file, shown_path, "read only opens regular files (use bash for devices and pipes)")
    try:
        with open(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(_SNIFF)
            mime = detect_image_mime(head)
            if mime is not None:
                f.seek(0)
                return _image_result(f.read(), mime, auto_resize)
            if head.startswith((b"\xff\xfe", b"\xfe\xff")):
                f.seek(0)
                data = f.read().decode("utf-16", "replace").encode("utf-8")
                window = read_text_window(data, len(data), offset=offset, limit=limit)
            elif b"\x00" in head:
                raise ToolError(
                    f"Cannot read {shown_path}: it looks like a binary file ({format_size(size)}). "
                    "Use bash (e.g. `file` or `xxd | head`) to inspect it."
                )
            elif size == 0:
                window = read_text_window(b"", 0, offset=offset, limit=limit)
            else:
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                    window = read_text_window(mm, size, offset=offset, limit=limit, index=_cached_index(f, mm, size))
    except ToolError:
        raise
    except OSError as exc:
        raise ToolError(describe_os_error(exc, shown_path)) from None
    text = _format_window(window, shown_path, offset, limit)
    return AgentToolResult(content=[TextContent(text=text)], details=_details(window))


def _image_result(data: bytes, mime: str, auto_resize: bool) -> AgentToolResult:
    prepared = prepare_image(data, mime, auto_resize=auto_resize)
    text = f"Read image file [{prepared.mime_type}]"
    if prepared.note:
        text += "\n" + prepared.note
    content: list[TextContent | ImageContent] = [TextContent(text=text)]
    if prepared.data is not None:
        content.append(
            ImageContent(data=base64.b64encode(prepared.data).decode("ascii"), mime_type=prepared.mime_type)
        )
    return AgentToolResult(content=content, details=None)


def create_read_tool(cwd: str | os.PathLike[str], settings: ToolSettings | None = None) -> AgentTool[ReadParams]:
    """The ``read`` tool bound to ``cwd``."""
    settings = settings or ToolSettings()

    async def execute(
        tool_call_id: str, args: ReadParams, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        offset = max(1, args.offset or 1)
        limit = max(1, args.limit) if args.limit is not None else None
        file = resolve_read_path(args.path, cwd)
        result = await asyncio.to_thread(_read_sync, file, args.path, offset, limit, settings.image_auto_resize)
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        return result

    return AgentTool(name="read", label="read", description=DESCRIPTION, parameters=ReadParams, execute=execute)
