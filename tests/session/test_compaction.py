"""Compaction's pure parts: token estimates, cut point, preparation, file lists, serialisation."""

from __future__ import annotations

import math

from pi_coder.ai.types import ImageContent, ThinkingContent, Usage
from pi_coder.session.compaction import (
    ALREADY_COMPACTED,
    NOTHING_TO_COMPACT,
    TOOL_RESULT_MAX_CHARS,
    FileOperations,
    find_cut_point,
    format_file_operations,
    nothing_to_compact_reason,
    prepare_compaction,
    serialize_conversation,
    strip_generated_sections,
)
from pi_coder.session.messages import BashExecutionMessage, CompactionSummaryMessage, parse_agent_message
from pi_coder.session.tokens import (
    IMAGE_CHARS,
    effective_reserve_tokens,
    estimate_context_tokens,
    estimate_tokens,
    should_compact,
)
from tests.session._compaction_support import assistant, build_store, call, result, user, words

# ---------------------------------------------------------------------------- token estimates


def test_estimate_counts_text_thinking_tool_calls_images_bash_and_summaries() -> None:
    """Each message counts ceil(chars / 4) of what it sends; an image counts 4800 characters."""
    assert estimate_tokens(user("abcde")) == 2
    message = assistant("hello")
    message.content.insert(0, ThinkingContent(thinking="think"))
    message.content.append(call("read", "c1", path="a.py"))
    args = '{"path":"a.py"}'
    assert estimate_tokens(message) == math.ceil((5 + 5 + len("read") + len(args)) / 4)
    image = user("")
    image.content = [ImageContent(data="xx", mime_type="image/png")]
    assert estimate_tokens(image) == IMAGE_CHARS // 4
    assert estimate_tokens(BashExecutionMessage(command="ls", output="a\nb")) == 2
    assert estimate_tokens(CompactionSummaryMessage(summary="x" * 9)) == 3
    # Messages read from JSON count the same once parsed; an unknown role counts its content.
    assert estimate_tokens(parse_agent_message({"role": "user", "content": "abcdefgh"})) == 2
    assert estimate_tokens(parse_agent_message({"role": "note", "content": [{"type": "text", "text": "abcdefgh"}]})) == 2


def test_context_estimate_uses_last_good_usage_plus_trailing_messages() -> None:
    """Usage of the last non-failed reply is the base; later messages are estimated."""
    good = assistant("ok", usage=Usage(input=1000, output=50, total_tokens=1050))
    failed = assistant("", usage=Usage(input=5000, total_tokens=5000), stop_reason="error")
    estimate = estimate_context_tokens([user("hi"), good, user("x" * 40), failed])
    assert estimate.usage_tokens == 1050
    assert estimate.trailing_tokens == 10
    assert estimate.tokens == 1060
    assert estimate.last_usage_index == 1


def test_context_estimate_ignores_usage_from_before_a_compaction() -> None:
    """Kept replies come after the summary but are older: their usage describes the old context."""
    old = assistant("kept", usage=Usage(input=90_000, total_tokens=90_000))
    summary = CompactionSummaryMessage(summary="s" * 400, timestamp=old.timestamp + 1000)
    estimate = estimate_context_tokens([summary, user("q" * 40), old])
    assert estimate.last_usage_index is None
    assert estimate.tokens == 100 + 10 + 1


def test_threshold_and_reserve_clamp() -> None:
    """Compaction starts past window - reserve; the reserve never exceeds half the window."""
    assert should_compact(200_001 - 16_384, 200_000, 16_384)
    assert not should_compact(200_000 - 16_384, 200_000, 16_384)
    assert effective_reserve_tokens(8192, 16_384) == 4096
    assert not should_compact(4000, 8192, 16_384)
    assert should_compact(4097, 8192, 16_384)
    assert not should_compact(10**9, 0, 16_384)


# ---------------------------------------------------------------------------- cut point


def _turns(n: int, size: int = 100) -> list:
    """n turns: user, assistant calling read, tool result, assistant answer; each ~size tokens."""
    out = []
    for i in range(n):
        out += [
            user(words(size, f"u{i}")),
            assistant("", call("read", f"c{i}", path=f"f{i}.py")),
            result(f"c{i}", words(size, f"r{i}")),
            assistant(words(size, f"a{i}")),
        ]
    return out


def test_cut_point_never_lands_on_a_tool_result() -> None:
    """Whatever the budget, the first kept entry is not a tool result."""
    store, ids = build_store(*_turns(4))
    branch = store.get_branch()
    for keep in range(1, 900, 7):
        cut = find_cut_point(branch, 0, len(branch), keep)
        first = branch[cut.first_kept_index]
        assert first.role != "toolResult", keep


def test_cut_at_user_message_is_not_a_split_turn() -> None:
    store, ids = build_store(*_turns(4))
    branch = store.get_branch()
    # Walking back over the last turn: answer 100, result 100, call ~6, user 100: the target
    # of 250 is reached at the user message.
    cut = find_cut_point(branch, 0, len(branch), 250)
    assert branch[cut.first_kept_index].id == ids[12]
    assert not cut.is_split_turn and cut.turn_start_index == -1


def test_cut_inside_a_turn_is_a_split_turn_with_its_start() -> None:
    """Reaching the tool result picks the next cut point (the answer) and marks the turn split."""
    store, ids = build_store(*_turns(4))
    branch = store.get_branch()
    cut = find_cut_point(branch, 0, len(branch), 150)
    assert branch[cut.first_kept_index].id == ids[15]  # the final answer of the last turn
    assert cut.is_split_turn
    assert branch[cut.turn_start_index].id == ids[12]  # that turn's user message


def test_huge_tool_result_at_the_end_cuts_at_its_call() -> None:
    """With no cut point after the budget is reached, the nearest one before is used."""
    store, ids = build_store(*_turns(2), user("go"), assistant("", call("read", "cx", path="big")), result("cx", words(5000)))
    branch = store.get_branch()
    cut = find_cut_point(branch, 0, len(branch), 1000)
    assert branch[cut.first_kept_index].id == ids[9]
    assert cut.is_split_turn and branch[cut.turn_start_index].id == ids[8]


def test_cut_moves_back_over_bookkeeping_entries() -> None:
    """Model and thinking changes right before the cut stay with the kept part."""
    store, ids = build_store(*_turns(2))
    store.append_model_change("faux", "faux-2")
    store.append_thinking_level_change("high")
    kept_ids = [store.append_message(m) for m in _turns(1)]
    branch = store.get_branch()
    cut = find_cut_point(branch, 0, len(branch), 300)
    assert branch[cut.first_kept_index].type == "model_change"
    assert not cut.is_split_turn
    assert branch[cut.first_kept_index + 2].id == kept_ids[0]


# ---------------------------------------------------------------------------- preparation


def test_prepare_splits_history_and_gathers_file_operations() -> None:
    store, ids = build_store(*_turns(4))
    store.append_message(assistant("", call("edit", "e1", path="f0.py"), call("write", "w1", path="new.py")))
    store.append_message(result("e1", "ok", "edit"))
    store.append_message(result("w1", "ok", "write"))
    store.append_message(assistant("done"))
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    assert prep is not None
    assert not prep.is_split_turn
    assert prep.first_kept_entry_id == ids[12]
    assert [m.role for m in prep.messages_to_summarize] == ["user", "assistant", "toolResult", "assistant"] * 3
    assert prep.previous_summary is None and prep.latest_request is None
    read, modified = prep.file_ops.file_lists()
    # Only the summarised part counts: f0.py is edited in the kept part, which stays verbatim.
    assert read == ["f0.py", "f1.py", "f2.py"]
    assert modified == []
    assert prep.estimated_before > sum(1 for _ in prep.kept_messages)


def test_prepare_split_turn_keeps_latest_request_verbatim() -> None:
    request = "Please refactor module X and keep the API stable."
    store, ids = build_store(*_turns(2), user(request))
    for i in range(6):
        store.append_message(assistant("", call("read", f"k{i}", path=f"k{i}.py")))
        store.append_message(result(f"k{i}", words(100)))
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    assert prep is not None and prep.is_split_turn
    assert prep.turn_prefix_messages[0].role == "user"
    assert prep.latest_request == request
    assert [m.role for m in prep.messages_to_summarize][-1] == "assistant"
    assert "k0.py" in prep.file_ops.file_lists()[0]


def test_prepare_returns_none_when_already_compacted_or_too_small() -> None:
    store, ids = build_store(user("hi"), assistant("hello"))
    branch = store.get_branch()
    assert prepare_compaction(branch, keep_recent_tokens=20_000) is None
    assert nothing_to_compact_reason(branch) == NOTHING_TO_COMPACT
    store.append_compaction("sum", ids[0], 10)
    branch = store.get_branch()
    assert prepare_compaction(branch, keep_recent_tokens=1) is None
    assert nothing_to_compact_reason(branch) == ALREADY_COMPACTED


def test_second_compaction_summarises_what_the_first_one_kept() -> None:
    """History kept by the previous compaction is not dropped: it is in the new summary's input."""
    store, ids = build_store(*_turns(3))
    store.append_compaction(
        "PREVIOUS\n\n<read-files>\nold.py\n</read-files>",
        ids[8],
        5000,
        details={"readFiles": ["old.py"], "modifiedFiles": ["gone.py"]},
    )
    later = [store.append_message(m) for m in _turns(3)]
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    assert prep is not None
    assert prep.previous_summary.startswith("PREVIOUS")
    summarized_texts = [getattr(m, "content", None) for m in prep.messages_to_summarize]
    assert prep.messages_to_summarize[0].role == "user"
    assert summarized_texts[0][0].text.startswith("u2")  # the first kept turn of the old compaction
    assert prep.first_kept_entry_id == later[8]
    read, modified = prep.file_ops.file_lists()
    assert "old.py" in read and modified == ["gone.py"]


# ---------------------------------------------------------------------------- file lists, text


def test_file_lists_merge_and_exclude_modified_from_read() -> None:
    ops = FileOperations()
    ops.add_message(assistant("", call("read", "1", path="b.py"), call("read", "2", path="a.py")))
    ops.add_message(assistant("", call("edit", "3", path="b.py"), call("write", "4", path="c.py")))
    ops.add_message(assistant("", call("bash", "5", command="cat z"), call("read", "6", file="ignored")))
    ops.add_details({"readFiles": ["d.py"], "modifiedFiles": ["e.py"], "other": 1})
    assert ops.file_lists() == (["a.py", "d.py"], ["b.py", "c.py", "e.py"])
    assert ops.details() == {"readFiles": ["a.py", "d.py"], "modifiedFiles": ["b.py", "c.py", "e.py"]}
    text = format_file_operations(*ops.file_lists())
    assert text == (
        "\n\n<read-files>\na.py\nd.py\n</read-files>\n\n<modified-files>\nb.py\nc.py\ne.py\n</modified-files>"
    )
    assert format_file_operations([], []) == ""
    assert strip_generated_sections("S" + text + "\n\n<latest-user-request>\nq\n</latest-user-request>") == "S"


def test_serialize_conversation_format() -> None:
    """Plain labelled lines, tool results cut at 2000 characters, summaries as user text."""
    thinking = assistant("answer", call("read", "c1", path="a.py", limit=5))
    thinking.content.insert(0, ThinkingContent(thinking="hmm"))
    long_result = result("c1", "z" * (TOOL_RESULT_MAX_CHARS + 10))
    text = serialize_conversation(
        [
            user("question"),
            thinking,
            long_result,
            BashExecutionMessage(command="ls", output="a.py", exit_code=0),
            CompactionSummaryMessage(summary="old stuff"),
        ]
    )
    parts = text.split("\n\n")
    assert parts[0] == "[User]: question"
    assert parts[1] == "[Assistant thinking]: hmm"
    assert parts[2] == "[Assistant]: answer"
    assert parts[3] == '[Assistant tool calls]: read(path="a.py", limit=5)'
    assert parts[4] == "[Tool result]: " + "z" * TOOL_RESULT_MAX_CHARS
    assert parts[5] == "[... 10 more characters truncated]"
    assert parts[6] == "[User]: Ran `ls`\n```\na.py\n```"
    assert "old stuff" in text and "<summary>" in text
