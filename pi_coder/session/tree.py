"""EntryTree: the entries of one session in memory, a tree through ``parentId``.

It holds the entries in file order, the id index, the labels, the session name and the current
leaf, and answers the read questions (branch, tree, context). It does no I/O: ``loader.py``
fills it from a file and ``writer.py`` writes it; ``SessionStore`` (``store.py``) ties the
three together.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pi_coder.session._file as _file
from pi_coder.session.codec import iso_to_ms, new_entry_id
from pi_coder.session.context import SessionContext, build_context_from_path, path_to
from pi_coder.session.entries import (
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    SessionEntry,
    SessionInfoEntry,
)

__all__ = ["EntryTree", "SessionTreeNode"]


@dataclass(slots=True, eq=False)
class SessionTreeNode:
    """One entry of :meth:`SessionStore.get_tree` with its children (oldest first)."""

    entry: SessionEntry
    children: list[SessionTreeNode] = field(default_factory=list)
    label: str | None = None


class EntryTree:
    """The entries, their index by id, labels, name and leaf (see the module docstring)."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forget every entry (a new session, or a file about to be read)."""
        self.entries: list[SessionEntry] = []
        self.by_id: dict[str, SessionEntry] = {}
        self.labels: dict[str, str] = {}
        self.leaf_id: str | None = None
        self.name: str | None = None
        """The latest non-empty ``session_info`` name."""
        self.has_message = False
        """A message or custom message is among the entries (a session file is written from then)."""
        self.disk_ids: dict[str, str] = {}
        """Memory id -> id in the file, for entries renamed because their id was taken."""
        self.aliases: dict[str, str] = {}
        """Id in the file -> memory id of the latest entry loaded with it (duplicates only)."""

    def add(self, entry: SessionEntry) -> None:
        """Append ``entry`` in file order and index it (the leaf does not move)."""
        self.entries.append(entry)
        self.by_id[entry.id] = entry
        self.index(entry)

    def index(self, entry: SessionEntry) -> None:
        """Note what ``entry`` says about the whole session: a message, a label, the name."""
        if isinstance(entry, MessageEntry | CustomMessageEntry):
            self.has_message = True
        elif isinstance(entry, LabelEntry):
            if entry.label:
                self.labels[entry.target_id] = entry.label
            else:
                self.labels.pop(entry.target_id, None)
        elif isinstance(entry, SessionInfoEntry) and entry.name:
            self.name = entry.name

    def new_id(self) -> str:
        """A fresh entry id, unused in this session."""
        return new_entry_id(self.by_id)

    def parent_for_disk(self) -> str | None:
        """The ``parentId`` a new child of the leaf gets in the file (a renamed duplicate keeps its file id)."""
        leaf = self.leaf_id
        return self.disk_ids.get(leaf, leaf) if self.disk_ids and leaf is not None else leaf

    def branch(self, start: str | None) -> list[SessionEntry]:
        """The path root -> ``start``, all entry types included; empty for None."""
        if start is None:
            return []
        return path_to(self.by_id.get(start), self.by_id)

    def children(self, entry_id: str) -> list[SessionEntry]:
        return [entry for entry in self.entries if entry.parent_id == entry_id]

    def forest(self) -> list[SessionTreeNode]:
        """The entries as a forest: children oldest first, orphans as extra roots, labels resolved."""
        nodes = {entry.id: SessionTreeNode(entry, [], self.labels.get(entry.id)) for entry in self.entries}
        roots: list[SessionTreeNode] = []
        for entry in self.entries:
            node = nodes[entry.id]
            if node.entry is not entry:
                continue  # a duplicate id: the later entry wins, as in the id index
            parent_id = entry.parent_id
            parent = nodes.get(parent_id) if parent_id is not None and parent_id != entry.id else None
            (parent.children if parent is not None else roots).append(node)
        for node in nodes.values():
            if len(node.children) > 1:
                node.children.sort(key=lambda child: iso_to_ms(child.entry.timestamp))
        return roots

    def context(self, target: str | None) -> SessionContext:
        """Messages, thinking level and model at ``target`` (an unknown id: the last entry; None: empty)."""
        if target is None:
            return SessionContext([], "off", None)
        leaf = self.by_id.get(target)
        if leaf is None:
            leaf = self.entries[-1] if self.entries else None
        with _file.gc_paused():
            return build_context_from_path(path_to(leaf, self.by_id))
