"""Automatic retry (pi-product 8.6) through AgentSession with the faux provider and real files."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from pi_coder.core.events import AutoRetryEnd, AutoRetryStart
from pi_coder.core.retry import RETRY_CANCELLED, retry_delay_ms
from tests.core._agent_session_support import (
    faux_message,
    faux_provider,
    make_models,
    make_session,
    read_lines,
    texts,
)


def _settings(cwd: Path, text: str) -> None:
    (cwd / ".pi").mkdir(exist_ok=True)
    (cwd / ".pi" / "settings.toml").write_text(text)


@pytest.fixture(autouse=True)
def _retry_settings(cwd: Path) -> None:
    """Fast retries (1 ms) in every test of this file."""
    _settings(cwd, "[retry]\nbase_delay_ms = 1\nmax_retries = 3\n")


def _error(text: str = "503 Service Unavailable: overloaded"):
    return faux_message("", stop_reason="error", error_message=text)


def _retry_events(session) -> list:
    events: list = []
    session.subscribe(lambda e: events.append(e) if isinstance(e, AutoRetryStart | AutoRetryEnd) else None)
    return events


def test_backoff_doubles_and_is_capped() -> None:
    assert [retry_delay_ms(a, 2000) for a in (1, 2, 3)] == [2000, 4000, 8000]
    assert [retry_delay_ms(a, 10, 15) for a in (1, 2, 3)] == [10, 15, 15]


async def test_retry_succeeds_on_the_second_attempt(cwd: Path) -> None:
    """The failed reply leaves the live context (not the file); prompt() returns after the retry."""
    faux = faux_provider([_error(), "recovered"])
    session = make_session(cwd, make_models(faux))
    events = _retry_events(session)
    await session.prompt("hello")

    assert [(type(e).__name__, e.attempt) for e in events] == [("AutoRetryStart", 1), ("AutoRetryEnd", 1)]
    start, end = events
    assert start.max_attempts == 3 and start.delay_ms == 1 and "overloaded" in start.error_message
    assert end.success and end.final_error is None
    assert texts(session.messages) == [("user", "hello"), ("assistant", "recovered")]
    assert [m.role for m in faux.state.contexts[1].messages] == ["system", "user"]
    stored = [line["message"] for line in read_lines(session.session_file) if line["type"] == "message"]
    assert [(m["role"], m.get("stopReason")) for m in stored] == [
        ("user", None),
        ("assistant", "error"),
        ("assistant", "stop"),
    ]
    assert not session.is_retrying and not session.is_streaming


async def test_gives_up_after_max_retries(cwd: Path) -> None:
    _settings(cwd, "[retry]\nbase_delay_ms = 1\nmax_retries = 2\n")
    faux = faux_provider([_error("429 rate limit"), _error("429 rate limit"), _error("429 rate limit final"), "never"])
    session = make_session(cwd, make_models(faux))
    events = _retry_events(session)
    await session.prompt("hello")

    assert [type(e).__name__ for e in events] == ["AutoRetryStart", "AutoRetryStart", "AutoRetryEnd"]
    assert [e.delay_ms for e in events[:2]] == [1, 2]
    assert not events[-1].success and events[-1].attempt == 2
    assert events[-1].final_error == "429 rate limit final"
    assert faux.state.call_count == 3
    last = session.messages[-1]
    assert last.role == "assistant" and last.stop_reason == "error"  # the final failure is shown


async def test_abort_cancels_the_wait(cwd: Path) -> None:
    _settings(cwd, "[retry]\nbase_delay_ms = 60000\n")
    faux = faux_provider([_error(), "never"])
    session = make_session(cwd, make_models(faux))
    events = _retry_events(session)
    started = asyncio.Event()
    session.subscribe(lambda e: started.set() if isinstance(e, AutoRetryStart) else None)

    run = asyncio.create_task(session.prompt("hello"))
    await asyncio.wait_for(started.wait(), 30)
    assert session.is_retrying and session.is_streaming
    began = time.monotonic()
    session.abort()
    await asyncio.wait_for(run, 30)
    assert time.monotonic() - began < 30  # the retry waits 60 s
    assert isinstance(events[-1], AutoRetryEnd) and not events[-1].success
    assert events[-1].final_error == RETRY_CANCELLED
    assert faux.state.call_count == 1
    assert not session.is_retrying and not session.is_streaming


async def test_not_retried_overflow_auth_or_disabled(cwd: Path) -> None:
    """Context overflow goes to compaction, auth errors are final, and retry.enabled is honoured."""
    faux = faux_provider([_error("prompt is too long: 300000 tokens > 200000 maximum"), _error("401 invalid x-api-key")])
    _settings(cwd, "[retry]\nbase_delay_ms = 1\n[compaction]\nenabled = false\n")
    session = make_session(cwd, make_models(faux))
    events = _retry_events(session)
    await session.prompt("one")
    await session.prompt("two")
    assert events == [] and faux.state.call_count == 2

    _settings(cwd, "[retry]\nenabled = false\nbase_delay_ms = 1\n")
    faux2 = faux_provider([_error(), "unused"])
    session2 = make_session(cwd, make_models(faux2))
    events2 = _retry_events(session2)
    await session2.prompt("one")
    assert events2 == [] and faux2.state.call_count == 1


async def test_success_resets_the_counter_between_prompts(cwd: Path) -> None:
    faux = faux_provider([_error(), "ok", _error(), "ok again"])
    session = make_session(cwd, make_models(faux))
    events = _retry_events(session)
    await session.prompt("one")
    await session.prompt("two")
    assert [(type(e).__name__, e.attempt) for e in events] == [
        ("AutoRetryStart", 1),
        ("AutoRetryEnd", 1),
        ("AutoRetryStart", 1),
        ("AutoRetryEnd", 1),
    ]
    assert texts(session.messages)[-2:] == [("user", "two"), ("assistant", "ok again")]
