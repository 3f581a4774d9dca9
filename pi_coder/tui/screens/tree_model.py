"""The ``/tree`` view as data: which entries show, in what order, with which connectors (pure).

Layout (pi-product 3.6): a chain of single children stays in one column; at a branch point each
child gets ``├─ `` / ``└─ `` and its subtree is indented under a ``│`` gutter. The branch holding
the active leaf is listed first. Entries hidden by the filter or the search are skipped and
their visible descendants move up to the nearest visible ancestor. A branch point can be folded
(``⊞``) or unfolded (``⊟``); changing the filter or the search unfolds everything.

Everything is iterative, so a session with thousands of entries in one chain is fine.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, assert_never, get_args

from pi_coder.core import transcript as tx
from pi_coder.session.entries import (
    CustomEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)
from pi_coder.tui.format import shorten_home

if TYPE_CHECKING:
    from pi_coder.session.entries import SessionEntry
    from pi_coder.session.store import SessionTreeNode

__all__ = ["FILTER_LABELS", "FILTER_MODES", "TreeItem", "TreeModel", "TreeRow", "build_items"]

FilterMode = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
FILTER_MODES: tuple[FilterMode, ...] = get_args(FilterMode)
FILTER_LABELS = {"default": "", "no-tools": "[no-tools]", "user-only": "[user]", "labeled-only": "[labeled]", "all": "[all]"}

_TEXT_LIMIT = 200
_SETTINGS_TYPES = (LabelEntry, CustomEntry, ModelChangeEntry, ThinkingLevelChangeEntry, SessionInfoEntry)


@dataclass(slots=True, eq=False)
class TreeItem:
    """One session entry with what the view needs, computed once."""

    entry_id: str
    kind: str
    """``user``, ``assistant``, ``toolResult``, ``bashExecution`` (messages) or the entry type."""
    head: str
    """Role prefix such as ``user: `` (may be empty)."""
    body: str
    label: str | None = None
    settings_entry: bool = False
    """Bookkeeping entries hidden by the default filter."""
    tool_only: bool = False
    """An assistant message with tool calls and no text (hidden unless it is the leaf, or in ``all``)."""
    error: bool = False
    children: list[TreeItem] = field(default_factory=list)

    @property
    def search_text(self) -> str:
        return " ".join(part for part in (self.label or "", self.kind, self.head, self.body) if part).lower()


@dataclass(slots=True, frozen=True)
class TreeRow:
    """One line of the view."""

    entry_id: str
    prefix: str
    """Gutters and connector, e.g. ``│  ├─ ``."""
    item: TreeItem
    on_path: bool
    """On the path root -> active leaf."""
    active: bool
    """The active position (the leaf, or its nearest shown ancestor)."""
    foldable: bool
    folded: bool


def _flat(text: str) -> str:
    return " ".join(text.split())


def _short(text: str) -> str:
    return _flat(text[:_TEXT_LIMIT])


def _tool_summary(name: str, args: dict[str, Any]) -> str:
    def path(key: str = "path", default: str = "") -> str:
        return shorten_home(str(args.get(key) or args.get("file_path") or default))

    if name == "read":
        shown = path()
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int) or isinstance(limit, int):
            start = offset if isinstance(offset, int) else 1
            shown += f":{start}" + (f"-{start + limit - 1}" if isinstance(limit, int) else "")
        return f"[read: {shown}]"
    if name in ("write", "edit"):
        return f"[{name}: {path()}]"
    if name == "bash":
        command = _flat(str(args.get("command") or ""))
        return f"[bash: {command[:50]}{'...' if len(command) > 50 else ''}]"
    if name == "grep":
        return f"[grep: /{args.get('pattern') or ''}/ in {path(default='.')}]"
    if name == "find":
        return f"[find: {args.get('pattern') or ''} in {path(default='.')}]"
    if name == "ls":
        return f"[ls: {path(default='.')}]"
    dumped = json.dumps(args, ensure_ascii=False, default=str)
    return f"[{name}: {dumped[:40]}{'...' if len(dumped) > 40 else ''}]"


def _describe(entry: SessionEntry, tools: dict[str, tuple[str, dict[str, Any]]]) -> TreeItem:
    """The entry's row; its content is read through the transcript blocks, like every renderer's."""
    entry_id = entry.id
    if isinstance(entry, MessageEntry):
        role = entry.role or "message"
        message = tx.entry_message(entry)
        if role == "toolResult":
            call = tools.get(str(tx.get(message, "tool_call_id") or ""))
            body = _tool_summary(*call) if call else f"[{tx.get(message, 'tool_name') or 'tool'}]"
            return TreeItem(entry_id, "toolResult", "", body)
        blocks = tx.message_blocks(message, hidden=True)
        if role == "user":
            return TreeItem(entry_id, "user", "user: ", _short(tx.blocks_text(blocks)))
        if role == "assistant":
            return _assistant(entry_id, message, blocks, tools)
        for block in blocks:
            if isinstance(block, tx.BashBlock):
                return TreeItem(entry_id, "bashExecution", "", f"[bash]: {_flat(block.command)}")
            if isinstance(block, tx.CustomBlock):
                return TreeItem(entry_id, role, f"[{block.custom_type}]: ", _short(block.text))
        return TreeItem(entry_id, role, "", f"[{role}]")
    for block in tx.entry_blocks(entry, hidden=True):
        if isinstance(block, tx.CustomBlock):
            return TreeItem(entry_id, "custom_message", f"[{block.custom_type}]: ", _short(block.text))
        if isinstance(block, tx.SummaryBlock) and block.kind == "compaction":
            tokens = round((block.tokens_before or 0) / 1000)
            return TreeItem(entry_id, "compaction", "", f"[compaction: {tokens}k tokens]")
        if isinstance(block, tx.SummaryBlock):
            return TreeItem(entry_id, "branch_summary", "[branch summary]: ", _flat(block.summary)[:_TEXT_LIMIT])
    if isinstance(entry, ModelChangeEntry):
        return TreeItem(entry_id, "model_change", "", f"[model: {entry.model_id}]", settings_entry=True)
    if isinstance(entry, ThinkingLevelChangeEntry):
        return TreeItem(entry_id, "thinking_level_change", "", f"[thinking: {entry.thinking_level}]", settings_entry=True)
    if isinstance(entry, CustomEntry):
        return TreeItem(entry_id, "custom", "", f"[custom: {entry.custom_type}]", settings_entry=True)
    if isinstance(entry, LabelEntry):
        return TreeItem(entry_id, "label", "", f"[label: {entry.label or '(cleared)'}]", settings_entry=True)
    if isinstance(entry, SessionInfoEntry):
        return TreeItem(entry_id, "session_info", "", f"[name: {entry.name or ''}]", settings_entry=True)
    kind = entry.type
    return TreeItem(entry_id, kind, "", f"[{kind}]", settings_entry=True)


def _assistant(
    entry_id: str, message: Any, blocks: list[tx.Block], tools: dict[str, tuple[str, dict[str, Any]]]
) -> TreeItem:
    calls = [block for block in blocks if isinstance(block, tx.ToolBlock)]
    for call in calls:
        tools[call.call_id] = (call.name, dict(call.args))
    item = TreeItem(entry_id, "assistant", "assistant: ", _short(tx.blocks_text(blocks)))
    if not item.body:
        stop = tx.get(message, "stop_reason")
        error = tx.get(message, "error_message")
        if stop == "aborted":
            item.body, item.error = "(aborted)", True
        elif error:
            item.body, item.error = _flat(str(error))[:80], True
        else:
            item.body = "(no content)"
            item.tool_only = bool(calls) or stop == "toolUse"
    return item


def build_items(roots: Sequence[SessionTreeNode]) -> list[TreeItem]:
    """``TreeItem`` forest from ``SessionStore.get_tree()`` nodes (``entry``, ``children``, ``label``)."""
    tools: dict[str, tuple[str, dict[str, Any]]] = {}
    out: list[TreeItem] = []
    stack: list[tuple[SessionTreeNode, list[TreeItem]]] = [(node, out) for node in reversed(roots)]
    # Pre-order, so an assistant message is described before the tool results below it.
    while stack:
        node, siblings = stack.pop()
        item = _describe(node.entry, tools)
        item.label = node.label
        siblings.append(item)
        stack.extend((child, item.children) for child in reversed(node.children))
    return out


class TreeModel:
    """The tree view's state: filter, search query, folds; ``rows()`` gives the visible lines.

    Args:
        roots: ``SessionStore.get_tree()``.
        leaf_id: The active leaf (``None`` before the first entry).
        filter_mode: One of ``FILTER_MODES``.
    """

    def __init__(self, roots: Sequence[SessionTreeNode], leaf_id: str | None, filter_mode: str = "default") -> None:
        self.roots = build_items(roots)
        self.leaf_id = leaf_id
        self.filter_mode = _filter_mode(filter_mode) or "default"
        self.query = ""
        self.folded: set[str] = set()
        self._by_id: dict[str, TreeItem] = {}
        self._parent: dict[str, str | None] = {}
        stack: list[tuple[TreeItem, str | None]] = [(item, None) for item in self.roots]
        while stack:
            item, parent = stack.pop()
            self._by_id[item.entry_id] = item
            self._parent[item.entry_id] = parent
            stack.extend((child, item.entry_id) for child in item.children)
        self.path_ids = self._path(leaf_id)
        self._rows: list[TreeRow] | None = None

    def _path(self, leaf_id: str | None) -> set[str]:
        ids: set[str] = set()
        current = leaf_id
        while current is not None and current not in ids and current in self._parent:
            ids.add(current)
            current = self._parent[current]
        return ids

    # ------------------------------------------------------------------ state changes

    def set_filter(self, mode: str) -> None:
        known = _filter_mode(mode)
        if known is not None and known != self.filter_mode:
            self.filter_mode = known
            self.folded.clear()
            self._rows = None

    def cycle_filter(self, step: int = 1) -> str:
        index = FILTER_MODES.index(self.filter_mode)
        self.set_filter(FILTER_MODES[(index + step) % len(FILTER_MODES)])
        return self.filter_mode

    def set_query(self, query: str) -> None:
        if query != self.query:
            self.query = query
            self.folded.clear()
            self._rows = None

    def set_folded(self, entry_id: str, folded: bool) -> None:
        if folded:
            self.folded.add(entry_id)
        else:
            self.folded.discard(entry_id)
        self._rows = None

    def set_label(self, entry_id: str, label: str | None) -> None:
        item = self._by_id.get(entry_id)
        if item is not None:
            item.label = label or None
            self._rows = None

    def item(self, entry_id: str) -> TreeItem | None:
        return self._by_id.get(entry_id)

    # ------------------------------------------------------------------ visibility

    def _visible(self, item: TreeItem) -> bool:
        mode = self.filter_mode
        if mode != "all" and item.tool_only and item.entry_id != self.leaf_id:
            return False
        match mode:
            case "default":
                shown = not item.settings_entry
            case "no-tools":
                shown = not item.settings_entry and item.kind != "toolResult"
            case "user-only":
                shown = item.kind == "user"
            case "labeled-only":
                shown = item.label is not None
            case "all":
                shown = True
            case _:
                assert_never(mode)
        if shown and self.query.strip():
            text = item.search_text
            shown = all(token in text for token in self.query.lower().split())
        return shown

    def _visible_children(self, children: Sequence[TreeItem]) -> list[TreeItem]:
        out: list[TreeItem] = []
        stack = list(reversed(children))
        while stack:
            child = stack.pop()
            if self._visible(child):
                out.append(child)
            else:
                stack.extend(reversed(child.children))
        out.sort(key=lambda child: child.entry_id not in self.path_ids)  # stable: active branch first
        return out

    # ------------------------------------------------------------------ rows

    def rows(self) -> list[TreeRow]:
        """The visible lines, top to bottom."""
        if self._rows is None:
            self._rows = self._layout()
        return self._rows

    def _layout(self) -> list[TreeRow]:
        rows: list[TreeRow] = []
        active = self.active_id()
        stack: list[tuple[TreeItem, str, str]] = [(item, "", "") for item in reversed(self._visible_children(self.roots))]
        while stack:
            item, lead, connector = stack.pop()
            kids = self._visible_children(item.children)
            foldable = len(kids) > 1
            folded = foldable and item.entry_id in self.folded
            rows.append(
                TreeRow(
                    entry_id=item.entry_id,
                    prefix=lead + connector,
                    item=item,
                    on_path=item.entry_id in self.path_ids,
                    active=item.entry_id == active,
                    foldable=foldable,
                    folded=folded,
                )
            )
            if folded or not kids:
                continue
            child_lead = lead + {"├─ ": "│  ", "└─ ": "   "}.get(connector, "")
            if len(kids) == 1:
                stack.append((kids[0], child_lead, ""))
                continue
            last = len(kids) - 1
            for index in range(last, -1, -1):
                stack.append((kids[index], child_lead, "└─ " if index == last else "├─ "))
        return rows

    def active_id(self) -> str | None:
        """The row standing for the active position: the leaf or its nearest visible ancestor."""
        current = self.leaf_id
        seen: set[str] = set()
        while current is not None and current not in seen:
            seen.add(current)
            item = self._by_id.get(current)
            if item is not None and self._visible(item):
                return current
            current = self._parent.get(current)
        return None

    def index_of(self, entry_id: str | None) -> int | None:
        if entry_id is None:
            return None
        for index, row in enumerate(self.rows()):
            if row.entry_id == entry_id:
                return index
        return None

    def initial_index(self) -> int:
        """Where the cursor starts: the active row, else the last row."""
        found = self.index_of(self.active_id())
        return found if found is not None else max(0, len(self.rows()) - 1)

    def branch_point_before(self, index: int) -> int | None:
        """The nearest foldable row above ``index``."""
        rows = self.rows()
        for candidate in range(min(index, len(rows)) - 1, -1, -1):
            if rows[candidate].foldable:
                return candidate
        return None

    def branch_point_after(self, index: int) -> int | None:
        """The nearest foldable row below ``index``."""
        rows = self.rows()
        for candidate in range(index + 1, len(rows)):
            if rows[candidate].foldable:
                return candidate
        return None


def _filter_mode(value: str) -> FilterMode | None:
    """``value`` as one of ``FILTER_MODES``; None when it is none of them."""
    return next((mode for mode in FILTER_MODES if mode == value), None)
