"""Reading a session file into an :class:`~pi_coder.session.tree.EntryTree`, repairing on the way.

Files of format versions 1 and 2 are migrated (a backup copy is kept next to them); newer files
are streamed, each line's dict freed once its entry exists. Damaged links (a missing or later
parent, a self-parent, a duplicate id) are repaired in memory, each with a note naming its line,
and malformed lines are skipped and counted: :class:`LoadReport` gathers all of it for the UI.
Lines other processes append later go through the same :class:`EntryLoader`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pi_coder.session._file as _file
from pi_coder.ai import secrets
from pi_coder.json_types import JsonObject, JsonValue
from pi_coder.session.codec import dumps, entry_from_dict, header_from_dict, loads, migrate_entries
from pi_coder.session.entries import (
    CURRENT_SESSION_VERSION,
    MessageEntry,
    SessionEntry,
    SessionHeader,
    UnknownEntry,
)
from pi_coder.session.errors import InvalidSessionFileError, SessionReadError
from pi_coder.session.tree import EntryTree

__all__ = ["EntryLoader", "LoadReport", "LoadedFile", "load_file", "session_lines"]


def session_lines(raws: Iterable[JsonObject]) -> bytes:
    """JSONL bytes of ``raws``; every key pi knows of is replaced by [redacted] first (ai/secrets.py)."""
    redactor = secrets.current()
    return b"".join(dumps(redactor.value(raw)) + b"\n" for raw in raws)


@dataclass(slots=True)
class LoadReport:
    """What was found wrong (or changed) while a session file was read."""

    repairs: list[str] = field(default_factory=list)
    """One line per damaged link repaired on load (naming the line)."""
    malformed_at: list[int] = field(default_factory=list)
    """Line numbers of (the first few) malformed lines skipped on load."""
    malformed_lines: int = 0
    """Lines skipped on load because they were not valid JSON entries."""
    torn_tail: bool = False
    """The file ended in a partly written line (ignored)."""
    migrated_from: int | None = None
    """The format version the file was migrated from on open, if it was."""
    backup_path: Path | None = None
    """Where the pre-migration copy was kept."""
    unknown_types: dict[str, int] = field(default_factory=dict)
    """Entries kept unread on load (a type this pi does not know, or a known type of the wrong
    shape), counted by type."""
    version: int = CURRENT_SESSION_VERSION
    """The format version in the file's header."""

    def warnings(self, file: Path | None) -> list[str]:
        """One-line notes about the damage found in ``file`` (for the UI to show)."""
        notes = []
        if self.malformed_lines:
            lines = ", ".join(str(n) for n in self.malformed_at)
            more = ", ..." if self.malformed_lines > len(self.malformed_at) else ""
            where = f" (line {lines}{more})" if lines else ""
            notes.append(f"Skipped {self.malformed_lines} malformed line(s) in {file}{where}")
        if self.torn_tail:
            notes.append(f"Ignored a partly written last line in {file}")
        if self.repairs:
            more = f" (and {len(self.repairs) - 1} more)" if len(self.repairs) > 1 else ""
            notes.append(f"Repaired a damaged session: {self.repairs[0]}{more}")
        newer = (
            f"written by a newer version (session format v{self.version}; this pi reads v{CURRENT_SESSION_VERSION})"
            if self.version > CURRENT_SESSION_VERSION
            else ""
        )
        if self.unknown_types:
            count = sum(self.unknown_types.values())
            kinds = ", ".join(self.unknown_types)
            plural = "entries" if count != 1 else "entry"
            notes.append(
                f"Kept {count} {plural} of types this pi does not know unread ({kinds}) in {file}"
                + (f", {newer}" if newer else "")
            )
        elif newer:
            notes.append(f"{file} was {newer}: fields it does not know were kept unread")
        if self.migrated_from is not None:
            notes.append(
                f"Migrated session from format v{self.migrated_from} to v{CURRENT_SESSION_VERSION} "
                f"(backup: {self.backup_path})"
            )
        return notes


class EntryLoader:
    """Adds entries read from ``file`` to ``tree``, repairing links; see the module docstring."""

    def __init__(self, tree: EntryTree, report: LoadReport, file: Path | None) -> None:
        self.tree = tree
        self.report = report
        self.file = file
        self.raw: _file.RawSessionFile | None = None
        """The file being streamed (for line numbers), while it is."""
        self._unresolved: list[tuple[SessionEntry, SessionEntry | None, int]] = []

    def load(self, data: JsonValue) -> None:
        """Add the entry of one line's JSON value (a malformed one is counted and skipped)."""
        entry = entry_from_dict(data)
        line = self.raw.line if self.raw is not None else 0
        report = self.report
        if entry is None:
            report.malformed_lines += 1
            if line and len(report.malformed_at) < 5:
                report.malformed_at.append(line)
            return
        tree = self.tree
        by_id = tree.by_id
        parent_id = entry.parent_id
        if type(entry) is UnknownEntry:
            report.unknown_types[entry.type] = report.unknown_types.get(entry.type, 0) + 1
        if parent_id is None and tree.entries and isinstance(data, dict) and data.get("parentId", 0) is not None:
            # Pi writes parentId on every entry (null only for a root it meant to start).
            where = f"line {line} of {self.file}" if line else f"an entry of {self.file}"
            what = "has no parentId" if "parentId" not in data else "has a parentId that is not a string"
            report.repairs.append(
                f"{where}: entry {entry.id} {what}, so it starts a new root; "
                "the history before it is on another branch (see /tree)"
            )
        if parent_id is not None:
            if tree.aliases:
                parent_id = tree.aliases.get(parent_id, parent_id)
            parent = by_id.get(parent_id)
            if parent is not None:
                entry.parent_id = parent.id  # share one string object per id
            else:  # missing, written later (a cycle), or itself: settled once the lines are read
                self._unresolved.append((entry, tree.entries[-1] if tree.entries else None, line))
        if entry.id in by_id:
            self._rename_duplicate(entry, line)
        tree.add(entry)
        if type(entry) is MessageEntry:
            # Parsing now, while reading, frees each line's dicts before the next line is read:
            # peak memory stays near the final size instead of dicts + models at once.
            entry.message  # noqa: B018

    def load_lines(self, data: bytes) -> list[SessionEntry]:
        """Add the entries of JSONL ``data`` (lines another process appended) and settle them; the new entries."""
        before = len(self.tree.entries)
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                value = loads(line)
            except ValueError:
                self.report.malformed_lines += 1
                continue
            self.load(value)
        self.settle()
        return self.tree.entries[before:]

    def settle(self) -> None:
        """Repair the parents that were not known when their entry was read.

        A parent written later in the file (which is how a cycle looks) or the entry itself
        cannot be right in an append-only file: the entry is attached to the one before it in
        file order, so the history before it stays on the path. A parent that is not in the
        file at all keeps Pi's rule (the entry starts an extra root); both are reported.
        """
        unresolved, self._unresolved = self._unresolved, []
        tree = self.tree
        for entry, previous, line in unresolved:
            where = f"line {line} of {self.file}" if line else f"an entry of {self.file}"
            parent_id = entry.parent_id
            if parent_id is not None and tree.aliases:
                parent_id = tree.aliases.get(parent_id, parent_id)
            if parent_id not in tree.by_id:
                self.report.repairs.append(
                    f"{where}: entry {entry.id} names parent {entry.parent_id}, which is not in the file; "
                    "the history before it is on another branch (see /tree)"
                )
                continue
            why = "names itself as parent" if parent_id == entry.id else f"names parent {entry.parent_id}, written after it"
            target = f"the entry before it ({previous.id})" if previous is not None else "the root"
            self.report.repairs.append(f"{where}: entry {entry.id} {why}; attached it to {target}")
            entry.parent_id = previous.id if previous is not None else None

    def _rename_duplicate(self, entry: SessionEntry, line: int) -> None:
        """A second entry with a known id: give it a new id in memory; later references mean it."""
        tree = self.tree
        disk_id = entry.id
        alias = tree.new_id()
        tree.aliases[disk_id] = alias
        tree.disk_ids[alias] = disk_id
        entry.id = alias
        where = f"line {line}" if line else "an entry"
        self.report.repairs.append(
            f"{where} of {self.file}: id {disk_id} is used by an earlier entry too; later references to it mean this one"
        )


@dataclass(slots=True)
class LoadedFile:
    """A session file read into a tree."""

    header: SessionHeader
    size: int
    """The file's size as read (appends by other processes are noticed beyond it)."""


def _read_problem(file: Path, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    if isinstance(exc, PermissionError):
        return f"Cannot read session file {file}: {reason} (fix its permissions, e.g. chmod 600 it)"
    return f"Cannot read session file {file}: {reason}"


def load_file(file: Path, loader: EntryLoader) -> LoadedFile | None:
    """Read the session file ``file`` into ``loader.tree`` (reset first); None when it holds nothing yet.

    Raises:
        InvalidSessionFileError: The file has content but does not start with a session header.
        SessionReadError: The file cannot be read (permissions, I/O error).
    """
    header: list[SessionHeader] = []

    def begin(raw_header: JsonObject) -> None:
        parsed = header_from_dict(raw_header)
        if parsed is None:
            raise InvalidSessionFileError(f"Not a session file: {file} (its header has no id)")
        loader.report.version = parsed.version
        loader.tree.clear()
        header.append(parsed)

    def on_header(raw_header: JsonObject) -> Callable[[JsonObject], None] | None:
        version = raw_header.get("version")
        if isinstance(version, int) and version >= CURRENT_SESSION_VERSION:
            begin(raw_header)
            return loader.load  # stream: each line's dict is freed once its entry exists
        return None

    raw = loader.raw = _file.RawSessionFile()
    try:
        _file.read_session_file(file, on_header, raw)
    except OSError as exc:
        raise SessionReadError(_read_problem(file, exc)) from None
    finally:
        loader.raw = None
    if raw.header is None:
        if raw.has_content:
            raise InvalidSessionFileError(f"Not a session file: {file}")
        return None  # empty, or only a line torn while the header was written: nothing to lose
    report = loader.report
    report.torn_tail = raw.torn_tail
    report.malformed_lines += raw.malformed
    report.malformed_at = raw.malformed_at
    if not raw.streamed:
        version = migrate_entries(raw.header, raw.entries)
        if version < CURRENT_SESSION_VERSION:
            report.migrated_from = version
            report.backup_path = _file.backup_copy(file, f".v{version}.bak")
            data = session_lines([raw.header, *raw.entries])
            with _file.locked(file):
                _file.write_atomic(file, data)
            raw.size = len(data)
        begin(raw.header)
        with _file.gc_paused():
            for item in raw.entries:
                loader.load(item)
    loader.settle()
    return LoadedFile(header[-1], raw.size)
