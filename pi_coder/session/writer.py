"""SessionWriter: writing one session's entries to its JSONL file.

A new session stays in memory until its first message; then the header and the buffered
entries are written at once, and every later entry is appended as one line (flushed to the
kernel at once). A failed write (disk full) never raises and never leaves a line whose parent
is not in the file: the entries stay pending and are written in order with the next save
(``write_error`` says why until then). Lines other processes appended before ours are handed
to ``on_foreign``, and a lock note next to the file tells who else has it open.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pi_coder.session._file as _file
from pi_coder.session._writers import WriterNote
from pi_coder.session.entries import SessionEntry, SessionHeader
from pi_coder.session.errors import SessionWriteError
from pi_coder.session.loader import session_lines
from pi_coder.session.tree import EntryTree

__all__ = ["SessionWriter"]


class SessionWriter:
    """The file side of a :class:`~pi_coder.session.store.SessionStore`; see the module docstring."""

    def __init__(self, tree: EntryTree, persist: bool, on_foreign: Callable[[bytes], object]) -> None:
        self._tree = tree
        self.persist = persist
        self._on_foreign = on_foreign
        self.header = SessionHeader(id="", timestamp="", cwd="")
        self.file: Path | None = None
        self.on_disk = False
        """The header (and the entries up to ``file_tip``) are in the file."""
        self.replace_on_flush = False
        """The first write replaces the file (it was empty or torn) instead of creating it."""
        self.pending: list[SessionEntry] = []
        self.known_size: int | None = None
        """The file's size after our last read or write (what lies beyond was appended by others)."""
        self.file_tip: str | None = None
        """The id of the last entry in the file as far as this process knows."""
        self.write_error: str | None = None
        """Why the last save failed, while entries wait in memory for the next one (else None)."""
        self.other_writers: list[int] = []
        """Pids of other live processes that had the file open when it was opened here."""
        self._note: WriterNote | None = None
        self._claimed = False

    def start(self, header: SessionHeader, file: Path | None) -> None:
        """A new session, to be written to ``file`` (None: in memory) once it holds a message."""
        self.leave()
        self.header = header
        self.file = file
        self.on_disk = False
        self.replace_on_flush = False
        self.pending = []
        self.known_size = None
        self.file_tip = None
        self.write_error = None

    def opened(self, header: SessionHeader, file: Path, size: int) -> None:
        """The session was read from ``file`` (``size`` bytes)."""
        self.header = header
        self.file = file
        self.on_disk = True
        self.known_size = size
        self.file_tip = self._tree.entries[-1].id if self._tree.entries else None

    def write(self, entry: SessionEntry | None) -> None:
        """Save ``entry`` (and the entries still pending before it); a failure is kept, not raised."""
        try:
            self._write_entry(entry)
        except OSError as exc:
            if entry is not None and self.on_disk:
                self.pending.append(entry)
            self.write_error = (
                f"Cannot save the session to {self.file}: {exc.strerror or exc}. "
                "Free some space or fix the folder, or run with --no-session."
            )
        else:
            self.write_error = None

    def _write_entry(self, entry: SessionEntry | None) -> None:
        if not self.persist or self.file is None:
            return
        if self.on_disk:
            batch = [*self.pending, entry] if entry is not None else self.pending
            if not batch:
                return
            try:
                foreign, self.known_size = _file.append_bytes(
                    self.file, session_lines(item.to_json_dict() for item in batch), self.known_size
                )
            except FileNotFoundError:
                # Deleted behind our back: write the whole session again, header first.
                self.on_disk = False
                self.replace_on_flush = False
            else:
                self.pending = []
                if foreign:
                    self._on_foreign(foreign)  # lines before ours: this run keeps its branch
                self.file_tip = batch[-1].id
                return
        elif not self._tree.has_message:
            return
        _file.ensure_private_dir(self.file.parent)
        data = self.all_lines()
        if self.replace_on_flush:
            _file.write_atomic(self.file, data)
        else:
            _file.create_exclusive(self.file, data)
        self.on_disk = True
        self.replace_on_flush = False
        self.pending = []
        self.known_size = len(data)
        entries = self._tree.entries
        self.file_tip = entries[-1].id if entries else None
        if self._claimed:
            self._join()

    def all_lines(self) -> bytes:
        """The whole file: the header, then every entry."""
        return session_lines([self.header.raw, *(entry.to_json_dict() for entry in self._tree.entries)])

    def flush(self) -> None:
        """Write the entries a failed save left pending (or the unwritten session) now.

        Raises:
            SessionWriteError: The file still cannot be written (``write_error`` says why).
        """
        if self.pending or (self.write_error is not None and not self.on_disk):
            self.write(None)
        if self.write_error is not None:
            raise SessionWriteError(self.write_error)

    @property
    def pending_count(self) -> int:
        """Entries held in memory because a save failed (written with the next save)."""
        if self.write_error is not None and not self.on_disk:
            return len(self._tree.entries)
        return len(self.pending)

    def read_appended(self) -> bytes:
        """What other processes appended since our last read or write (empty: nothing, or unreadable)."""
        if not self.on_disk or self.file is None or self.known_size is None:
            return b""
        try:
            foreign, size = _file.read_appended(self.file, self.known_size)
        except OSError:
            return b""
        if foreign:
            self.known_size = size
        return foreign

    def claim(self) -> list[int]:
        """Note this process as a writer of the file (now, or once the file is created); the other pids."""
        self._claimed = True
        if self.on_disk:
            self._join()
        return list(self.other_writers)

    def _join(self) -> None:
        if self._note is None and self.file is not None and self.persist:
            self._note = WriterNote(self.file)
            self.other_writers = self._note.join()

    def leave(self) -> None:
        """Remove this process's writer note."""
        if self._note is not None:
            self._note.leave()
            self._note = None
        self.other_writers = []

    def live_writers(self) -> list[int]:
        """Pids of other live processes that have this session file open now."""
        return self._note.others() if self._note is not None else []

    def close(self) -> None:
        """Try once more to write pending entries, and leave the file to other writers."""
        if self.pending:
            self.write(None)
        self.leave()
