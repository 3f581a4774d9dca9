"""``pi --mode json``: the session header, then every event as one JSON line with Pi's names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn, error_turn


@pytest.fixture(params=["anthropic", "openai"])
def pi(request: pytest.FixtureRequest, tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, request.param)


def _lines(stdout: str) -> list[dict[str, Any]]:
    assert stdout.endswith("\n")
    return [json.loads(line) for line in stdout.splitlines()]


def _shape(events: list[dict[str, Any]]) -> list[str]:
    """Event types with the message role, consecutive message_update lines collapsed."""
    out: list[str] = []
    for event in events:
        message = event.get("message")
        role = message.get("role") if isinstance(message, dict) and event["type"].startswith("message_") else None
        name = f"{event['type']}:{role}" if role else event["type"]
        if not (out and out[-1] == name == "message_update"):
            out.append(name)
    return out


def test_tool_turn_event_order(pi: PiHome) -> None:
    (pi.project / "a.txt").write_text("hello\n")
    pi.server.enqueue(
        Turn([Text("Reading."), ToolCall("read", {"path": "a.txt"}, id="call_1")]),
        Turn([Text("It says hello.")]),
    )
    run = pi.run("--mode", "json", "--no-subagents", "read a.txt")  # no extension tool: no tool declaration
    assert run.returncode == 0, run.stderr
    events = _lines(run.stdout)
    header = events[0]
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"] == str(pi.project)
    assert _shape(events[1:]) == [
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_update",
        "message_end:assistant",
        "tool_execution_start",
        "tool_execution_end",
        "message_start:toolResult",
        "message_end:toolResult",
        "turn_end",
        "turn_start",
        "message_start:assistant",
        "message_update",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    start = next(e for e in events if e["type"] == "tool_execution_start")
    assert start == {"type": "tool_execution_start", "toolCallId": "call_1", "toolName": "read", "args": {"path": "a.txt"}}
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["isError"] is False and "hello" in end["result"]["content"][0]["text"]
    deltas = [e["assistantMessageEvent"] for e in events if e["type"] == "message_update"]
    text = "".join(d["delta"] for d in deltas if d["type"] == "text_delta")
    assert text == "Reading.It says hello."
    # Pi 1.6's wire form: delta-only updates with the running usage; no cumulative snapshots.
    updates = [e for e in events if e["type"] == "message_update"]
    assert all(set(u) == {"type", "usage", "assistantMessageEvent"} for u in updates)
    assert not any("partial" in d for d in deltas)
    call_start = next(d for d in deltas if d["type"] == "toolcall_start")
    assert call_start["id"] == "call_1" and call_start["toolName"] == "read"
    assert isinstance(end["durationMs"], int)
    turn_end = next(e for e in events if e["type"] == "turn_end")
    assert turn_end["message"]["stopReason"] == "toolUse" and turn_end["toolResults"][0]["toolCallId"] == "call_1"
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    agent_end = events[-2]
    assert [m["role"] for m in agent_end["messages"]] == ["user", "assistant", "toolResult", "assistant"]


def test_model_error_is_in_the_stream_and_exit_is_zero(pi: PiHome) -> None:
    pi.server.enqueue(error_turn(400, "no such thing"))
    run = pi.run("--mode", "json", "hi")
    assert run.returncode == 0
    events = _lines(run.stdout)
    final = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert final["stopReason"] == "error" and "no such thing" in final["errorMessage"]
    assert [e["type"] for e in events[-2:]] == ["agent_end", "agent_settled"]


def test_json_mode_with_piped_stdin_stays_json(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("--mode", "json", "--no-subagents", input="from stdin")
    assert run.returncode == 0, run.stderr
    events = _lines(run.stdout)
    user = next(e for e in events if e["type"] == "message_end")["message"]
    assert user["role"] == "user" and user["content"][0]["text"] == "from stdin"
