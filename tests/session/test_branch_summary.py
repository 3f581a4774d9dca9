"""Branch summaries (pi-product 4.6): the abandoned entries, the budget, the request, the result."""

from __future__ import annotations

from pi_coder.ai.providers.faux import faux_provider
from pi_coder.session.branch_summary import (
    BRANCH_SUMMARY_MAX_TOKENS,
    BRANCH_SUMMARY_PREAMBLE,
    NO_CONTENT_SUMMARY,
    branch_token_budget,
    collect_branch_entries,
    generate_branch_summary,
    prepare_branch_entries,
)
from pi_coder.session.compaction import BRANCH_SUMMARY_PROMPT
from pi_coder.session.messages import BranchSummaryMessage, CompactionSummaryMessage
from tests.session._compaction_support import (
    assistant,
    build_store,
    call,
    is_summary_request,
    prompt_text,
    result,
    user,
    words,
)


def _tree():
    """root: u1 a1 u2 a2(tool) r2 a2b | branch from a1: u3 a3."""
    store, ids = build_store(
        user("u1"),
        assistant("a1"),
        user("u2 try approach A"),
        assistant("", call("edit", "e1", path="src/a.py")),
        result("e1", "edited", "edit"),
        assistant("approach A failed"),
    )
    store.branch(ids[1])
    side = [store.append_message(m) for m in (user("u3"), assistant("a3"))]
    return store, ids, side


def test_collect_stops_at_the_deepest_common_ancestor() -> None:
    store, ids, side = _tree()
    branch = collect_branch_entries(store, ids[5], side[1])
    assert branch.common_ancestor_id == ids[1]
    assert [e.id for e in branch.entries] == ids[2:6]
    # Going back to an ancestor on the same path abandons what follows it.
    back = collect_branch_entries(store, ids[5], ids[3])
    assert [e.id for e in back.entries] == ids[4:6]
    # Moving forward from an ancestor abandons nothing.
    assert collect_branch_entries(store, ids[1], ids[5]).entries == []
    # To before the root: everything.
    assert [e.id for e in collect_branch_entries(store, ids[5], None).entries] == ids


def test_prepare_newest_first_within_budget_without_tool_results() -> None:
    store, ids = build_store(user(words(100, "old")), assistant(words(100)), user(words(100, "new")), assistant(words(100)))
    store.append_message(assistant("", call("write", "w", path="out.txt")))
    store.append_message(result("w", words(500), "write"))
    entries = store.get_branch()
    prep = prepare_branch_entries(entries, token_budget=250)
    roles = [m.role for m in prep.messages]
    assert "toolResult" not in roles
    assert prep.messages[0].content[0].text.startswith("new")  # the oldest messages did not fit
    assert prep.total_tokens <= 250
    assert prep.file_ops.file_lists() == ([], ["out.txt"])
    assert len(prepare_branch_entries(entries).messages) == 5  # no budget: everything but the result


def test_prepare_lets_a_summary_squeeze_in_and_merges_nested_details() -> None:
    store, ids = build_store(user("start"))
    store.append_compaction(words(300), ids[0], 9000, details={"readFiles": ["r.py"], "modifiedFiles": ["m.py"]})
    store.append_branch_summary(ids[0], "earlier branch", details={"readFiles": [], "modifiedFiles": ["n.py"]})
    store.append_message(user(words(100)))
    entries = store.get_branch()[1:]
    prep = prepare_branch_entries(entries, token_budget=350)
    assert isinstance(prep.messages[0], CompactionSummaryMessage)  # 300 more than the budget left, but < 90% used
    assert isinstance(prep.messages[1], BranchSummaryMessage)
    assert prep.file_ops.file_lists() == (["r.py"], ["m.py", "n.py"])


def test_budget_is_window_minus_reserve() -> None:
    assert branch_token_budget(200_000, 16_384) == 183_616
    assert branch_token_budget(0, 16_384) == 128_000 - 16_384


async def test_generate_summary_request_and_result() -> None:
    store, ids, side = _tree()
    entries = collect_branch_entries(store, ids[5], side[1]).entries
    seen = []

    def reply(context, options, state, model):
        seen.append(options.max_tokens)
        return "## Goal\nApproach A"

    faux = faux_provider([reply])
    summary = await generate_branch_summary(
        entries, model=faux.model, stream_fn=faux.stream_response, reserve_tokens=16_384, custom_instructions="why A failed"
    )
    context = faux.state.contexts[0]
    assert is_summary_request(context)
    text = prompt_text(context)
    assert "[User]: u2 try approach A" in text and "[Tool result]" not in text
    assert '[Assistant tool calls]: edit(path="src/a.py")' in text
    assert text.endswith(BRANCH_SUMMARY_PROMPT + "\n\nAdditional focus: why A failed")
    assert seen == [BRANCH_SUMMARY_MAX_TOKENS]
    assert summary.summary == BRANCH_SUMMARY_PREAMBLE + "## Goal\nApproach A\n\n<modified-files>\nsrc/a.py\n</modified-files>"
    assert summary.details == {"readFiles": [], "modifiedFiles": ["src/a.py"]}


async def test_replace_instructions_and_no_content() -> None:
    store, ids, side = _tree()
    faux = faux_provider(["custom"])
    entries = collect_branch_entries(store, ids[5], side[1]).entries
    await generate_branch_summary(
        entries,
        model=faux.model,
        stream_fn=faux.stream_response,
        reserve_tokens=1000,
        custom_instructions="Only list the files.",
        replace_instructions=True,
    )
    assert prompt_text(faux.state.contexts[0]).endswith("</conversation>\n\nOnly list the files.")
    empty = await generate_branch_summary([], model=faux.model, stream_fn=faux.stream_response, reserve_tokens=1000)
    assert empty.summary == NO_CONTENT_SUMMARY and empty.details is None
    assert faux.state.call_count == 1
