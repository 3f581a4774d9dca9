"""User shell commands (``!cmd`` / ``!!cmd``) in AgentSession: real processes, real session files."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from pi_coder.core.events import BashExecutionEnd, BashExecutionStart, BashExecutionUpdate
from pi_coder.session.messages import BashExecutionMessage
from pi_coder.session.store import SessionStore
from tests.core._agent_session_support import (
    Gate,
    faux_provider,
    make_models,
    make_session,
    read_lines,
    texts,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")


@pytest.fixture(autouse=True)
def _note_file(cwd: Path) -> None:
    """A file for the shell commands to read."""
    (cwd / "note.txt").write_text("from the file\n")


def _user_texts(context_messages: list) -> list[str]:
    return [text for role, text in texts(context_messages) if role == "user"]


async def test_bang_command_is_recorded_and_sent_to_the_model(cwd: Path) -> None:
    faux = faux_provider(["hello", "seen"])
    session = make_session(cwd, make_models(faux))
    events: list = []
    session.subscribe(lambda e: events.append(e) if e.type.startswith("bash_execution") else None)
    await session.prompt("hi")

    message = await session.run_bash("cat note.txt; echo err >&2; exit 3")
    assert isinstance(message, BashExecutionMessage)
    assert message.exit_code == 3 and not message.cancelled
    assert "from the file" in message.output and "err" in message.output
    assert isinstance(events[0], BashExecutionStart) and isinstance(events[-1], BashExecutionEnd)
    assert events[-1].message is message
    assert session.messages[-1] is message
    assert read_lines(session.session_file)[-1]["message"]["role"] == "bashExecution"
    assert read_lines(session.session_file)[-1]["message"]["exitCode"] == 3

    await session.prompt("what did it print?")
    sent = _user_texts(faux.state.contexts[-1].messages)
    assert any(t.startswith("Ran `cat note.txt") and "from the file" in t and "Command exited with code 3" in t for t in sent)


async def test_double_bang_is_stored_but_not_sent(cwd: Path) -> None:
    faux = faux_provider(["ok", "ok2"])
    session = make_session(cwd, make_models(faux))
    await session.prompt("hi")
    message = await session.run_bash("echo secret-output", exclude_from_context=True)
    assert message.exclude_from_context is True
    await session.prompt("next")
    sent = faux.state.contexts[-1].messages
    assert all("secret-output" not in t for t in _user_texts(sent))
    line = read_lines(session.session_file)[-3]["message"]
    assert line["role"] == "bashExecution" and line["excludeFromContext"] is True


async def test_commands_while_streaming_are_held_back_and_appended_before_next_prompt(cwd: Path) -> None:
    """A ``!`` command finished mid-run does not land between a tool call and its result."""
    gate = Gate("streaming reply")
    faux = faux_provider([gate, "after"])
    session = make_session(cwd, make_models(faux))
    run = asyncio.create_task(session.prompt("start"))
    await asyncio.wait_for(gate.started.wait(), 5)

    shown = await session.run_bash("echo during-run")
    hidden = await session.run_bash("echo hidden-run", exclude_from_context=True)
    assert session.pending_bash_messages == [shown, hidden]
    assert shown not in session.messages
    gate.release.set()
    await asyncio.wait_for(run, 10)

    assert texts(session.messages)[:2] == [("user", "start"), ("assistant", "streaming reply")]
    assert session.messages[-2:] == [shown, hidden]
    assert session.pending_bash_messages == []
    roles = [line["message"]["role"] for line in read_lines(session.session_file) if line["type"] == "message"]
    assert roles == ["user", "assistant", "bashExecution", "bashExecution"]

    await session.prompt("and now?")
    sent = _user_texts(faux.state.contexts[-1].messages)
    assert any("during-run" in t for t in sent)
    assert all("hidden-run" not in t for t in sent)
    # Resume sees the same context.
    resumed = make_session(cwd, make_models(faux_provider([])), store=SessionStore.open(session.session_file))
    assert texts(resumed.messages) == texts(session.messages)


async def test_abort_bash_kills_the_command(cwd: Path) -> None:
    session = make_session(cwd, make_models(faux_provider([])))
    updates: list[str] = []
    session.subscribe(lambda e: updates.append(e.output) if isinstance(e, BashExecutionUpdate) else None)
    task = asyncio.create_task(session.run_bash("echo started; sleep 30"))
    for _ in range(200):
        if updates and "started" in updates[-1]:
            break
        await asyncio.sleep(0.02)
    assert session.is_bash_running
    with pytest.raises(RuntimeError, match="already running"):
        await session.run_bash("echo second")
    session.abort_bash()
    message = await asyncio.wait_for(task, 10)
    assert message.cancelled and message.exit_code is None
    assert "started" in message.output
    assert not session.is_bash_running
