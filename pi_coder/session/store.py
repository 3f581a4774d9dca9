"""SessionStore: Pi's SessionManager — an append-only JSONL tree of session entries.

Every append creates a child of the current leaf and moves the leaf to it. The store ties three
parts together: the entries in memory (``tree.py``), reading and repairing a file
(``loader.py``) and writing it (``writer.py``: lazily from the first message, one flushed line
per entry, failed saves kept pending). Lines other processes append to the same file are read
before each append and kept (``sync`` also follows them when this process is at the tip), and a
lock note next to the file tells who else has it open (``other_writers``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pi_coder.session._file as _file
from pi_coder.ai.types import ImageContent, TextContent
from pi_coder.json_types import JsonObject, JsonValue
from pi_coder.paths import session_dir_for_cwd
from pi_coder.session.codec import entry_from_dict, header_from_dict, iso_now, migrate_entries, new_session_id
from pi_coder.session.context import SessionContext, Unset
from pi_coder.session.entries import (
    CURRENT_SESSION_VERSION,
    LabelEntry,
    MessageEntry,
    SessionEntry,
    SessionHeader,
)
from pi_coder.session.errors import InvalidSessionFileError
from pi_coder.session.loader import EntryLoader, LoadReport, load_file, session_lines
from pi_coder.session.messages import (
    AgentMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    message_to_dict,
    parse_agent_message,
)
from pi_coder.session.tree import EntryTree, SessionTreeNode
from pi_coder.session.writer import SessionWriter

__all__ = ["SessionStore", "SessionTreeNode"]



def _file_name(timestamp: str, session_id: str) -> str:
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


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
        self._tree = EntryTree()
        self._report = LoadReport()
        self._loader = EntryLoader(self._tree, self._report, None)
        self._writer = SessionWriter(self._tree, persist, lambda foreign: self._integrate(foreign, follow=False))
        self._writer.header = SessionHeader(id="", timestamp="", cwd=cwd)
        self.foreign_entries = 0
        """Entries other processes appended to the file since it was opened here."""

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
        store = cls(os.getcwd(), directory, persist=True)
        store._loader.file = file
        loaded = load_file(file, store._loader) if file.exists() else None
        if loaded is None:
            # Missing, empty, or only a line torn while the header was being written: a new
            # session that will be written there (replacing what is there).
            store.new_session()
            store._writer.file = store._loader.file = file
            store._writer.replace_on_flush = file.exists()
            return store
        if loaded.header.cwd:
            store._cwd = loaded.header.cwd
        store._writer.opened(loaded.header, file, loaded.size)
        store._tree.leaf_id = store._writer.file_tip
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
        file = store.new_session(parent_session=str(source_path), session_id=session_id)
        assert file is not None
        _file.ensure_private_dir(directory)
        _file.create_exclusive(file, session_lines([store.header.raw, *entries]))
        return cls.open(file, directory)

    def new_session(self, parent_session: str | None = None, session_id: str | None = None) -> Path | None:
        """Start a fresh session in this store (``/new``); returns the future file path."""
        session_id = session_id or new_session_id()
        timestamp = iso_now()
        raw: JsonObject = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": session_id,
            "timestamp": timestamp,
            "cwd": self._cwd,
        }
        if parent_session is not None:
            raw["parentSession"] = parent_session
        header = header_from_dict(raw)
        assert header is not None, "a header with an id"
        self._tree.clear()
        file = None
        if self._persist:
            assert self._session_dir is not None, "a persistent store has a session directory"
            file = self._session_dir / _file_name(timestamp, session_id)
        self._writer.start(header, file)
        self._loader.file = file
        return file

    # ------------------------------------------------------------------ properties

    @property
    def session_id(self) -> str:
        return self._writer.header.id

    @property
    def session_file(self) -> Path | None:
        """The file path (``None`` in memory); the file may not exist yet (lazy creation)."""
        return self._writer.file

    @property
    def session_dir(self) -> Path | None:
        return self._session_dir

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def header(self) -> SessionHeader:
        return self._writer.header

    @property
    def leaf_id(self) -> str | None:
        return self._tree.leaf_id

    @property
    def name(self) -> str | None:
        """The display name: the latest non-empty ``session_info`` name."""
        return self._tree.name

    @property
    def is_persisted(self) -> bool:
        return self._persist

    @property
    def write_error(self) -> str | None:
        """Why the last save failed, while entries wait in memory for the next one (else None)."""
        return self._writer.write_error

    @property
    def other_writers(self) -> list[int]:
        """Pids of other live processes that had the file open when it was opened here."""
        return self._writer.other_writers

    @property
    def repairs(self) -> list[str]:
        """One line per damaged link repaired on load (naming the line)."""
        return self._report.repairs

    @property
    def malformed_at(self) -> list[int]:
        """Line numbers of (the first few) malformed lines skipped on load."""
        return self._report.malformed_at

    @property
    def malformed_lines(self) -> int:
        """Lines skipped on load because they were not valid JSON entries."""
        return self._report.malformed_lines

    @property
    def torn_tail(self) -> bool:
        """The file ended in a partly written line (ignored)."""
        return self._report.torn_tail

    @property
    def migrated_from(self) -> int | None:
        """The format version the file was migrated from on open, if it was."""
        return self._report.migrated_from

    @property
    def backup_path(self) -> Path | None:
        """Where the pre-migration copy was kept."""
        return self._report.backup_path

    def load_warnings(self) -> list[str]:
        """One-line notes about damage found when the file was opened (for the UI to show)."""
        notes = self._report.warnings(self._writer.file)
        if self.other_writers:
            pids = ", ".join(str(pid) for pid in self.other_writers)
            notes.append(
                f"Another pi process (pid {pids}) has this session open: its turns are loaded before each "
                "prompt here; turns sent at the same moment go on separate branches (see /tree)"
            )
        return notes

    # ------------------------------------------------------------------ appending

    def _common(self, kind: str) -> JsonObject:
        return {
            "type": kind,
            "id": self._tree.new_id(),
            "parentId": self._tree.parent_for_disk(),
            "timestamp": iso_now(),
        }

    def _append(self, raw: JsonObject, message: AgentMessage | None = None) -> str:
        entry = entry_from_dict(raw)
        assert entry is not None
        tree = self._tree
        entry.parent_id = tree.leaf_id
        tree.add(entry)
        tree.leaf_id = entry.id
        self._writer.write(entry)
        if message is not None:
            # Keep the caller's object as the entry's message; the dict was only for writing.
            assert isinstance(entry, MessageEntry)
            entry._message = message
            entry.raw = {}
        return entry.id

    def flush(self) -> None:
        """Write the entries a failed save left pending (or the unwritten session) now.

        Raises:
            SessionWriteError: The file still cannot be written (``write_error`` says why).
        """
        self._writer.flush()

    @property
    def pending_count(self) -> int:
        """Entries held in memory because a save failed (written with the next save)."""
        return self._writer.pending_count

    def sync(self) -> list[SessionEntry]:
        """Load the entries other processes appended to the file since this process last read or wrote it.

        If the leaf was the file's last entry, it moves to the new last entry (as a reload
        would), so the next append continues the conversation where the file ends. With entries
        still pending after a failed save, nothing moves.

        Returns:
            The entries found (empty if none, or the file cannot be read).
        """
        foreign = self._writer.read_appended()
        if not foreign:
            return []
        return self._integrate(foreign, follow=not self._writer.pending)

    def _integrate(self, foreign: bytes, *, follow: bool) -> list[SessionEntry]:
        at_tip = self._tree.leaf_id == self._writer.file_tip
        added = self._loader.load_lines(foreign)
        if added:
            self.foreign_entries += len(added)
            self._writer.file_tip = added[-1].id
            if follow and at_tip:
                self._tree.leaf_id = added[-1].id
        return added

    def claim_writer(self) -> list[int]:
        """Note this process as a writer of the file (now, or once the file is created).

        A host that keeps the session open (every mode does) calls this; the note is removed by
        :meth:`close` or when the store is dropped.

        Returns:
            The pids of other live processes that have the file open (also in ``other_writers``).
        """
        return self._writer.claim()

    def live_writers(self) -> list[int]:
        """Pids of other live processes that have this session file open now."""
        return self._writer.live_writers()

    def close(self) -> None:
        """Try once more to write pending entries, and leave the file to other writers."""
        self._writer.close()

    def append_message(self, message: AgentMessage | Mapping[str, object]) -> str:
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
        details: JsonValue = None,
        from_hook: bool | None = None,
        usage: JsonObject | None = None,
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
        self, from_id: str, summary: str, details: JsonValue = None, from_hook: bool | None = None
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
        self, branch_from_id: str | None, summary: str, details: JsonValue = None, from_hook: bool | None = None
    ) -> str:
        """Move the leaf to ``branch_from_id`` (``None``: before the root) and append a branch summary there."""
        if branch_from_id is None:
            self.reset_leaf()
        else:
            self.branch(branch_from_id)
        return self.append_branch_summary(branch_from_id or "root", summary, details, from_hook)

    def append_custom(self, custom_type: str, data: JsonValue = None) -> str:
        """Append extension state (never part of the LLM context)."""
        raw = self._common("custom")
        raw["customType"] = custom_type
        if data is not None:
            raw["data"] = data
        return self._append(raw)

    def append_custom_message(
        self,
        custom_type: str,
        content: str | Sequence[TextContent | ImageContent],
        display: bool = True,
        details: JsonValue = None,
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
        if target_id not in self._tree.by_id:
            raise KeyError(f"Entry {target_id} not found")
        raw = self._common("label")
        raw["targetId"] = target_id
        text = label.strip() if label else ""
        if text:
            raw["label"] = text
        return self._append(raw)

    def append_checkpoint(self, fields: Mapping[str, JsonValue]) -> str:
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
        return list(self._tree.entries)

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        return self._tree.by_id.get(entry_id)

    def get_leaf_entry(self) -> SessionEntry | None:
        leaf = self._tree.leaf_id
        return self._tree.by_id.get(leaf) if leaf is not None else None

    def get_children(self, entry_id: str) -> list[SessionEntry]:
        return self._tree.children(entry_id)

    def get_label(self, entry_id: str) -> str | None:
        return self._tree.labels.get(entry_id)

    def get_branch(self, leaf_id: str | None | Unset = Unset.UNSET) -> list[SessionEntry]:
        """The path root -> ``leaf_id`` (default: the current leaf), all entry types included."""
        return self._tree.branch(self._tree.leaf_id if isinstance(leaf_id, Unset) else leaf_id)

    def get_tree(self) -> list[SessionTreeNode]:
        """The entries as a forest: children oldest first, orphans as extra roots, labels resolved."""
        return self._tree.forest()

    def build_session_context(self, leaf_id: str | None | Unset = Unset.UNSET) -> SessionContext:
        """Messages, thinking level and model at ``leaf_id`` (default: the current leaf).

        ``None`` gives an empty context. See :func:`pi_coder.session.context.build_context_from_path`.
        """
        return self._tree.context(self._tree.leaf_id if isinstance(leaf_id, Unset) else leaf_id)

    # ------------------------------------------------------------------ moving the leaf, forking

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``; the next append starts a new branch there (nothing is written).

        Raises:
            KeyError: No entry has ``entry_id``.
        """
        if entry_id not in self._tree.by_id:
            raise KeyError(f"Entry {entry_id} not found")
        self._tree.leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append creates a new root."""
        self._tree.leaf_id = None

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
        tree = self._tree
        kept = [entry for entry in path if type(entry) is not LabelEntry]
        kept_ids = {entry.id for entry in kept}
        labels = [(target, label) for target, label in tree.labels.items() if target in kept_ids]
        file = self._writer.file
        parent = str(file) if self._persist and file is not None else None
        self.new_session(parent_session=parent)
        for entry in kept:
            tree.add(entry)
        tree.leaf_id = kept[-1].id
        for target, label in labels:
            raw = self._common("label")
            raw.update(targetId=target, label=label)
            self._append(raw)
        if tree.has_message and self._writer.file is not None and not self._writer.on_disk:
            self._writer.write(None)
        return self._writer.file
