"""Low-level session file I/O: tolerant reading, locked appends, atomic rewrites, private modes.

Appends take an advisory ``flock`` and write the whole line with ``os.write`` on an
``O_APPEND`` descriptor, so two processes appending to one file never interleave lines. If the
file does not end with a newline (a writer was killed mid-line), the append starts with one, so
the torn fragment stays a single malformed line and nothing written before is lost.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pi_coder.json_types import JsonObject
from pi_coder.session.codec import loads

__all__ = [
    "RawSessionFile",
    "append_bytes",
    "backup_copy",
    "create_exclusive",
    "ensure_private_dir",
    "gc_paused",
    "read_appended",
    "read_first_line",
    "read_session_file",
    "write_atomic",
]

_FILE_MODE = 0o600
_DIR_MODE = 0o700


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many objects that are all kept.

    Collections triggered every few hundred allocations would traverse the growing young
    generations again and again. On exit the new objects are moved straight to the oldest
    generation (``freeze`` + ``unfreeze`` splices lists without traversing them), so the next
    young collection does not walk them all either. Skipped when the application keeps frozen
    objects of its own, since ``unfreeze`` would release them.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` and any missing parents with mode 0700 (existing ones are left alone)."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=_DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, _DIR_MODE)


@dataclass(slots=True)
class RawSessionFile:
    """A session file decoded line by line, before migration and entry building."""

    header: JsonObject | None = None
    entries: list[JsonObject] = field(default_factory=list)
    malformed: int = 0
    """Lines that were not valid JSON (skipped), not counting a torn last line."""
    torn_tail: bool = False
    """The last line had no newline and was not valid JSON (a writer was killed mid-line)."""
    has_content: bool = False
    """The file holds something besides whitespace and a torn last line."""
    streamed: bool = False
    """Entries went to the ``on_header`` sink instead of ``entries``."""
    line: int = 0
    """The number (1-based) of the line being decoded; while a sink runs, the entry's line."""
    malformed_at: list[int] = field(default_factory=list)
    """Line numbers of the malformed lines (the first few)."""
    size: int = 0
    """Bytes read: the file size as of this read."""


def read_session_file(
    path: Path,
    on_header: Callable[[JsonObject], Callable[[JsonObject], None] | None] | None = None,
    result: RawSessionFile | None = None,
) -> RawSessionFile:
    """Decode every line of ``path``; the first valid JSON line is taken as the header.

    Args:
        path: The session file.
        on_header: Called with the header dict; if it returns a callable, every later entry
            dict is passed to it instead of being collected in ``entries`` (streaming).

        result: Fill this object (a sink can read ``result.line`` to learn its entry's line).

    Raises:
        OSError: The file cannot be read.
    """
    if result is None:
        result = RawSessionFile()
    add = result.entries.append
    first = True
    number = 0
    size = 0
    with open(path, "rb", buffering=1 << 16) as handle, gc_paused():
        for line in handle:
            number += 1
            size += len(line)
            try:
                data = loads(line)
            except ValueError:
                if not line.strip():
                    continue
                if line.endswith(b"\n"):
                    _malformed(result, number)
                    result.has_content = True
                else:
                    result.torn_tail = True
                continue
            result.has_content = True
            if not isinstance(data, dict):
                _malformed(result, number)
                continue
            result.line = number
            if first:
                first = False
                if data.get("type") == "session":
                    result.header = data
                    sink = on_header(data) if on_header is not None else None
                    if sink is not None:
                        add = sink
                        result.streamed = True
                    continue
            add(data)
    result.size = size
    return result


def _malformed(result: RawSessionFile, line: int) -> None:
    result.malformed += 1
    if len(result.malformed_at) < 5:
        result.malformed_at.append(line)


def read_first_line(path: Path, limit: int = 65536) -> bytes:
    """The first line of ``path`` (up to ``limit`` bytes), without reading the rest."""
    with open(path, "rb") as handle:
        return handle.readline(limit)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def append_bytes(path: Path, data: bytes, known_size: int | None = None) -> tuple[bytes, int]:
    """Append ``data`` (whole lines) to the existing file ``path`` under an exclusive ``flock``.

    If the file does not end with a newline, one is written first so ``data`` starts a fresh line.
    A failed write (disk full) is cut off again, so the file never keeps half a line of ours.

    Args:
        path: The session file.
        data: Whole lines to append.
        known_size: The file size this process last saw; whatever other processes appended
            after it is read (under the same lock) and returned.

    Returns:
        The bytes other writers appended since ``known_size`` (empty if none, or if the file
        shrank), and the file size after this append.

    Raises:
        FileNotFoundError: ``path`` does not exist (it is never created here, so a deleted
            session file cannot come back without its header).
        OSError: The write failed (the file is as it was before).
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        foreign = b""
        if known_size is not None and size > known_size:
            foreign = _read_range(fd, known_size, size)
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        try:
            _write_all(fd, data)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
        return foreign, size + len(data)
    finally:
        os.close(fd)  # also releases the lock


def read_appended(path: Path, known_size: int) -> tuple[bytes, int]:
    """What was appended to ``path`` after ``known_size`` bytes (under a shared ``flock``).

    Returns:
        The new bytes (empty if none, or if the file shrank) and the current size.

    Raises:
        OSError: The file cannot be read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        size = os.fstat(fd).st_size
        return (_read_range(fd, known_size, size) if size > known_size else b""), size
    finally:
        os.close(fd)


def _read_range(fd: int, start: int, end: int) -> bytes:
    chunks: list[bytes] = []
    while start < end:
        chunk = os.pread(fd, end - start, start)
        if not chunk:
            break
        chunks.append(chunk)
        start += len(chunk)
    return b"".join(chunks)


def create_exclusive(path: Path, data: bytes) -> None:
    """Create ``path`` (mode 0600, failing if it exists) holding ``data``.

    If the write fails (disk full), the new file is removed again, so a later attempt can
    create it once there is space.

    Raises:
        FileExistsError: ``path`` already exists.
        OSError: The file cannot be created or written.
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, _FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _write_all(fd, data)
    except BaseException:
        os.close(fd)
        fd = -1
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    finally:
        if fd >= 0:
            os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (temp file in the same folder, fsync, rename)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        _write_all(fd, data)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def backup_copy(path: Path, suffix: str) -> Path:
    """Copy ``path`` to ``<path><suffix>`` (or ``<path><suffix>.N`` if taken), mode 0600."""
    target = path.with_name(path.name + suffix)
    counter = 1
    while target.exists():
        target = path.with_name(f"{path.name}{suffix}.{counter}")
        counter += 1
    shutil.copyfile(path, target)
    os.chmod(target, _FILE_MODE)
    return target


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (which must exist) for the block."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
