"""SessionStore: Pi's SessionManager — an append-only JSONL tree of session entries.

Every append creates a child of the current leaf and moves the leaf to it. A new session stays
in memory until its first message (the user's prompt, so a crash while the first answer streams
keeps it); then the header and the buffered entries are written, and every later entry is
appended as one line (flushed to the kernel at once). Files of format versions 1 and 2 are
migrated on open, after a backup copy is kept next to them.

A failed write (disk full) never raises and never leaves a line whose parent is not in the
file: the entries stay in memory, pending, and are written in order with the next save
(``write_error`` says why until then). Lines other processes append to the same file are read
before each append and kept (``sync`` also follows them when this process is at the tip), and a
lock note next to the file tells who else has it open (``other_writers``). Damaged links (a
missing or later parent, a self-parent, a duplicate id) are repaired in memory on load, each
with a warning naming its line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_coder.ai import secrets
from pi_coder.paths import session_dir_for_cwd
from pi_coder.session import _file
from pi_coder.session._writers import WriterNote
from pi_coder.session.codec import (
    dumps,
    entry_from_dict,
    header_from_dict,
    iso_now,
    iso_to_ms,
    loads,
    migrate_entries,
    new_entry_id,
    new_session_id,
)
from pi_coder.session.context import SessionContext, build_context_from_path, path_to
from pi_coder.session.entries import (
    CURRENT_SESSION_VERSION,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    UnknownEntry,
)
from pi_coder.session.errors import InvalidSessionFileError, SessionReadError, SessionWriteError
from pi_coder.session.messages import (
    AgentMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    message_to_dict,
    parse_agent_message,
)

__all__ = ["SessionStore", "SessionTreeNode"]

_UNSET: Any = object()


@dataclass(slots=True, eq=False)
class SessionTreeNode:
    """One entry of :meth:`SessionStore.get_tree` with its children (oldest first)."""

    entry: SessionEntry
    children: list[SessionTreeNode] = field(default_factory=list)
    label: str | None = None


def _file_name(timestamp: str, session_id: str) -> str:
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def _lines(raws: Iterable[dict[str, Any]]) -> bytes:
    # Every key pi knows of is replaced by [redacted] before it reaches the file (ai/secrets.py).
    redactor = secrets.current()
    return b"".join(dumps(redactor.value(raw)) + b"\n" for raw in raws)


def _read_problem(file: Path, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    if isinstance(exc, PermissionError):
        return f"Cannot read session file {file}: {reason} (fix its permissions, e.g. chmod 600 it)"
    return f"Cannot read session file {file}: {reason}"


class SessionStore:
    """A session: header, entries (a tree through ``parentId``) and the current leaf.

    Create one with :meth:`create`, :meth:`open`, :meth:`in_memory`, :meth:`continue_recent`
    or :meth:`fork_from`.
    """

    def __init__(self, cwd: str, session_dir: Path | None, persist: bool) -> None:
        """Use the class methods; this makes an empty, headerless store."""
        self._cwd = cwd
        self._session_dir = session_dir
        self._persist = persist
        self._file: Path | None = None
        self._header = SessionHeader(id="", timestamp="", cwd=cwd)
        self._entries: list[SessionEntry] = []
        self._by_id: dict[str, SessionEntry] = {}
        self._labels: dict[str, str] = {}
        self._leaf_id: str | None = None
        self._name: str | None = None
        self._has_message = False
        self._on_disk = False
        self._replace_on_flush = False
        self._pending: list[SessionEntry] = []
        self._known_size: int | None = None
        self._file_tip: str | None = None
        self._disk_ids: dict[str, str] = {}
        """Memory id -> id in the file, for entries renamed because their id was taken."""
        self._aliases: dict[str, str] = {}
        """Id in the file -> memory id of the latest entry loaded with it (duplicates only)."""
        self._note: WriterNote | None = None
        self._claimed = False
        self._unresolved: list[tuple[SessionEntry, SessionEntry | None, int]] = []
        self._raw: _file.RawSessionFile | None = None
        self.write_error: str | None = None
        """Why the last save failed, while entries wait in memory for the next one (else None)."""
        self.foreign_entries = 0
        """Entries other processes appended to the file since it was opened here."""
        self.other_writers: list[int] = []
        """Pids of other live processes that had the file open when it was opened here."""
        self.repairs: list[str] = []
        """One line per damaged link repaired on load (naming the line)."""
        self.unknown_types: dict[str, int] = {}
        """Entries kept unread on load (a type this pi does not know, or a known type of the wrong
        shape), counted by type."""
        self.malformed_at: list[int] = []
        """Line numbers of (the first few) malformed lines skipped on load."""
        self.malformed_lines = 0
        """Lines skipped on load because they were not valid JSON entries."""
        self.torn_tail = False
        """The file ended in a partly written line (ignored)."""
        self.migrated_from: int | None = None
        """The format version the file was migrated from on open, if it was."""
        self.backup_path: Path | None = None
        """Where the pre-migration copy was kept."""

    # ------------------------------------------------------------------ constructors

    @classmethod
    def create(
        cls,
        cwd: str,
        session_dir: str | os.PathLike[str] | None = None,
        *,
        parent_session: str | None = None,
        session_id: str | None = None,
    ) -> SessionStore:
        """A new session for ``cwd``, stored under ``session_dir`` (default: the cwd's folder).

        No file is created until the first assistant message is appended. ``session_id``: use this
        id instead of a new UUID (``--session-id``).
        """
        directory = Path(session_dir) if session_dir is not None else session_dir_for_cwd(cwd)
        store = cls(cwd, directory, persist=True)
        store.new_session(parent_session=parent_session, session_id=session_id)
        return store

    @classmethod
    def in_memory(cls, cwd: str | None = None) -> SessionStore:
        """A session that is never written (``--no-session``)."""
        store = cls(cwd if cwd is not None else os.getcwd(), None, persist=False)
        store.new_session()
        return store

    @classmethod
    def open(cls, path: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None) -> SessionStore:
        """Open a session file (migrating versions 1 and 2); a missing file starts a new session there.

        Args:
            path: The session file.
            session_dir: Folder for sessions created from this one (default: the file's folder).

        Raises:
            InvalidSessionFileError: The file is not empty and does not start with a header, or is
                not a regular file (a folder, a device, a FIFO).
            SessionReadError: The file cannot be read (permissions, I/O error).
        """
        file = Path(path).absolute()
        directory = Path(session_dir) if session_dir is not None else file.parent
        if file.exists() and not file.is_file():
            # A device or FIFO (--session /dev/null): reading could block, and the first save
            # would replace the node with a regular file.
            raise InvalidSessionFileError(
                f"Not a session file: {file} is not a regular file (--no-session runs without saving)"
            )
        if not file.exists():
            store = cls(os.getcwd(), directory, persist=True)
            store.new_session()
            store._file = file
            return store
        store = cls(os.getcwd(), directory, persist=True)
        store._file = file

        def on_header(header: dict[str, Any]) -> Callable[[Any], None] | None:
            version = header.get("version")
            if isinstance(version, int) and version >= CURRENT_SESSION_VERSION:
                store._begin_load(header)
                return store._load_entry  # stream: each line's dict is freed once its entry exists
            return None

        raw = store._raw = _file.RawSessionFile()
        try:
            _file.read_session_file(file, on_header, raw)
        except OSError as exc:
            raise SessionReadError(_read_problem(file, exc)) from None
        finally:
            store._raw = None
        if raw.header is None:
            if raw.has_content:
                raise InvalidSessionFileError(f"Not a session file: {file}")
            # Empty, or only a line torn while the header was being written: nothing to lose.
            store.new_session()
            store._file = file
            store._replace_on_flush = True
            return store
        store.torn_tail = raw.torn_tail
        store.malformed_lines += raw.malformed
        store.malformed_at = raw.malformed_at
        if not raw.streamed:
            version = migrate_entries(raw.header, raw.entries)
            if version < CURRENT_SESSION_VERSION:
                store.migrated_from = version
                store.backup_path = _file.backup_copy(file, f".v{version}.bak")
                data = _lines([raw.header, *raw.entries])
                with _file.locked(file):
                    _file.write_atomic(file, data)
                raw.size = len(data)
            store._begin_load(raw.header)
            with _file.gc_paused():
                for data in raw.entries:
                    store._load_entry(data)
        store._settle_links()
        store._leaf_id = store._file_tip = store._entries[-1].id if store._entries else None
        store._on_disk = True
        store._known_size = raw.size
        return store

    @classmethod
    def continue_recent(cls, cwd: str, session_dir: str | os.PathLike[str] | None = None) -> SessionStore:
        """The newest session of ``cwd`` (by file mtime), or a new one if there is none (``-c``)."""
        from pi_coder.session.listing import find_most_recent_session

        recent = find_most_recent_session(cwd, session_dir)
        if recent is not None:
            return cls.open(recent, session_dir)
        return cls.create(cwd, session_dir)

    @classmethod
    def fork_from(
        cls,
        source: str | os.PathLike[str],
        cwd: str,
        session_dir: str | os.PathLike[str] | None = None,
        *,
        session_id: str | None = None,
    ) -> SessionStore:
        """Copy another session (e.g. from another project) into a new file for ``cwd``.

        The new header has ``cwd`` and ``parentSession`` = the source path; all entries are copied
        verbatim. The source file is not modified. ``session_id``: the new session's id (else a UUID).

        Raises:
            InvalidSessionFileError: The source is empty or not a session file.
        """
        source_path = Path(source).absolute()
        raw = _file.read_session_file(source_path)
        if raw.header is None:
            raise InvalidSessionFileError(f"Cannot fork: not a session file: {source_path}")
        migrate_entries(raw.header, raw.entries)
        entries = [entry for entry in raw.entries if entry_from_dict(entry) is not None]
        directory = Path(session_dir) if session_dir is not None else session_dir_for_cwd(cwd)
        store = cls(cwd, directory, persist=True)
        store.new_session(parent_session=str(source_path), session_id=session_id)
        assert store._file is not None
        _file.ensure_private_dir(directory)
        _file.create_exclusive(store._file, _lines([store._header.raw, *entries]))
        return cls.open(store._file, directory)

    def new_session(self, parent_session: str | None = None, session_id: str | None = None) -> Path | None:
        """Start a fresh session in this store (``/new``); returns the future file path."""
        session_id = session_id or new_session_id()
        timestamp = iso_now()
        raw: dict[str, Any] = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": session_id,
            "timestamp": timestamp,
            "cwd": self._cwd,
        }
        if parent_session is not None:
            raw["parentSession"] = parent_session
        self._reset(header_from_dict(raw))  # type: ignore[arg-type]
        self._leave_writers()
        self._file = None
        if self._persist:
            assert self._session_dir is not None, "a persistent store has a session directory"
            self._file = self._session_dir / _file_name(timestamp, session_id)
        self._on_disk = False
        self._replace_on_flush = False
        self._pending = []
        self._known_size = None
        self._file_tip = None
        self.write_error = None
        return self._file

    def _reset(self, header: SessionHeader) -> None:
        self._header = header
        self._entries = []
        self._by_id = {}
        self._labels = {}
        self._leaf_id = None
        self._name = None
        self._has_message = False
        self._disk_ids = {}
        self._aliases = {}

    def _begin_load(self, header: dict[str, Any]) -> None:
        cwd = header.get("cwd")
        if isinstance(cwd, str) and cwd:
            self._cwd = cwd
        self._reset(header_from_dict(header))  # type: ignore[arg-type]

    def _load_entry(self, data: Any) -> None:
        entry = entry_from_dict(data)
        line = self._raw.line if self._raw is not None else 0
        if entry is None:
            self.malformed_lines += 1
            if line and len(self.malformed_at) < 5:
                self.malformed_at.append(line)
            return
        by_id = self._by_id
        parent_id = entry.parent_id
        if type(entry) is UnknownEntry:
            self.unknown_types[entry.type] = self.unknown_types.get(entry.type, 0) + 1
        if parent_id is None and self._entries and data.get("parentId", 0) is not None:
            # Pi writes parentId on every entry (null only for a root it meant to start).
            where = f"line {line} of {self._file}" if line else f"an entry of {self._file}"
            what = "has no parentId" if "parentId" not in data else "has a parentId that is not a string"
            self.repairs.append(
                f"{where}: entry {entry.id} {what}, so it starts a new root; "
                "the history before it is on another branch (see /tree)"
            )
        if parent_id is not None:
            if self._aliases:
                parent_id = self._aliases.get(parent_id, parent_id)
            parent = by_id.get(parent_id)
            if parent is not None:
                entry.parent_id = parent.id  # share one string object per id
            else:  # missing, written later (a cycle), or itself: settled once the lines are read
                self._unresolved.append((entry, self._entries[-1] if self._entries else None, line))
        if entry.id in by_id:
            self._rename_duplicate(entry, line)
        self._entries.append(entry)
        by_id[entry.id] = entry
        self._index(entry)
        if type(entry) is MessageEntry:
            # Parsing now, while reading, frees each line's dicts before the next line is read:
            # peak memory stays near the final size instead of dicts + models at once.
            entry.message  # noqa: B018

    def _settle_links(self) -> None:
        """Repair the parents that were not known when their entry was read.

        A parent written later in the file (which is how a cycle looks) or the entry itself
        cannot be right in an append-only file: the entry is attached to the one before it in
        file order, so the history before it stays on the path. A parent that is not in the
        file at all keeps Pi's rule (the entry starts an extra root); both are reported.
        """
        unresolved, self._unresolved = self._unresolved, []
        for entry, previous, line in unresolved:
            where = f"line {line} of {self._file}" if line else f"an entry of {self._file}"
            parent_id = entry.parent_id
            if parent_id is not None and self._aliases:
                parent_id = self._aliases.get(parent_id, parent_id)
            if parent_id not in self._by_id:
                self.repairs.append(
                    f"{where}: entry {entry.id} names parent {entry.parent_id}, which is not in the file; "
                    "the history before it is on another branch (see /tree)"
                )
                continue
            why = "names itself as parent" if parent_id == entry.id else f"names parent {entry.parent_id}, written after it"
            target = f"the entry before it ({previous.id})" if previous is not None else "the root"
            self.repairs.append(f"{where}: entry {entry.id} {why}; attached it to {target}")
            entry.parent_id = previous.id if previous is not None else None

    def _rename_duplicate(self, entry: SessionEntry, line: int) -> None:
        """A second entry with a known id: give it a new id in memory; later references mean it."""
        disk_id = entry.id
        alias = new_entry_id(self._by_id)
        self._aliases[disk_id] = alias
        self._disk_ids[alias] = disk_id
        entry.id = alias
        where = f"line {line}" if line else "an entry"
        self.repairs.append(
            f"{where} of {self._file}: id {disk_id} is used by an earlier entry too; later references to it mean this one"
        )

    def _index(self, entry: SessionEntry) -> None:
        kind = type(entry)
        if kind is MessageEntry or kind is CustomMessageEntry:
            self._has_message = True
        elif kind is LabelEntry:
            if entry.label:  # type: ignore[union-attr]
                self._labels[entry.target_id] = entry.label  # type: ignore[union-attr]
            else:
                self._labels.pop(entry.target_id, None)  # type: ignore[union-attr]
        elif kind is SessionInfoEntry and entry.name:  # type: ignore[union-attr]
            self._name = entry.name  # type: ignore[union-attr]

    # ------------------------------------------------------------------ properties

    @property
    def session_id(self) -> str:
        return self._header.id

    @property
    def session_file(self) -> Path | None:
        """The file path (``None`` in memory); the file may not exist yet (lazy creation)."""
        return self._file

    @property
    def session_dir(self) -> Path | None:
        return self._session_dir

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def leaf_id(self) -> str | None:
        return self._leaf_id

    @property
    def name(self) -> str | None:
        """The display name: the latest non-empty ``session_info`` name."""
        return self._name

    @property
    def is_persisted(self) -> bool:
        return self._persist

    def load_warnings(self) -> list[str]:
        """One-line notes about damage found when the file was opened (for the UI to show)."""
        notes = []
        if self.malformed_lines:
            lines = ", ".join(str(n) for n in self.malformed_at)
            where = f" (line {lines}{', ...' if self.malformed_lines > len(self.malformed_at) else ''})" if lines else ""
            notes.append(f"Skipped {self.malformed_lines} malformed line(s) in {self._file}{where}")
        if self.torn_tail:
            notes.append(f"Ignored a partly written last line in {self._file}")
        if self.repairs:
            more = f" (and {len(self.repairs) - 1} more)" if len(self.repairs) > 1 else ""
            notes.append(f"Repaired a damaged session: {self.repairs[0]}{more}")
        version = self._header.version
        newer = (
            f"written by a newer version (session format v{version}; this pi reads v{CURRENT_SESSION_VERSION})"
            if version > CURRENT_SESSION_VERSION
            else ""
        )
        if self.unknown_types:
            count = sum(self.unknown_types.values())
            kinds = ", ".join(self.unknown_types)
            plural = "entries" if count != 1 else "entry"
            notes.append(
                f"Kept {count} {plural} of types this pi does not know unread ({kinds}) in {self._file}"
                + (f", {newer}" if newer else "")
            )
        elif newer:
            notes.append(f"{self._file} was {newer}: fields it does not know were kept unread")
        if self.migrated_from is not None:
            notes.append(
                f"Migrated session from format v{self.migrated_from} to v{CURRENT_SESSION_VERSION} "
                f"(backup: {self.backup_path})"
            )
        if self.other_writers:
            pids = ", ".join(str(pid) for pid in self.other_writers)
            notes.append(
                f"Another pi process (pid {pids}) has this session open: its turns are loaded before each "
                "prompt here; turns sent at the same moment go on separate branches (see /tree)"
            )
        return notes

    # ------------------------------------------------------------------ appending

    def _common(self, kind: str) -> dict[str, Any]:
        leaf = self._leaf_id
        return {
            "type": kind,
            "id": new_entry_id(self._by_id),
            "parentId": self._disk_ids.get(leaf, leaf) if self._disk_ids and leaf is not None else leaf,
            "timestamp": iso_now(),
        }

    def _append(self, raw: dict[str, Any], message: AgentMessage | None = None) -> str:
        entry = entry_from_dict(raw)
        assert entry is not None
        entry.parent_id = self._leaf_id
        self._entries.append(entry)
        self._by_id[entry.id] = entry
        self._leaf_id = entry.id
        self._index(entry)
        self._write(entry)
        if message is not None:
            # Keep the caller's object as the entry's message; the dict was only for writing.
            entry._message = message  # type: ignore[union-attr]
            entry.raw = {}
        return entry.id

    def _write(self, entry: SessionEntry | None) -> None:
        """Save ``entry`` (and the entries still pending before it); a failure is kept, not raised."""
        try:
            self._write_entry(entry)
        except OSError as exc:
            if entry is not None and self._on_disk:
                self._pending.append(entry)
            self.write_error = (
                f"Cannot save the session to {self._file}: {exc.strerror or exc}. "
                "Free some space or fix the folder, or run with --no-session."
            )
        else:
            self.write_error = None

    def _write_entry(self, entry: SessionEntry | None) -> None:
        if not self._persist or self._file is None:
            return
        if self._on_disk:
            batch = [*self._pending, entry] if entry is not None else self._pending
            if not batch:
                return
            try:
                foreign, self._known_size = _file.append_bytes(
                    self._file, _lines(item.to_json_dict() for item in batch), self._known_size
                )
            except FileNotFoundError:
                # Deleted behind our back: write the whole session again, header first.
                self._on_disk = False
                self._replace_on_flush = False
            else:
                self._pending = []
                if foreign:
                    self._integrate(foreign, follow=False)  # lines before ours: this run keeps its branch
                self._file_tip = batch[-1].id
                return
        elif not self._has_message:
            return
        _file.ensure_private_dir(self._file.parent)
        data = self._all_lines()
        if self._replace_on_flush:
            _file.write_atomic(self._file, data)
        else:
            _file.create_exclusive(self._file, data)
        self._on_disk = True
        self._replace_on_flush = False
        self._pending = []
        self._known_size = len(data)
        self._file_tip = self._entries[-1].id if self._entries else None
        if self._claimed:
            self._join_writers()

    def flush(self) -> None:
        """Write the entries a failed save left pending (or the unwritten session) now.

        Raises:
            SessionWriteError: The file still cannot be written (``write_error`` says why).
        """
        if self._pending or (self.write_error is not None and not self._on_disk):
            self._write(None)
        if self.write_error is not None:
            raise SessionWriteError(self.write_error)

    @property
    def pending_count(self) -> int:
        """Entries held in memory because a save failed (written with the next save)."""
        if self.write_error is not None and not self._on_disk:
            return len(self._entries)
        return len(self._pending)

    def sync(self) -> list[SessionEntry]:
        """Load the entries other processes appended to the file since this process last read or wrote it.

        If the leaf was the file's last entry, it moves to the new last entry (as a reload
        would), so the next append continues the conversation where the file ends. With entries
        still pending after a failed save, nothing moves.

        Returns:
            The entries found (empty if none, or the file cannot be read).
        """
        if not self._on_disk or self._file is None or self._known_size is None:
            return []
        try:
            foreign, size = _file.read_appended(self._file, self._known_size)
        except OSError:
            return []
        if not foreign:
            return []
        self._known_size = size
        return self._integrate(foreign, follow=not self._pending)

    def _integrate(self, foreign: bytes, *, follow: bool) -> list[SessionEntry]:
        at_tip = self._leaf_id == self._file_tip
        before = len(self._entries)
        for line in foreign.split(b"\n"):
            if not line.strip():
                continue
            try:
                data = loads(line)
            except ValueError:
                self.malformed_lines += 1
                continue
            self._load_entry(data)
        self._settle_links()
        added = self._entries[before:]
        if added:
            self.foreign_entries += len(added)
            self._file_tip = added[-1].id
            if follow and at_tip:
                self._leaf_id = added[-1].id
        return added

    def claim_writer(self) -> list[int]:
        """Note this process as a writer of the file (now, or once the file is created).

        A host that keeps the session open (every mode does) calls this; the note is removed by
        :meth:`close` or when the store is dropped.

        Returns:
            The pids of other live processes that have the file open (also in ``other_writers``).
        """
        self._claimed = True
        if self._on_disk:
            self._join_writers()
        return list(self.other_writers)

    def _join_writers(self) -> None:
        if self._note is None and self._file is not None and self._persist:
            self._note = WriterNote(self._file)
            self.other_writers = self._note.join()

    def _leave_writers(self) -> None:
        if self._note is not None:
            self._note.leave()
            self._note = None
        self.other_writers = []

    def live_writers(self) -> list[int]:
        """Pids of other live processes that have this session file open now."""
        return self._note.others() if self._note is not None else []

    def close(self) -> None:
        """Try once more to write pending entries, and leave the file to other writers."""
        if self._pending:
            self._write(None)
        self._leave_writers()

    def _all_lines(self) -> bytes:
        return _lines([self._header.raw, *(entry.to_json_dict() for entry in self._entries)])

    def append_message(self, message: AgentMessage | Mapping[str, Any]) -> str:
        """Append an agent message (user, assistant, toolResult, system, bashExecution, custom).

        Compaction and branch summaries are entries of their own: use :meth:`append_compaction`
        and :meth:`append_branch_summary`.

        Returns:
            The new entry's id.
        """
        if isinstance(message, Mapping):
            message = parse_agent_message(message)
        if isinstance(message, BranchSummaryMessage | CompactionSummaryMessage):
            raise ValueError("summaries are appended with append_branch_summary/append_compaction")
        raw = self._common("message")
        raw["message"] = message_to_dict(message)
        return self._append(raw, message)

    def append_model_change(self, provider: str, model_id: str) -> str:
        raw = self._common("model_change")
        raw["provider"] = provider
        raw["modelId"] = model_id
        return self._append(raw)

    def append_thinking_level_change(self, level: str) -> str:
        raw = self._common("thinking_level_change")
        raw["thinkingLevel"] = level
        return self._append(raw)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: dict[str, Any] | None = None,
    ) -> str:
        """Append a compaction: context becomes the summary + entries from ``first_kept_entry_id``
        (``usage``: the JSON form of the summary call's usage)."""
        raw = self._common("compaction")
        raw.update(summary=summary, firstKeptEntryId=first_kept_entry_id, tokensBefore=tokens_before)
        if details is not None:
            raw["details"] = details
        if usage is not None:
            raw["usage"] = usage
        if from_hook is not None:
            raw["fromHook"] = from_hook
        return self._append(raw)

    def append_branch_summary(
        self, from_id: str, summary: str, details: Any = None, from_hook: bool | None = None
    ) -> str:
        """Append a ``branch_summary`` (``from_id``: the entry the summarised branch left, or ``"root"``)."""
        raw = self._common("branch_summary")
        raw.update(fromId=from_id, summary=summary)
        if details is not None:
            raw["details"] = details
        if from_hook is not None:
            raw["fromHook"] = from_hook
        return self._append(raw)

    def branch_with_summary(
        self, branch_from_id: str | None, summary: str, details: Any = None, from_hook: bool | None = None
    ) -> str:
        """Move the leaf to ``branch_from_id`` (``None``: before the root) and append a branch summary there."""
        if branch_from_id is None:
            self.reset_leaf()
        else:
            self.branch(branch_from_id)
        return self.append_branch_summary(branch_from_id or "root", summary, details, from_hook)

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        """Append extension state (never part of the LLM context)."""
        raw = self._common("custom")
        raw["customType"] = custom_type
        if data is not None:
            raw["data"] = data
        return self._append(raw)

    def append_custom_message(
        self, custom_type: str, content: str | list[Any], display: bool = True, details: Any = None
    ) -> str:
        """Append an extension message that the model sees as user content."""
        raw = self._common("custom_message")
        raw.update(
            customType=custom_type,
            content=content if isinstance(content, str) else [message_to_dict(block) for block in content],
            display=display,
        )
        if details is not None:
            raw["details"] = details
        return self._append(raw)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with ``None``/empty text clear) the label of an entry.

        Raises:
            KeyError: No entry has ``target_id``.
        """
        if target_id not in self._by_id:
            raise KeyError(f"Entry {target_id} not found")
        raw = self._common("label")
        raw["targetId"] = target_id
        text = label.strip() if label else ""
        if text:
            raw["label"] = text
        return self._append(raw)

    def append_checkpoint(self, fields: Mapping[str, Any]) -> str:
        """Append a ``checkpoint`` entry (file snapshots, ``checkpoints/checkpoints.py``); Pi keeps it as unknown."""
        raw = self._common("checkpoint")
        raw.update(fields)
        return self._append(raw)

    def append_session_info(self, name: str) -> str:
        """Set the session's display name (trimmed)."""
        raw = self._common("session_info")
        raw["name"] = name.strip()
        return self._append(raw)

    # ------------------------------------------------------------------ reading

    def get_entries(self) -> list[SessionEntry]:
        """All entries in file order (a new list; the entries themselves are read-only)."""
        return list(self._entries)

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        return self._by_id.get(entry_id)

    def get_leaf_entry(self) -> SessionEntry | None:
        return self._by_id.get(self._leaf_id) if self._leaf_id is not None else None

    def get_children(self, entry_id: str) -> list[SessionEntry]:
        return [entry for entry in self._entries if entry.parent_id == entry_id]

    def get_label(self, entry_id: str) -> str | None:
        return self._labels.get(entry_id)

    def get_branch(self, leaf_id: str | None = _UNSET) -> list[SessionEntry]:
        """The path root -> ``leaf_id`` (default: the current leaf), all entry types included."""
        start = self._leaf_id if leaf_id is _UNSET else leaf_id
        if start is None:
            return []
        return path_to(self._by_id.get(start), self._by_id)

    def get_tree(self) -> list[SessionTreeNode]:
        """The entries as a forest: children oldest first, orphans as extra roots, labels resolved."""
        nodes = {entry.id: SessionTreeNode(entry, [], self._labels.get(entry.id)) for entry in self._entries}
        roots: list[SessionTreeNode] = []
        for entry in self._entries:
            node = nodes[entry.id]
            if node.entry is not entry:
                continue  # a duplicate id: the later entry wins, as in the id index
            parent = nodes.get(entry.parent_id) if entry.parent_id not in (None, entry.id) else None
            (parent.children if parent is not None else roots).append(node)
        for node in nodes.values():
            if len(node.children) > 1:
                node.children.sort(key=lambda child: iso_to_ms(child.entry.timestamp))
        return roots

    def build_session_context(self, leaf_id: str | None = _UNSET) -> SessionContext:
        """Messages, thinking level and model at ``leaf_id`` (default: the current leaf).

        ``None`` gives an empty context. See :func:`pi_coder.session.context.build_context_from_path`.
        """
        target = self._leaf_id if leaf_id is _UNSET else leaf_id
        if target is None:
            return SessionContext([], "off", None)
        leaf = self._by_id.get(target)
        if leaf is None:
            leaf = self._entries[-1] if self._entries else None
        with _file.gc_paused():
            return build_context_from_path(path_to(leaf, self._by_id))

    # ------------------------------------------------------------------ moving the leaf, forking

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``; the next append starts a new branch there (nothing is written).

        Raises:
            KeyError: No entry has ``entry_id``.
        """
        if entry_id not in self._by_id:
            raise KeyError(f"Entry {entry_id} not found")
        self._leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append creates a new root."""
        self._leaf_id = None

    def create_branched_session(self, from_entry_id: str) -> Path | None:
        """Switch to a new session holding the path root -> ``from_entry_id`` (``/fork``).

        The new header's ``parentSession`` is this session's file. Label entries on the path are
        dropped and re-created at the end for the labelled entries of the path. The new file is
        written at once if the path holds an assistant message, else lazily as usual.

        Returns:
            The new session file (``None`` in memory).

        Raises:
            KeyError: No entry has ``from_entry_id``.
        """
        path = self.get_branch(from_entry_id)
        if not path:
            raise KeyError(f"Entry {from_entry_id} not found")
        kept = [entry for entry in path if type(entry) is not LabelEntry]
        kept_ids = {entry.id for entry in kept}
        labels = [(target, label) for target, label in self._labels.items() if target in kept_ids]
        parent = str(self._file) if self._persist and self._file is not None else None
        self.new_session(parent_session=parent)
        for entry in kept:
            self._entries.append(entry)
            self._by_id[entry.id] = entry
            self._index(entry)
        self._leaf_id = kept[-1].id
        for target, label in labels:
            raw = self._common("label")
            raw.update(targetId=target, label=label)
            self._append(raw)
        if self._has_message and self._file is not None and not self._on_disk:
            self._write(None)
        return self._file
