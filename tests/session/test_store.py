"""SessionStore behaviour: lazy files, permissions, tree, branching, labels, forks, repair, damage."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pi_coder.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_coder.paths import encode_cwd
from pi_coder.session import (
    INTERRUPTED_TOOL_CALL_TEXT,
    BashExecutionMessage,
    CompactionSummaryMessage,
    InvalidSessionFileError,
    MessageEntry,
    SessionStore,
    build_session_context,
    repair_tool_pairing,
)


def _assistant(text: str = "ok", *calls: ToolCall, stop: str = "stop", ts: int | None = None) -> AssistantMessage:
    kwargs = {"timestamp": ts} if ts is not None else {}
    return AssistantMessage(
        content=[TextContent(text=text), *calls],
        provider="faux",
        model="m1",
        stop_reason="toolUse" if calls and stop == "stop" else stop,
        **kwargs,
    )


def _result(call_id: str, text: str = "done") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="t", content=[TextContent(text=text)])


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_new_session_is_lazy_until_the_first_message(tmp_path: Path) -> None:
    """No file (nor folder) before a message; the user's prompt writes header + buffer, then one line per entry."""
    root = tmp_path / "sessions"
    store = SessionStore.create("/home/u/proj", root / encode_cwd("/home/u/proj"))
    store.append_model_change("faux", "m1")
    store.append_thinking_level_change("off")
    assert not root.exists()
    path = store.session_file
    assert path.parent == root / "--home-u-proj--"
    stem_time, session_id = path.stem.split("_")
    assert session_id == store.session_id
    assert stem_time.endswith("Z") and ":" not in stem_time and "." not in stem_time

    store.append_message(UserMessage(content="hi"))  # a crash while the answer streams keeps the prompt
    assert [line["type"] for line in _lines(path)] == ["session", "model_change", "thinking_level_change", "message"]
    store.append_message(_assistant())
    assert len(_lines(path)) == 5
    store.append_message(UserMessage(content="more"))
    assert len(_lines(path)) == 6
    assert path.stat().st_mode & 0o777 == 0o600
    assert (root / "--home-u-proj--").stat().st_mode & 0o777 == 0o700
    assert root.stat().st_mode & 0o777 == 0o700


def test_in_memory_session_never_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = SessionStore.in_memory("/x")
    store.append_message(UserMessage(content="hi"))
    store.append_message(_assistant())
    assert store.session_file is None and not store.is_persisted
    assert list(tmp_path.iterdir()) == []
    assert [m.role for m in store.build_session_context().messages] == ["user", "assistant"]


def test_appends_chain_to_the_leaf_and_branching_moves_it(tmp_path: Path) -> None:
    """branch() moves the leaf in memory only; the next append forks there; reload picks the last line."""
    store = SessionStore.create("/p", tmp_path)
    u1 = store.append_message(UserMessage(content="one"))
    a1 = store.append_message(_assistant("r1"))
    u2 = store.append_message(UserMessage(content="two"))
    a2 = store.append_message(_assistant("r2"))
    assert store.get_entry(a1).parent_id == u1
    assert [e.id for e in store.get_branch()] == [u1, a1, u2, a2]

    store.branch(a1)
    assert store.leaf_id == a1
    assert len(_lines(store.session_file)) == 5  # nothing written by branch()
    assert SessionStore.open(store.session_file).leaf_id == a2
    u3 = store.append_message(UserMessage(content="three"))
    assert store.get_entry(u3).parent_id == a1
    assert [c.id for c in store.get_children(a1)] == [u2, u3]
    texts = [m.content for m in store.build_session_context().messages if m.role == "user"]
    assert texts == ["one", "three"]
    assert [m.content for m in store.build_session_context(u2).messages if m.role == "user"] == ["one", "two"]

    store.reset_leaf()
    assert store.build_session_context() == ([], "off", None)
    root2 = store.append_message(UserMessage(content="fresh root"))
    assert store.get_entry(root2).parent_id is None
    reloaded = SessionStore.open(store.session_file)
    assert reloaded.leaf_id == root2
    assert [r.entry.id for r in reloaded.get_tree()] == [u1, root2]
    with pytest.raises(KeyError):
        store.branch("nope")


def test_tree_sorts_children_by_time_resolves_labels_and_keeps_orphans(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "sid", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"}
    rows = [
        {"type": "message", "id": "r", "parentId": None, "timestamp": "2025-01-01T00:00:01.000Z", "message": {"role": "user", "content": "q", "timestamp": 1}},
        {"type": "message", "id": "late", "parentId": "r", "timestamp": "2025-01-01T00:00:09.000Z", "message": {"role": "assistant", "content": [], "timestamp": 9}},
        {"type": "message", "id": "early", "parentId": "r", "timestamp": "2025-01-01T00:00:02.000Z", "message": {"role": "assistant", "content": [], "timestamp": 2}},
        {"type": "message", "id": "orphan", "parentId": "missing", "timestamp": "2025-01-01T00:00:03.000Z", "message": {"role": "user", "content": "o", "timestamp": 3}},
        {"type": "label", "id": "l1", "parentId": "early", "timestamp": "2025-01-01T00:00:04.000Z", "targetId": "late", "label": "old"},
        {"type": "label", "id": "l2", "parentId": "l1", "timestamp": "2025-01-01T00:00:05.000Z", "targetId": "late", "label": "new"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in [header, *rows]) + "\n")
    store = SessionStore.open(path)
    roots = store.get_tree()
    assert [r.entry.id for r in roots] == ["r", "orphan"]
    assert [c.entry.id for c in roots[0].children] == ["early", "late"]
    assert roots[0].children[1].label == "new"
    # The orphan's path stops at the missing parent.
    assert [m.content for m in store.build_session_context("orphan").messages] == ["o"]


def test_labels_and_session_name(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    u = store.append_message(UserMessage(content="x"))
    store.append_message(_assistant())
    store.append_label(u, "  checkpoint ")
    assert store.get_label(u) == "checkpoint"
    store.append_label(u, None)
    assert store.get_label(u) is None
    store.append_label(u, "again")
    with pytest.raises(KeyError):
        store.append_label("zzzzzzzz", "x")
    assert store.name is None
    store.append_session_info("  First  ")
    store.append_session_info("Second")
    store.append_session_info("")
    assert store.name == "Second"
    reloaded = SessionStore.open(store.session_file)
    assert reloaded.name == "Second"
    assert reloaded.get_label(u) == "again"
    # Labels and session_info never reach the LLM context.
    assert [m.role for m in reloaded.build_session_context().messages] == ["user", "assistant"]


def test_compaction_keeps_entries_from_first_kept_and_everything_after(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    store.append_message(UserMessage(content="old question"))
    store.append_message(_assistant("old answer"))
    kept = store.append_message(UserMessage(content="kept question"))
    store.append_message(_assistant("kept answer"))
    store.append_compaction("summary one", kept, 4000, details={"readFiles": [], "modifiedFiles": []})
    store.append_message(UserMessage(content="after"))
    store.append_message(_assistant("after answer"))
    later_kept = store.get_branch()[-2].id
    store.append_compaction("summary two", later_kept, 6000)
    messages = store.build_session_context().messages
    assert isinstance(messages[0], CompactionSummaryMessage) and messages[0].summary == "summary two"
    assert [getattr(m, "content", None) for m in messages[1:] if m.role == "user"] == ["after"]
    assert len(messages) == 3

    store.branch(store.get_branch()[-2].id)  # before the second compaction: the first one applies
    messages = store.build_session_context().messages
    assert messages[0].summary == "summary one" and messages[0].tokens_before == 4000
    assert [m.role for m in messages] == ["compactionSummary", "user", "assistant", "user", "assistant"]
    assert messages[1].content == "kept question"


def test_unanswered_tool_calls_get_a_synthetic_error_result(tmp_path: Path) -> None:
    """An assistant tool call without a result (crash) is answered right after it, before the next turn."""
    store = SessionStore.create("/p", tmp_path)
    store.append_message(UserMessage(content="go"))
    store.append_message(_assistant("calling", ToolCall(id="c1", name="read"), ToolCall(id="c2", name="bash")))
    store.append_message(_result("c1"))
    store.append_message(UserMessage(content="hello?"))  # c2 never got its result
    store.append_message(_assistant("aborted", ToolCall(id="c3", name="read"), stop="aborted"))
    store.append_message(_assistant("last", ToolCall(id="c4", name="read")))
    messages = SessionStore.open(store.session_file).build_session_context().messages
    assert [(m.role, getattr(m, "tool_call_id", None)) for m in messages] == [
        ("user", None),
        ("assistant", None),
        ("toolResult", "c1"),
        ("toolResult", "c2"),
        ("user", None),
        ("assistant", None),  # aborted: providers drop it, so no synthetic result (it would be an orphan)
        ("assistant", None),
        ("toolResult", "c4"),
    ]
    synthetic = messages[3]
    assert synthetic.is_error and synthetic.tool_name == "bash"
    assert synthetic.content == [TextContent(text=INTERRUPTED_TOOL_CALL_TEXT)]
    assert synthetic.timestamp == messages[1].timestamp
    # Nothing missing: the very same list comes back.
    complete = [UserMessage(content="a"), _assistant("b", ToolCall(id="x", name="t")), _result("x")]
    assert repair_tool_pairing(complete) is complete


def test_results_after_a_custom_message_still_count(tmp_path: Path) -> None:
    from pi_coder.session import CustomMessage

    messages = [
        _assistant("x", ToolCall(id="a", name="t"), ToolCall(id="b", name="t")),
        _result("a"),
        CustomMessage(custom_type="n", content="c"),
        _result("b"),
        UserMessage(content="next"),
    ]
    assert repair_tool_pairing(messages) is messages


def test_torn_last_line_is_ignored_and_next_append_starts_a_fresh_line(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    store.append_message(UserMessage(content="q"))
    last = store.append_message(_assistant("a", ToolCall(id="c1", name="read")))
    path = store.session_file
    with open(path, "ab") as handle:
        handle.write(b'{"type":"message","id":"deadbeef","parentId":"' + last.encode() + b'","mess')
    reopened = SessionStore.open(path)
    assert reopened.torn_tail and reopened.malformed_lines == 0
    assert reopened.leaf_id == last
    new_id = reopened.append_message(_result("c1"))
    raw_lines = path.read_bytes().split(b"\n")
    assert raw_lines[-2].startswith(b'{"type":"message","id":"' + new_id.encode())
    again = SessionStore.open(path)
    assert again.leaf_id == new_id and again.get_entry(new_id).parent_id == last
    assert again.malformed_lines == 1 and not again.torn_tail
    assert [m.role for m in again.build_session_context().messages] == ["user", "assistant", "toolResult"]


def test_malformed_lines_in_the_middle_are_skipped_and_counted(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    u = store.append_message(UserMessage(content="q"))
    a = store.append_message(_assistant())
    path = store.session_file
    lines = path.read_text().splitlines()
    lines.insert(2, "{not json")
    lines.insert(3, "[1, 2]")
    lines.insert(4, json.dumps({"type": "message", "parentId": u}))  # no id
    path.write_text("\n".join(lines) + "\n")
    reopened = SessionStore.open(path)
    assert reopened.malformed_lines == 3
    assert [e.id for e in reopened.get_entries()] == [u, a]


def test_broken_message_payload_does_not_brick_the_session(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    store.append_message(UserMessage(content="q"))
    store.append_message(_assistant())
    path = store.session_file
    bad = {"type": "message", "id": "0badc0de", "parentId": store.leaf_id, "timestamp": "2025-01-01T00:00:00.000Z",
           "message": {"role": "toolResult", "content": 42}}
    with open(path, "a") as handle:
        handle.write(json.dumps(bad) + "\n")
    reopened = SessionStore.open(path)
    assert [m.role for m in reopened.build_session_context().messages] == ["user", "assistant", "toolResult"]
    assert reopened.get_entry("0badc0de").to_json_dict() == bad  # kept verbatim for the round trip


def test_open_missing_empty_and_foreign_files(tmp_path: Path) -> None:
    missing = tmp_path / "explicit.jsonl"
    store = SessionStore.open(missing)
    assert store.session_file == missing and not missing.exists()
    store.append_message(UserMessage(content="q"))
    store.append_message(_assistant())
    assert _lines(missing)[0]["id"] == store.session_id

    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b'{"type":"session","vers')
    store = SessionStore.open(torn)
    store.append_message(UserMessage(content="q"))
    store.append_message(_assistant())
    assert [line["type"] for line in _lines(torn)] == ["session", "message", "message"]

    foreign = tmp_path / "notes.jsonl"
    foreign.write_text('{"hello": "world"}\n')
    with pytest.raises(InvalidSessionFileError, match="Not a session file"):
        SessionStore.open(foreign)


def test_create_branched_session_copies_the_path_and_recreates_labels(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    u1 = store.append_message(UserMessage(content="one"))
    a1 = store.append_message(_assistant("r1"))
    store.append_label(u1, "start")
    u2 = store.append_message(UserMessage(content="two"))
    a2 = store.append_message(_assistant("r2"))
    store.append_label(a2, "off-path")
    old_file, old_id = store.session_file, store.session_id
    old_lines = _lines(old_file)

    new_file = store.create_branched_session(a1)
    assert new_file != old_file and new_file.parent == tmp_path
    assert store.session_file == new_file and store.session_id != old_id
    assert _lines(old_file) == old_lines  # the source is untouched
    lines = _lines(new_file)
    assert lines[0]["parentSession"] == str(old_file) and lines[0]["id"] == store.session_id
    assert [line["id"] for line in lines[1:3]] == [u1, a1]
    assert lines[3]["type"] == "label" and lines[3]["targetId"] == u1 and lines[3]["parentId"] == a1
    assert len(lines) == 4  # the off-path label and entries after a1 are not copied
    assert store.get_label(u1) == "start" and store.get_entry(u2) is None
    store.append_message(UserMessage(content="continue"))
    assert _lines(new_file)[-1]["message"]["content"] == "continue"


def test_create_branched_session_without_messages_stays_lazy(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    store.append_thinking_level_change("high")
    store.append_message(UserMessage(content="one"))
    store.append_message(_assistant("r1"))
    first = store.get_entries()[0].id
    new_file = store.create_branched_session(first)
    assert not new_file.exists()
    store.append_message(UserMessage(content="again"))
    assert [line["type"] for line in _lines(new_file)] == ["session", "thinking_level_change", "message"]


def test_new_session_and_parent(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    store.append_message(UserMessage(content="q"))
    store.append_message(_assistant())
    first = store.session_file
    second = store.new_session(parent_session=str(first))
    assert second != first and store.get_entries() == [] and store.leaf_id is None
    assert store.header.parent_session == str(first)


def test_append_message_accepts_dicts_and_rejects_summaries(tmp_path: Path) -> None:
    store = SessionStore.in_memory("/p")
    entry_id = store.append_message({"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": 1})
    entry = store.get_entry(entry_id)
    assert isinstance(entry, MessageEntry) and isinstance(entry.message, BashExecutionMessage)
    with pytest.raises(ValueError):
        store.append_message(CompactionSummaryMessage(summary="s"))


def test_appended_message_object_is_kept_and_serialised_on_demand(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    message = UserMessage(content="same object")
    entry_id = store.append_message(message)
    entry = store.get_entry(entry_id)
    assert entry.message is message
    assert entry.to_json_dict()["message"] == {"role": "user", "content": "same object", "timestamp": message.timestamp}
    store.append_message(_assistant())  # the first flush serialises the buffered entry again
    assert _lines(store.session_file)[1]["message"]["content"] == "same object"


def test_standalone_build_session_context_defaults_to_last_entry(tmp_path: Path) -> None:
    store = SessionStore.in_memory("/p")
    store.append_message(UserMessage(content="a"))
    store.append_message(_assistant())
    store.reset_leaf()
    store.append_message(UserMessage(content="b"))
    entries = store.get_entries()
    assert [m.content for m in build_session_context(entries).messages] == ["b"]
    assert [m.role for m in build_session_context(entries, entries[1].id).messages] == ["user", "assistant"]
    assert build_session_context(entries, None).messages == []


def test_continue_recent_picks_newest_mtime(tmp_path: Path) -> None:
    a = SessionStore.create("/p", tmp_path)
    a.append_message(UserMessage(content="a"))
    a.append_message(_assistant())
    b = SessionStore.create("/p", tmp_path)
    b.append_message(UserMessage(content="b"))
    b.append_message(_assistant())
    os.utime(b.session_file, (1_000_000, 1_000_000))
    assert SessionStore.continue_recent("/p", tmp_path).session_id == a.session_id
    fresh = SessionStore.continue_recent("/p", tmp_path / "empty")
    assert fresh.get_entries() == [] and not (tmp_path / "empty").exists()


def test_deleted_file_is_written_again_with_its_header(tmp_path: Path) -> None:
    """An append never creates a headerless file: if the file vanished, the whole session is rewritten."""
    store = SessionStore.create("/p", tmp_path)
    store.append_message(UserMessage(content="q"))
    store.append_message(_assistant())
    store.session_file.unlink()
    store.append_message(UserMessage(content="again"))
    lines = _lines(store.session_file)
    assert lines[0]["type"] == "session" and lines[0]["id"] == store.session_id
    assert [line["type"] for line in lines] == ["session", "message", "message", "message"]


def test_load_warnings_describe_damage_and_migration(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    store.append_message(UserMessage(content="q"))
    store.append_message(_assistant())
    assert SessionStore.open(store.session_file).load_warnings() == []
    with open(store.session_file, "ab") as handle:
        handle.write(b"garbage\n{\"type\":")
    notes = SessionStore.open(store.session_file).load_warnings()
    assert len(notes) == 2
    assert notes[0].startswith("Skipped 1 malformed line(s) in ") and "partly written" in notes[1]


def _rewrite(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    lines = _lines(path)
    change(lines)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_an_entry_without_parent_id_is_reported_with_its_line(tmp_path: Path) -> None:
    """A lost ``parentId`` starts a new root (Pi's rule) and the earlier turns drop out of the
    context: say so, naming the line (issue 33). ``parentId: null`` stays a silent root."""
    store = SessionStore.create("/p", tmp_path)
    store.append_message(UserMessage(content="q1"))
    store.append_message(_assistant("a1"))
    store.append_message(UserMessage(content="q2"))
    store.append_message(_assistant("a2"))
    path = store.session_file
    _rewrite(path, lambda lines: lines[3].pop("parentId"))
    reopened = SessionStore.open(path)
    assert [m.content for m in reopened.build_session_context().messages][:1] == ["q2"]
    (note,) = reopened.load_warnings()
    entry_id = _lines(path)[3]["id"]
    assert note.startswith(f"Repaired a damaged session: line 4 of {path}: entry {entry_id} has no parentId")
    assert "starts a new root" in note


def test_a_first_entry_without_parent_id_is_no_damage(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    store.append_message(UserMessage(content="q1"))
    store.append_message(_assistant("a1"))
    _rewrite(store.session_file, lambda lines: lines[1].pop("parentId"))
    assert SessionStore.open(store.session_file).load_warnings() == []


def test_unknown_entry_types_and_a_newer_format_are_said_once(tmp_path: Path) -> None:
    """A session of a future version, or with entry types this pi does not know, loads with one
    note that entries were kept unread (issue 33); they are still written back untouched."""
    store = SessionStore.create("/p", tmp_path)
    store.append_message(UserMessage(content="q1"))
    store.append_message(_assistant("a1"))
    path = store.session_file

    def future(lines: list[dict]) -> None:
        lines[0]["version"] = 9
        tip = lines[-1]["id"]
        for n, kind in enumerate(("hologram", "hologram", "mood")):
            lines.append({"type": kind, "id": f"f{n}", "parentId": tip, "timestamp": "2026-01-01T00:00:00.000Z"})
            tip = f"f{n}"

    _rewrite(path, future)
    notes = SessionStore.open(path).load_warnings()
    assert notes == [
        f"Kept 3 entries of types this pi does not know unread (hologram, mood) in {path}, "
        "written by a newer version (session format v9; this pi reads v3)"
    ]
    _rewrite(path, lambda lines: lines[0].update(version=3))
    assert SessionStore.open(path).load_warnings() == [
        f"Kept 3 entries of types this pi does not know unread (hologram, mood) in {path}"
    ]
    _rewrite(path, lambda lines: (lines[0].update(version=9), lines.__delitem__(slice(3, None))))
    assert SessionStore.open(path).load_warnings() == [
        f"{path} was written by a newer version (session format v9; this pi reads v3): "
        "fields it does not know were kept unread"
    ]


def test_branch_with_summary_moves_the_leaf_and_records_where_it_came_from(tmp_path: Path) -> None:
    store = SessionStore.create("/p", tmp_path)
    u1 = store.append_message(UserMessage(content="one"))
    store.append_message(_assistant("r1"))
    summary_id = store.branch_with_summary(u1, "explored r1", details={"readFiles": ["a"]})
    entry = store.get_entry(summary_id)
    assert (entry.parent_id, entry.from_id, entry.details) == (u1, u1, {"readFiles": ["a"]})
    assert store.leaf_id == summary_id
    assert [m.role for m in store.build_session_context().messages] == ["user", "branchSummary"]
    root_summary = store.branch_with_summary(None, "from the top")
    entry = store.get_entry(root_summary)
    assert (entry.parent_id, entry.from_id) == (None, "root")
    assert [m.role for m in store.build_session_context().messages] == ["branchSummary"]
    store.append_branch_summary("x", "")  # an empty summary adds nothing to the context
    assert [m.role for m in store.build_session_context().messages] == ["branchSummary"]
