"""Where a resumed transcript shows the ``custom`` entries extensions appended (extensions §3.6)."""

from __future__ import annotations

from pi_coder.core.transcript import custom_entry_places
from pi_coder.session.store import SessionStore


def _user(store: SessionStore, text: str) -> str:
    return store.append_message({"role": "user", "content": text, "timestamp": 1})


def _places(store: SessionStore) -> dict[int, list[str]]:
    messages = store.build_session_context().messages
    found = custom_entry_places(messages, store.get_branch())
    return {index: [e.custom_type for e in entries] for index, entries in found.items()}


def test_entries_follow_the_message_before_them() -> None:
    store = SessionStore.in_memory("/tmp")
    store.append_custom("a")  # before any message
    _user(store, "one")
    store.append_custom("b")
    store.append_custom_message("note", "a custom message")
    store.append_custom("c")
    store.append_model_change("faux", "faux-1")  # bookkeeping entries move nothing
    store.append_custom("d")
    _user(store, "two")
    store.append_custom("e")
    assert _places(store) == {-1: ["a"], 0: ["b"], 1: ["c", "d"], 2: ["e"]}


def test_a_compaction_leaves_the_entries_before_its_first_kept_entry_out() -> None:
    store = SessionStore.in_memory("/tmp")
    _user(store, "old")
    store.append_custom("gone")
    kept = _user(store, "kept")
    store.append_custom("k")
    store.append_compaction("summary", kept, 1000)
    store.append_custom("after")
    _user(store, "new")
    store.append_custom("last")
    # messages: the summary, "kept", "new"
    assert _places(store) == {1: ["k", "after"], 2: ["last"]}


def test_other_branches_are_not_shown() -> None:
    store = SessionStore.in_memory("/tmp")
    first = _user(store, "one")
    store.append_custom("elsewhere")
    store.branch(first)
    _user(store, "two")
    store.append_custom("here")
    assert _places(store) == {1: ["here"]}
