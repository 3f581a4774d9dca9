"""compact(): summary requests through an injected faux stream, checks, and the stored entry."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pi_coder.ai.abort import AbortController
from pi_coder.ai.providers.faux import faux_message, faux_provider
from pi_coder.session.compaction import (
    SUMMARIZATION_PROMPT,
    TURN_PREFIX_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
    CompactionCancelled,
    CompactionError,
    compact,
    prepare_compaction,
)
from pi_coder.session.messages import CompactionSummaryMessage
from pi_coder.session.store import SessionStore
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


def _lines(path: Path | None) -> list[dict]:
    return [json.loads(raw) for raw in Path(path).read_text().splitlines()]


def _turns(n: int, size: int = 100, start: int = 0) -> list:
    out = []
    for i in range(start, start + n):
        out += [
            user(words(size, f"u{i}")),
            assistant("", call("read", f"c{i}", path=f"f{i}.py")),
            result(f"c{i}", words(size, f"r{i}")),
            assistant(words(size, f"a{i}")),
        ]
    return out


async def test_summary_request_shape_and_result() -> None:
    """One request: system prompt, <conversation>, the initial prompt, custom focus; file lists appended."""
    store, ids = build_store(*_turns(4))
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    faux = faux_provider(["## Goal\nShort summary"])
    out = await compact(
        prep, model=faux.model, stream_fn=faux.stream_response, reserve_tokens=10_000, custom_instructions="the tests"
    )
    assert faux.state.call_count == 1
    context = faux.state.contexts[0]
    assert is_summary_request(context)
    text = prompt_text(context)
    assert text.startswith("<conversation>\n[User]: u0")
    assert "</conversation>\n\n" + SUMMARIZATION_PROMPT in text
    assert text.endswith("Additional focus: the tests")
    assert "<previous-summary>" not in text
    assert out.summary == "## Goal\nShort summary\n\n<read-files>\nf0.py\nf1.py\nf2.py\n</read-files>"
    assert out.first_kept_entry_id == ids[12]
    assert out.details == {"readFiles": ["f0.py", "f1.py", "f2.py"], "modifiedFiles": []}
    assert out.tokens_before == prep.tokens_before > 0
    assert out.estimated_after < prep.estimated_before
    assert out.usage is not None  # the faux model reports zeros; summed usage: tests/modes/test_rpc_pi16.py
    assert out.to_json_dict() == {
        "summary": out.summary,
        "firstKeptEntryId": ids[12],
        "tokensBefore": out.tokens_before,
        "details": out.details,
        "estimatedTokensAfter": out.estimated_after,
        "usage": out.usage.to_json_dict(),
    }


async def test_max_tokens_is_eighty_percent_of_reserve_and_capped_by_model() -> None:
    seen = []

    def reply(context, options, state, model):
        seen.append(options.max_tokens)
        return "summary"

    store, _ = build_store(*_turns(4))
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    faux = faux_provider([reply, reply], max_tokens=100_000)
    await compact(prep, model=faux.model, stream_fn=faux.stream_response, reserve_tokens=10_000)
    small = faux_provider([reply], max_tokens=500)
    await compact(prep, model=small.model, stream_fn=small.stream_response, reserve_tokens=10_000)
    assert seen == [8000, 500]


async def test_update_uses_previous_summary_without_generated_sections() -> None:
    store, ids = build_store(*_turns(3))
    store.append_compaction(
        "OLD SUMMARY\n\n<latest-user-request>\nold ask\n</latest-user-request>\n\n<read-files>\nx.py\n</read-files>",
        ids[8],
        3000,
        details={"readFiles": ["x.py"], "modifiedFiles": []},
    )
    for m in _turns(3, start=3):
        store.append_message(m)
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    faux = faux_provider(["NEW SUMMARY"])
    out = await compact(prep, model=faux.model, stream_fn=faux.stream_response, reserve_tokens=10_000)
    text = prompt_text(faux.state.contexts[0])
    assert "<previous-summary>\nOLD SUMMARY\n</previous-summary>" in text
    assert text.endswith(UPDATE_SUMMARIZATION_PROMPT)
    assert "[User]: u2" in text  # kept by the first compaction, summarised now
    assert out.summary.startswith("NEW SUMMARY\n\n<read-files>\n")
    assert "x.py" in out.summary and out.summary.count("<read-files>") == 1


async def test_split_turn_makes_two_requests_and_keeps_the_request_verbatim() -> None:
    request = "Rename foo() to bar() everywhere, then run the tests."
    store, _ = build_store(*_turns(2), user(request))
    for i in range(6):
        store.append_message(assistant("", call("read", f"k{i}", path=f"k{i}.py")))
        store.append_message(result(f"k{i}", words(100)))
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    assert prep.is_split_turn

    def reply(context, options, state, model):
        text = prompt_text(context)
        return "PREFIX" if text.endswith(TURN_PREFIX_PROMPT) else "HISTORY"

    faux = faux_provider([reply, reply])
    out = await compact(prep, model=faux.model, stream_fn=faux.stream_response, reserve_tokens=10_000)
    assert faux.state.call_count == 2
    prefix_prompt = next(prompt_text(c) for c in faux.state.contexts if prompt_text(c).endswith(TURN_PREFIX_PROMPT))
    assert f"[User]: {request}" in prefix_prompt
    assert out.summary.startswith("HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX")
    assert f"<latest-user-request>\n{request}\n</latest-user-request>" in out.summary


async def test_summary_that_does_not_shrink_the_context_fails() -> None:
    store, _ = build_store(*_turns(4))
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    faux = faux_provider([words(5000)])
    with pytest.raises(CompactionError, match="would not reduce the context"):
        await compact(prep, model=faux.model, stream_fn=faux.stream_response, reserve_tokens=10_000)


async def test_failed_or_empty_summary_request_raises() -> None:
    store, _ = build_store(*_turns(4))
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    faux = faux_provider([faux_message(stop_reason="error", error_message="503 overloaded"), "   "])
    with pytest.raises(CompactionError, match="Summarization failed: 503 overloaded"):
        await compact(prep, model=faux.model, stream_fn=faux.stream_response, reserve_tokens=10_000)
    with pytest.raises(CompactionError, match="no text"):
        await compact(prep, model=faux.model, stream_fn=faux.stream_response, reserve_tokens=10_000)


async def test_abort_ends_a_hanging_request_at_once() -> None:
    """Even a stream that ignores the signal: the wait ends and CompactionCancelled is raised."""
    store, _ = build_store(*_turns(4))
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    started = asyncio.Event()

    async def hang(context, options, state, model):
        started.set()
        await asyncio.sleep(30)
        return "late"

    faux = faux_provider([hang])
    controller = AbortController()
    task = asyncio.create_task(
        compact(prep, model=faux.model, stream_fn=faux.stream_response, reserve_tokens=10_000, signal=controller.signal)
    )
    await asyncio.wait_for(started.wait(), 30)
    controller.abort()
    with pytest.raises(CompactionCancelled):
        await asyncio.wait_for(task, 30)


async def test_compaction_entry_round_trips_in_pis_shape(tmp_path: Path) -> None:
    """Appended, written, reloaded: Pi's fields, and the context is summary + kept messages."""
    store = SessionStore.create(str(tmp_path), tmp_path / "sessions")
    _, ids = build_store(*_turns(4), store=store)
    prep = prepare_compaction(store.get_branch(), keep_recent_tokens=250)
    faux = faux_provider(["## Goal\nDone"])
    out = await compact(prep, model=faux.model, stream_fn=faux.stream_response, reserve_tokens=10_000)
    entry_id = store.append_compaction(out.summary, out.first_kept_entry_id, out.tokens_before, out.details)
    store.append_message(user("next"))

    line = next(raw for raw in _lines(store.session_file) if raw["type"] == "compaction")
    assert set(line) == {"type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "details"}
    assert line["id"] == entry_id and line["firstKeptEntryId"] == ids[12]
    assert isinstance(line["tokensBefore"], int)
    assert line["details"] == {"readFiles": ["f0.py", "f1.py", "f2.py"], "modifiedFiles": []}

    reopened = SessionStore.open(store.session_file)
    messages = reopened.build_session_context().messages
    assert isinstance(messages[0], CompactionSummaryMessage) and messages[0].summary == out.summary
    assert [m.role for m in messages[1:]] == ["user", "assistant", "toolResult", "assistant", "user"]
    assert messages[1].content[0].text.startswith("u3")
