"""The session's entries as a forest laid out for the page.

Entries are numbered in depth-first order (children oldest first, as ``/tree`` shows them), so
every root-to-leaf path is in document order and switching branches only hides and shows
articles. The first (oldest) child of an entry stays at its depth, so a long conversation stays
flush left; the later children of a branch point, listed after the first one's subtree, are one deeper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pi_coder.session.store import SessionStore, SessionTreeNode

__all__ = ["PageTree", "build_tree"]


@dataclass(slots=True)
class PageTree:
    entries: list[dict[str, Any]]
    """The entries' JSON, in page order."""
    parents: list[int]
    """Page index of each entry's parent; -1 for a root."""
    file_order: list[int]
    """Position of each entry in the session file (the latest-written leaf is the newest)."""
    depths: list[int]
    children: list[list[int]]
    labels: list[str | None]
    leaf: int
    """Page index of the current leaf; -1 for an empty session."""
    on_path: list[bool]


def build_tree(store: SessionStore) -> PageTree:
    file_pos = {id(entry): n for n, entry in enumerate(store.get_entries())}
    entries: list[dict[str, Any]] = []
    parents: list[int] = []
    order: list[int] = []
    depths: list[int] = []
    children: list[list[int]] = []
    labels: list[str | None] = []
    leaf_id = store.leaf_id
    leaf = -1
    stack: list[tuple[SessionTreeNode, int, int]] = [(root, -1, 0) for root in reversed(store.get_tree())]
    while stack:  # iterative: a linear 5,000-entry session is 5,000 levels deep
        node, parent, depth = stack.pop()
        index = len(entries)
        entries.append(node.entry.to_json_dict())
        parents.append(parent)
        order.append(file_pos.get(id(node.entry), index))
        depths.append(depth)
        children.append([])
        labels.append(node.label)
        if parent >= 0:
            children[parent].append(index)
        if node.entry.id == leaf_id:
            leaf = index
        for position in range(len(node.children) - 1, -1, -1):  # pushed last to first: popped in order
            stack.append((node.children[position], index, depth + 1 if position else depth))
    on_path = [False] * len(entries)
    if leaf < 0 and entries:
        leaf = max(range(len(entries)), key=order.__getitem__)
    at = leaf
    while at >= 0 and not on_path[at]:
        on_path[at] = True
        at = parents[at]
    return PageTree(entries, parents, order, depths, children, labels, leaf, on_path)
