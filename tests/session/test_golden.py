"""Pi-format session files (versions 1, 2, 3) load, migrate and rebuild the right context."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pi_coder.ai.types import AssistantMessage, TextContent, ThinkingContent, ToolResultMessage, UserMessage
from pi_coder.session import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    SessionStore,
    UnknownEntry,
    convert_to_llm,
)

GOLDEN = Path(__file__).parent / "golden"


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copyfile(GOLDEN / name, target)
    return target


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_v1_linear_session_migrates_and_rebuilds_with_compaction(tmp_path: Path) -> None:
    """v1 gets ids chained in file order; the compaction index becomes an id; context follows 3.3."""
    path = _copy("v1_linear.jsonl", tmp_path)
    original = path.read_bytes()
    store = SessionStore.open(path)

    assert store.migrated_from == 1
    assert store.backup_path == tmp_path / "v1_linear.jsonl.v1.bak"
    assert store.backup_path.read_bytes() == original
    assert store.session_id == "0b5e2a8c-1d0f-4c3e-9a51-3f1c2d4e5a60"
    assert store.cwd == "/home/u/proj"

    entries = store.get_entries()
    assert len(entries) == 11
    assert entries[0].parent_id is None
    for previous, entry in zip(entries, entries[1:], strict=False):
        assert entry.parent_id == previous.id
        assert len(entry.id) == 8 and int(entry.id, 16) >= 0
    compaction = entries[8]
    assert compaction.type == "compaction"
    assert compaction.first_kept_entry_id == entries[6].id  # the bashExecution line (file index 7)
    assert store.leaf_id == entries[-1].id

    messages, thinking, model = store.build_session_context()
    assert thinking == "low"
    assert model == ("openai", "gpt-4o")  # the last assistant message wins over the model_change
    assert [m.role for m in messages] == ["compactionSummary", "bashExecution", "user", "user", "assistant"]
    summary = messages[0]
    assert isinstance(summary, CompactionSummaryMessage)
    assert summary.summary == "## Goal\nList the files."
    assert summary.tokens_before == 5000
    assert summary.timestamp == 1736499607000
    bash = messages[1]
    assert isinstance(bash, BashExecutionMessage)
    assert (bash.command, bash.exit_code, bash.truncated) == ("git status", 1, True)
    assert messages[2] == UserMessage(content=[TextContent(text="Now read the README")], timestamp=1736499606000)
    assert messages[3] == UserMessage(content="thanks", timestamp=1736499608000)
    assert isinstance(messages[4], AssistantMessage) and messages[4].text() == "You're welcome."

    llm = convert_to_llm(messages)
    assert [m.role for m in llm] == ["user", "user", "user", "user", "assistant"]
    assert llm[0].content[0].text == COMPACTION_SUMMARY_PREFIX + "## Goal\nList the files.\n</summary>"
    assert llm[1].content[0].text == (
        "Ran `git status`\n```\nOn branch main\nnothing to commit\n```\n\nCommand exited with code 1"
        "\n\n[Output truncated. Full output: /tmp/pi-bash-1.log]"
    )

    # The file on disk is now version 3 and loads again to the same context, without migration.
    lines = _lines(path)
    assert lines[0] == {
        "type": "session",
        "version": 3,
        "id": "0b5e2a8c-1d0f-4c3e-9a51-3f1c2d4e5a60",
        "timestamp": "2025-01-10T09:00:00.000Z",
        "cwd": "/home/u/proj",
    }
    assert "firstKeptEntryIndex" not in lines[9] and lines[9]["firstKeptEntryId"] == entries[6].id
    assert [line["id"] for line in lines[1:]] == [entry.id for entry in entries]
    reopened = SessionStore.open(path)
    assert reopened.migrated_from is None
    assert reopened.build_session_context() == store.build_session_context()
    assert (path.stat().st_mode & 0o777) == 0o600
    assert (store.backup_path.stat().st_mode & 0o777) == 0o600


def test_v2_hook_message_becomes_custom(tmp_path: Path) -> None:
    """v2 -> v3 renames role hookMessage to custom, in memory and in the rewritten file."""
    path = _copy("v2_hook.jsonl", tmp_path)
    store = SessionStore.open(path)
    assert store.migrated_from == 2
    assert (tmp_path / "v2_hook.jsonl.v2.bak").exists()
    messages, thinking, model = store.build_session_context()
    assert thinking == "off"
    assert model == ("anthropic", "claude-haiku-4-5")
    assert [m.role for m in messages] == ["user", "custom", "assistant"]
    custom = messages[1]
    assert isinstance(custom, CustomMessage)
    assert custom.custom_type == "git-status"
    assert custom.details == {"files": 2}
    assert convert_to_llm(messages)[1] == UserMessage(
        content=[TextContent(text="Working tree is dirty")], timestamp=1740916802000
    )
    lines = _lines(path)
    assert lines[0]["version"] == 3
    assert lines[2]["message"]["role"] == "custom"
    assert [line["id"] for line in lines[1:]] == ["1a2b3c4d", "2b3c4d5e", "3c4d5e6f"]


def test_v3_branched_session_context_tree_labels_and_name(tmp_path: Path) -> None:
    """A v3 file loads unchanged; leaf = last line; branch summaries and custom messages join the context."""
    path = _copy("v3_branched.jsonl", tmp_path)
    before = path.read_bytes()
    store = SessionStore.open(path)
    assert store.migrated_from is None
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]  # no backup for a current file

    assert store.leaf_id == "b000000b"
    assert store.name == "Haiku work"
    assert store.get_label("a0000004") is None  # set, then cleared by a later label entry
    assert store.get_label("b0000006") == "snow"
    unknown = store.get_entry("b0000009")
    assert isinstance(unknown, UnknownEntry) and unknown.type == "future_thing"

    messages, thinking, model = store.build_session_context()
    assert thinking == "high"
    assert model == ("openai", "gpt-4o")
    assert [m.role for m in messages] == ["user", "assistant", "branchSummary", "custom", "user", "assistant"]
    assert isinstance(messages[1].content[0], ThinkingContent)
    assert messages[1].content[0].thinking_signature == "sig-1"
    branch = messages[2]
    assert isinstance(branch, BranchSummaryMessage)
    assert branch.from_id == "a0000007"
    assert branch.timestamp == 1748764860000
    custom = messages[3]
    assert isinstance(custom, CustomMessage)
    assert (custom.custom_type, custom.content, custom.display) == ("reminder", "Keep it short.", True)
    assert custom.details == {"source": "ext"}
    llm = convert_to_llm(messages)
    assert llm[2].content[0].text == (
        BRANCH_SUMMARY_PREFIX + "The user asked for a rain haiku and got one.</summary>"
    )
    assert llm[3].content == [TextContent(text="Keep it short.")]

    old = store.build_session_context("a0000006")
    assert [m.role for m in old.messages] == ["user", "assistant", "user", "assistant"]
    assert old.thinking_level == "medium"
    assert old.model == ("anthropic", "claude-sonnet-4-5")

    roots = store.get_tree()
    assert [root.entry.id for root in roots] == ["a0000001"]
    node = roots[0]
    while node.entry.id != "a0000004":
        (node,) = node.children
    assert [child.entry.id for child in node.children] == ["a0000005", "b0000001"]
    assert node.label is None


def test_files_written_here_keep_pis_shape_and_round_trip(tmp_path: Path) -> None:
    """Every entry type is written with Pi's key names, and reloads to the same dicts and context."""
    store = SessionStore.create("/home/u/proj", tmp_path)
    store.append_model_change("anthropic", "claude-sonnet-4-5")
    store.append_thinking_level_change("medium")
    user_id = store.append_message(UserMessage(content="hi", timestamp=1))
    store.append_message(
        AssistantMessage(content=[TextContent(text="hello")], provider="anthropic", model="m", timestamp=2)
    )
    store.append_message(
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="x")], timestamp=3)
    )
    store.append_message(BashExecutionMessage(command="ls", output="a", exit_code=None, cancelled=True, timestamp=4))
    store.append_custom_message("note", [TextContent(text="n")], display=False, details={"k": 1})
    store.append_custom("ext", {"state": 1})
    store.append_label(user_id, "start")
    store.append_label(user_id, None)
    store.append_session_info(" Name ")
    store.append_branch_summary("root", "went elsewhere", details={"readFiles": []})
    store.append_compaction("sum", user_id, 1234, details={"readFiles": ["a"], "modifiedFiles": []})

    lines = _lines(store.session_file)
    assert set(lines[0]) == {"type", "version", "id", "timestamp", "cwd"}
    assert lines[0]["version"] == 3
    common = {"type", "id", "parentId", "timestamp"}
    expected = {
        "model_change": {"provider", "modelId"},
        "thinking_level_change": {"thinkingLevel"},
        "custom_message": {"customType", "content", "display", "details"},
        "custom": {"customType", "data"},
        "session_info": {"name"},
        "branch_summary": {"fromId", "summary", "details"},
        "compaction": {"summary", "firstKeptEntryId", "tokensBefore", "details"},
    }
    for line in lines[1:]:
        if line["type"] in expected:
            assert set(line) == common | expected[line["type"]], line
    labels = [line for line in lines if line["type"] == "label"]
    assert set(labels[0]) == common | {"targetId", "label"}
    assert set(labels[1]) == common | {"targetId"}  # cleared: no label key, like Pi's undefined
    messages = [line["message"] for line in lines if line["type"] == "message"]
    assert messages[0] == {"role": "user", "content": "hi", "timestamp": 1}
    assert set(messages[1]) == {"role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"}
    assert set(messages[1]["usage"]) == {"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}
    assert messages[2]["toolCallId"] == "c1" and messages[2]["isError"] is False
    assert messages[3] == {
        "role": "bashExecution",
        "command": "ls",
        "output": "a",
        "cancelled": True,
        "truncated": False,
        "timestamp": 4,
    }
    assert lines[-1]["parentId"] == lines[-2]["id"]
    assert lines[-3]["name"] == "Name"

    reopened = SessionStore.open(store.session_file)
    assert [entry.to_json_dict() for entry in reopened.get_entries()] == lines[1:]
    assert reopened.build_session_context() == store.build_session_context()
    assert reopened.name == "Name"


@pytest.mark.parametrize("name", ["v1_linear.jsonl", "v2_hook.jsonl", "v3_branched.jsonl"])
def test_fork_from_copies_entries_verbatim(tmp_path: Path, name: str) -> None:
    """fork_from writes a new file for the target cwd; entries (unknown ones too) are copied as they are."""
    source = _copy(name, tmp_path)
    source_bytes = source.read_bytes()
    forked = SessionStore.fork_from(source, "/home/u/elsewhere", tmp_path / "fork")
    assert source.read_bytes() == source_bytes  # the source is never migrated in place by a fork
    assert forked.session_file.parent == tmp_path / "fork"
    header = _lines(forked.session_file)[0]
    assert header["cwd"] == "/home/u/elsewhere"
    assert header["parentSession"] == str(source)
    assert header["id"] != json.loads(source_bytes.splitlines()[0])["id"]
    assert forked.cwd == "/home/u/elsewhere"
    original = SessionStore.open(source)
    assert forked.build_session_context() == original.build_session_context()
    if name == "v3_branched.jsonl":
        assert _lines(forked.session_file)[1:] == _lines(source)[1:]
