"""Compaction and branch summaries through AgentSession: faux provider, real session files."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pi_coder.agent import AgentTool, AgentToolResult
from pi_coder.ai.types import TextContent, Usage
from pi_coder.core.compaction_runner import OVERFLOW_DISABLED, OVERFLOW_RECOVERY_FAILED
from pi_coder.core.events import AutoCompactionEnd, AutoCompactionStart, Notice
from pi_coder.session.compaction import (
    SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_PROMPT,
    CompactionError,
)
from pi_coder.session.messages import COMPACTION_SUMMARY_PREFIX, CompactionSummaryMessage
from pi_coder.session.store import SessionStore
from tests.core._agent_session_support import (
    faux_message,
    faux_provider,
    make_models,
    make_session,
    read_lines,
    texts,
)
from tests.session._compaction_support import words

OVERFLOW = "prompt is too long: 250000 tokens > 200000 maximum"


def _settings(cwd: Path, text: str) -> None:
    (cwd / ".pi").mkdir(exist_ok=True)
    (cwd / ".pi" / "settings.toml").write_text(text)


@pytest.fixture(autouse=True)
def _compaction_settings(cwd: Path) -> None:
    """Small compaction budgets and fast retries in every test of this file."""
    _settings(
        cwd,
        "[compaction]\nreserve_tokens = 2000\nkeep_recent_tokens = 300\n"
        "[retry]\nbase_delay_ms = 1\n[branch_summary]\nreserve_tokens = 2000\n",
    )


def _prompt_text(context: Any) -> str:
    return "".join(b.text for b in context.messages[-1].content)


class Router:
    """Faux responses: summary requests get ``summaries`` (the last one repeats), agent turns ``replies``."""

    def __init__(self, replies: list[Any], summaries: list[Any]) -> None:
        self.replies = list(replies)
        self.summaries = list(summaries)
        self.agent_contexts: list[Any] = []
        self.summary_prompts: list[str] = []
        self.provider = faux_provider([], context_window=10_000)
        self.provider.default_response = self

    async def __call__(self, context: Any, options: Any, state: Any, model: Any) -> Any:
        first = context.messages[0] if context.messages else None
        if getattr(first, "content", None) == SUMMARIZATION_SYSTEM_PROMPT:
            self.summary_prompts.append(_prompt_text(context))
            reply = self.summaries.pop(0) if len(self.summaries) > 1 else self.summaries[0]
        else:
            self.agent_contexts.append(context)
            reply = self.replies.pop(0)
        if callable(reply):
            reply = reply(context, options)
            if asyncio.iscoroutine(reply):
                reply = await reply
        return reply


def _reply(text: str, tokens: int) -> Any:
    return faux_message(text, usage=Usage(input=tokens - 100, output=100, total_tokens=tokens))


def _error(text: str) -> Any:
    return faux_message("", stop_reason="error", error_message=text)


def _events(session) -> list:
    kinds = (AutoCompactionStart, AutoCompactionEnd, Notice)
    events: list = []
    session.subscribe(lambda e: events.append(e) if isinstance(e, kinds) else None)
    return events


def _compactions(session) -> list[dict]:
    return [line for line in read_lines(session.session_file) if line["type"] == "compaction"]


async def _history(session, turns: int = 3) -> None:
    for i in range(turns):
        await session.prompt(f"request {i}: " + words(200, f"u{i}"))


async def test_threshold_compaction_after_a_run_and_the_rebuilt_context(cwd: Path) -> None:
    """Past window - reserve, the run is followed by a compaction; no synthetic continue."""
    replies = [_reply(words(200, "a0"), 3000), _reply(words(200, "a1"), 5000), _reply(words(200, "a2"), 8500)]
    router = Router([*replies, _reply("fresh", 2000)], ["## Goal\nTHE SUMMARY"])
    session = make_session(cwd, make_models(router.provider))
    events = _events(session)
    await _history(session)

    assert [type(e).__name__ for e in events] == ["AutoCompactionStart", "AutoCompactionEnd"]
    assert events[0].reason == "threshold"
    end = events[1]
    assert end.result is not None and not end.will_retry and not end.aborted and end.error_message is None
    assert len(router.agent_contexts) == 3  # the compaction did not continue the agent
    (entry,) = _compactions(session)
    assert entry["summary"].startswith("## Goal\nTHE SUMMARY")
    assert set(entry["details"]) == {"readFiles", "modifiedFiles"}
    assert isinstance(entry["tokensBefore"], int) and entry["tokensBefore"] >= 8500

    context = [m for m in session.messages if m.role != "system"]
    assert isinstance(context[0], CompactionSummaryMessage)
    assert texts(context)[-2][1].startswith("request 2: ")  # the latest request is kept verbatim

    await session.prompt("next")
    sent = router.agent_contexts[-1].messages
    assert sent[1].role == "user" and sent[1].content[0].text.startswith(COMPACTION_SUMMARY_PREFIX)
    assert _prompt_text(router.agent_contexts[-1]) == "next"
    assert len(_compactions(session)) == 1  # kept replies' old usage does not compact again

    reopened = SessionStore.open(session.session_file)
    assert [m.role for m in reopened.build_session_context().messages] == [m.role for m in context] + [
        "user",
        "assistant",
    ]


async def test_overflow_compacts_and_retries_once(cwd: Path) -> None:
    replies = [_reply(words(200, "a0"), 1000), _reply(words(200, "a1"), 1500), _error(OVERFLOW), "after recovery"]
    router = Router(replies, ["SUMMARY"])
    session = make_session(cwd, make_models(router.provider))
    events = _events(session)
    await _history(session)

    assert [type(e).__name__ for e in events] == ["AutoCompactionStart", "AutoCompactionEnd"]
    assert events[0].reason == "overflow" and events[1].will_retry
    assert texts(session.messages)[-2:] == [("user", "request 2: " + words(200, "u2")), ("assistant", "after recovery")]
    retried = router.agent_contexts[-1].messages
    assert retried[1].content[0].text.startswith(COMPACTION_SUMMARY_PREFIX)
    assert retried[-1].role == "user" and _prompt_text(router.agent_contexts[-1]).startswith("request 2: ")
    assert all(getattr(m, "stop_reason", None) != "error" for m in retried)
    stored = [line["message"].get("stopReason") for line in read_lines(session.session_file) if line["type"] == "message"]
    assert "error" in stored  # the failed reply stays in the file
    assert len(_compactions(session)) == 1


async def test_second_overflow_for_the_same_request_stops(cwd: Path) -> None:
    replies = [_reply(words(200, "a0"), 1000), _reply(words(200, "a1"), 1500), _error(OVERFLOW), _error(OVERFLOW)]
    router = Router(replies, ["SUMMARY"])
    session = make_session(cwd, make_models(router.provider))
    events = _events(session)
    await _history(session)

    assert [type(e).__name__ for e in events] == ["AutoCompactionStart", "AutoCompactionEnd", "Notice"]
    assert events[-1].level == "error" and events[-1].text == OVERFLOW_RECOVERY_FAILED
    assert len(router.agent_contexts) == 4
    assert len(_compactions(session)) == 1
    assert not session.is_streaming and not session.is_compacting


async def test_disabled_setting_is_honoured_on_overflow(cwd: Path) -> None:
    _settings(cwd, "[compaction]\nenabled = false\nreserve_tokens = 2000\nkeep_recent_tokens = 300\n")
    replies = [_reply(words(200, "a0"), 9000), _reply(words(200, "a1"), 9500), _error(OVERFLOW)]
    router = Router(replies, [])
    session = make_session(cwd, make_models(router.provider))
    events = _events(session)
    await _history(session)
    assert [(type(e).__name__, getattr(e, "text", None)) for e in events] == [("Notice", OVERFLOW_DISABLED)]
    assert router.summary_prompts == [] and _compactions(session) == []


async def test_summary_that_does_not_shrink_the_context_changes_nothing(cwd: Path) -> None:
    replies = [_reply(words(200, "a0"), 3000), _reply(words(200, "a1"), 5000), _reply(words(200, "a2"), 8500)]
    router = Router(replies, [words(3000, "zz")])
    session = make_session(cwd, make_models(router.provider))
    events = _events(session)
    await _history(session)
    end = events[-1]
    assert isinstance(end, AutoCompactionEnd) and end.result is None
    assert end.error_message.startswith("Auto-compaction failed: Compaction would not reduce the context")
    assert _compactions(session) == []
    assert [m.role for m in session.messages] == ["system", *["user", "assistant"] * 3]
    lines = read_lines(session.session_file)
    assert [line["type"] for line in lines].count("message") == 6


async def test_manual_compact_with_instructions(cwd: Path) -> None:
    """Manual compaction works even with auto-compaction disabled; a second one has nothing to do."""
    _settings(cwd, "[compaction]\nenabled = false\nreserve_tokens = 2000\nkeep_recent_tokens = 300\n")
    replies = [_reply(words(200, f"a{i}"), 1000) for i in range(3)]
    router = Router(replies, ["MANUAL SUMMARY"])
    session = make_session(cwd, make_models(router.provider))
    events = _events(session)
    await _history(session)
    result = await session.compact("keep the API names")

    assert result.summary.startswith("MANUAL SUMMARY")
    assert router.summary_prompts[0].endswith("Additional focus: keep the API names")
    assert [(type(e).__name__, getattr(e, "reason", None)) for e in events] == [
        ("AutoCompactionStart", "manual"),
        ("AutoCompactionEnd", None),
    ]
    (entry,) = _compactions(session)
    assert entry["firstKeptEntryId"] == result.first_kept_entry_id
    with pytest.raises(CompactionError, match="Already compacted"):
        await session.compact()
    assert events[-1].error_message == "Already compacted"


async def test_nothing_to_compact(cwd: Path) -> None:
    router = Router(["hi"], [])
    session = make_session(cwd, make_models(router.provider))
    await session.prompt("hello")
    with pytest.raises(CompactionError, match=r"Nothing to compact \(session too small\)"):
        await session.compact()
    assert _compactions(session) == []


async def test_abort_cancels_a_running_compaction(cwd: Path) -> None:
    started = asyncio.Event()

    async def hang(context: Any, options: Any) -> Any:
        started.set()
        await asyncio.sleep(30)
        return "too late"

    replies = [_reply(words(200, "a0"), 3000), _reply(words(200, "a1"), 5000), _reply(words(200, "a2"), 8500)]
    router = Router(replies, [hang])
    session = make_session(cwd, make_models(router.provider))
    events = _events(session)
    await _history(session, 2)
    run = asyncio.create_task(session.prompt("request 2"))
    await asyncio.wait_for(started.wait(), 30)
    assert session.is_compacting and session.is_streaming
    session.abort()
    await asyncio.wait_for(run, 30)
    assert isinstance(events[-1], AutoCompactionEnd) and events[-1].aborted
    assert _compactions(session) == []
    assert not session.is_compacting and not session.is_streaming
    assert texts(session.messages)[-1] == ("assistant", words(200, "a2"))


class _ReadParams(BaseModel):
    path: str


async def _read(tool_call_id: str, params: _ReadParams, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=words(150, "file"))])


READ = AgentTool(name="read", label="Read", description="Read a file", parameters=_ReadParams, execute=_read)


async def test_split_turn_overflow_keeps_the_request_and_lists_files(cwd: Path) -> None:
    """One long tool-using turn overflows: the turn is split, its request is kept verbatim."""
    from pi_coder.ai.providers.faux import faux_tool_call

    calls = [faux_message(faux_tool_call("read", {"path": f"src/m{i}.py"})) for i in range(6)]
    replies = [*calls, _error(OVERFLOW), "finished"]

    def summary(context: Any, options: Any) -> str:
        return "PREFIX" if _prompt_text(context).endswith(TURN_PREFIX_PROMPT) else "HISTORY"

    router = Router(replies, [summary, summary])
    session = make_session(cwd, make_models(router.provider), tools=[READ])
    await session.prompt("warm up")  # six reads, then the overflow, then the retry
    (entry,) = _compactions(session)
    # Everything is one turn: only its prefix is summarised (there is no earlier history).
    (prompt,) = router.summary_prompts
    assert prompt.startswith("<conversation>\n[User]: warm up") and prompt.endswith(TURN_PREFIX_PROMPT)
    assert entry["summary"].startswith("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX")
    assert "<latest-user-request>\nwarm up\n</latest-user-request>" in entry["summary"]
    assert "src/m0.py" in entry["details"]["readFiles"]
    assert "<read-files>\nsrc/m0.py" in entry["summary"]
    assert texts(session.messages)[-1] == ("assistant", "finished")


async def test_branch_summary_on_navigation(cwd: Path) -> None:
    router = Router(["a0", "a1 tried approach B", "a2"], ["BRANCH SUMMARY"])
    session = make_session(cwd, make_models(router.provider))
    await session.prompt("first")
    await session.prompt("try approach B")
    branch = session.store.get_branch()
    user_b = next(e for e in branch if e.type == "message" and e.role == "user" and "approach B" in str(e.message.content))

    text = await session.navigate_tree(user_b.id, summarize=True, instructions="what failed")
    assert text == "try approach B"
    assert "[User]: try approach B" in router.summary_prompts[0]
    assert router.summary_prompts[0].endswith("Additional focus: what failed")
    leaf = session.store.get_leaf_entry()
    assert leaf.type == "branch_summary" and "BRANCH SUMMARY" in leaf.summary
    assert leaf.parent_id == user_b.parent_id
    assert [m.role for m in session.messages[1:]] == ["user", "assistant", "branchSummary"]
    lines = read_lines(session.session_file)
    assert lines[-1]["type"] == "branch_summary" and lines[-1]["fromId"] == user_b.parent_id

    # Without a summary only the leaf moves.
    count = len(session.store.get_entries())
    await session.navigate_tree(user_b.id, summarize=False)
    assert len(session.store.get_entries()) == count
    assert session.store.leaf_id == user_b.parent_id

    # Nothing abandoned (moving forward from an ancestor): no request, no entry.
    await session.navigate_tree(branch[-1].id, summarize=True)
    assert len(router.summary_prompts) == 1 and len(session.store.get_entries()) == count
    assert session.store.leaf_id == branch[-1].id


async def test_threshold_before_the_prompt_and_one_automatic_compaction_per_request(cwd: Path) -> None:
    """A context already past the threshold is compacted before the prompt is sent; the reply of
    that same request does not trigger a second automatic compaction."""
    _settings(cwd, "[compaction]\nenabled = false\nreserve_tokens = 2000\nkeep_recent_tokens = 300\n")
    replies = [_reply(words(200, "a0"), 3000), _reply(words(200, "a1"), 5000), _reply(words(200, "a2"), 8500)]
    router = Router([*replies, _reply("still big", 9000), _reply("small", 1000)], ["SUMMARY"])
    session = make_session(cwd, make_models(router.provider))
    await _history(session)
    assert _compactions(session) == []
    session.settings.compaction.enabled = True
    events = _events(session)

    await session.prompt("after enabling")
    assert [(type(e).__name__, getattr(e, "reason", None)) for e in events] == [
        ("AutoCompactionStart", "threshold"),
        ("AutoCompactionEnd", None),
    ]
    sent = router.agent_contexts[3]
    assert sent.messages[1].content[0].text.startswith(COMPACTION_SUMMARY_PREFIX)
    assert _prompt_text(sent) == "after enabling"
    assert len(_compactions(session)) == 1  # the 9000-token reply of this request did not compact again

    # Still past the threshold by the reported usage, but everything left is recent history:
    # an automatic compaction with nothing to do is skipped quietly.
    await session.prompt("next request")
    assert len(events) == 2 and len(_compactions(session)) == 1


async def test_overflow_with_nothing_to_compact_is_reported(cwd: Path) -> None:
    router = Router([_error(OVERFLOW)], ["UNUSED"])
    session = make_session(cwd, make_models(router.provider))
    events = _events(session)
    await session.prompt("a huge paste")
    assert [type(e).__name__ for e in events] == ["AutoCompactionStart", "AutoCompactionEnd"]
    assert events[-1].error_message == "Context overflow recovery failed: Nothing to compact (session too small)"
    assert router.summary_prompts == [] and _compactions(session) == []
    assert session.messages[-1].stop_reason == "error"


async def test_abort_cancels_a_branch_summary_and_navigation(cwd: Path) -> None:
    started = asyncio.Event()

    async def hang(context: Any, options: Any) -> Any:
        started.set()
        await asyncio.sleep(30)
        return "too late"

    router = Router(["a0", "a1"], [hang])
    session = make_session(cwd, make_models(router.provider))
    await session.prompt("first")
    await session.prompt("second")
    leaf = session.store.leaf_id
    count = len(session.store.get_entries())
    target = session.store.get_branch()[-2]  # the second user message
    navigation = asyncio.create_task(session.navigate_tree(target.id, summarize=True))
    await asyncio.wait_for(started.wait(), 30)
    session.abort()
    assert await asyncio.wait_for(navigation, 30) is None
    assert session.store.leaf_id == leaf and len(session.store.get_entries()) == count
