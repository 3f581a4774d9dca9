"""``pi --mode rpc``: JSON commands on stdin, responses and events on stdout (a real subprocess)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, RpcClient, user_texts
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

STATE_FIELDS = {
    "model",
    "thinkingLevel",
    "isStreaming",
    "isCompacting",
    "steeringMode",
    "followUpMode",
    "sessionFile",
    "sessionId",
    "sessionName",
    "autoCompactionEnabled",
    "messageCount",
    "pendingMessageCount",
}


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, "anthropic")


@pytest.fixture
def rpc(pi: PiHome) -> Iterator[RpcClient]:
    client = RpcClient(pi, "--no-session")
    yield client
    client.close()


def test_prompt_answers_at_once_then_streams_events(pi: PiHome, rpc: RpcClient) -> None:
    state = rpc.call({"type": "get_state"})
    assert state["success"] is True and state["command"] == "get_state"
    assert set(state["data"]) == STATE_FIELDS - {"sessionName"}  # no name yet: left out, as Pi 1.6 does
    assert state["data"]["model"]["id"] == "test-model" and state["data"]["isStreaming"] is False
    assert state["data"]["messageCount"] == 0

    (pi.project / "a.txt").write_text("file text\n")
    pi.server.enqueue(Turn([ToolCall("read", {"path": "a.txt"}, id="c1")]), Turn([Text("hello there")]))
    request_id = rpc.send({"type": "prompt", "message": "hi"})
    response = rpc.response(request_id)
    assert response == {
        "id": request_id, "type": "response", "command": "prompt", "success": True, "data": {"disposition": "started"},
    }  # fmt: skip
    rpc.event("agent_end")
    kinds = [line["type"] for line in rpc.seen]
    assert kinds.index("response", kinds.index("response") + 1) < kinds.index("agent_start")
    assert "tool_execution_end" in kinds

    messages = rpc.call({"type": "get_messages"})["data"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert rpc.call({"type": "get_last_assistant_text"})["data"] == {"text": "hello there"}
    stats = rpc.call({"type": "get_session_stats"})["data"]
    assert stats["userMessages"] == 1 and stats["toolCalls"] == 1 and stats["assistantMessages"] == 2
    assert rpc.close() == 0


SLOW_SETTLE = """
import asyncio

def extension(pi):
    @pi.on("agent_settled")
    async def slow(event, ctx):
        await asyncio.sleep(0.5)  # the run is over (agent_end is out) but the prompt has not settled
"""


@pytest.mark.parametrize("slow", [False, True], ids=["plain", "slow-settle"])
def test_a_prompt_sent_the_moment_agent_end_arrives_is_accepted(pi: PiHome, tmp_path: Path, slow: bool) -> None:
    """After ``agent_end`` the session still settles (checkpoint entry, save, extensions'
    ``agent_settled``); a client written for Pi sends its next prompt right then. It is accepted
    and runs once the first prompt has settled, as in Pi 1.6 (issue 33). The slow-settle case
    makes the window wide enough to hit every time."""
    (pi.project / "a.txt").write_text("file text\n")
    ext = tmp_path / "slow_settle.py"
    ext.write_text(SLOW_SETTLE)
    client = RpcClient(pi, *(["-e", str(ext)] if slow else []))
    try:
        for round in range(3):
            pi.server.enqueue(
                Turn([ToolCall("write", {"path": "a.txt", "content": f"v{round}"}, id=f"c{round}")]),
                Turn([Text(f"wrote it {round}")]),
                Turn([Text(f"second answer {round}")]),
            )
            client.call({"type": "prompt", "message": f"first {round}"})
            client.event("agent_end", timeout=30)
            second = client.call({"type": "prompt", "message": f"second {round}"})
            assert second["success"] is True, second
            assert second["data"] == {"disposition": "started"}
            end = client.wait_for(lambda line: line["type"] == "agent_end" and "second" in json.dumps(line), 30)
            assert end["messages"][-1]["content"][0]["text"] == f"second answer {round}"
            client.event("agent_settled", timeout=30)
        assert user_texts(pi.server.requests[-1].json)[-2:] == ["first 2", "second 2"]
        pi.server.enqueue(Turn([Text("third answer")]))
        assert client.call({"type": "prompt", "message": "third"})["success"] is True
        client.event("agent_settled", timeout=30)
    finally:
        assert client.close() == 0


def test_an_abort_while_a_prompt_waits_for_the_last_to_settle_drops_it(pi: PiHome, tmp_path: Path) -> None:
    """A prompt accepted on ``agent_end`` waits for the previous prompt to settle; an ``abort``
    sent meanwhile means it never starts: no model request, the conversation ends with the first
    answer, and ``agent_settled`` still comes so a client waiting for it goes on."""
    ext = tmp_path / "slow_settle.py"
    ext.write_text(SLOW_SETTLE.replace("0.5", "2"))
    client = RpcClient(pi, "-e", str(ext))
    try:
        pi.server.enqueue(Turn([Text("first answer")]), Turn([Text("never asked")]))
        client.call({"type": "prompt", "message": "first"})
        client.event("agent_end", timeout=30)
        second = client.call({"type": "prompt", "message": "second"})
        assert second["data"] == {"disposition": "started"}
        assert client.call({"type": "abort"})["success"] is True
        while sum(line.get("type") == "agent_settled" for line in client.seen) < 2:  # the first's, the dropped one's
            client.event("agent_settled", timeout=30)
        state = client.call({"type": "get_messages"})["data"]["messages"]
        assert [m["role"] for m in state] == ["user", "assistant"]
        assert len(pi.server.requests) == 1
    finally:
        assert client.close() == 0


DUMP_TOOLS = """
import json

def extension(pi):
    @pi.command("dump-tools", description="write get_all_tools' sourceInfo")
    async def dump(args, ctx):
        infos = {t.name: t.source_info for t in pi.get_all_tools()}
        open(args.strip(), "w").write(json.dumps(infos))
"""


def test_get_commands_and_tools_give_pis_source_info(pi: PiHome, tmp_path: Path) -> None:
    """``sourceInfo`` is ``{path, source, scope, origin}`` as Pi 1.6 documents it, so a client can
    tell user, project, command-line and built-in resources apart (issue 33)."""
    (pi.home / "prompts").mkdir()
    (pi.home / "prompts" / "mine.md").write_text("Mine.\n")
    (pi.project / ".pi" / "prompts").mkdir(parents=True)
    (pi.project / ".pi" / "prompts" / "ours.md").write_text("Ours.\n")
    (tmp_path / "once.md").write_text("Once.\n")
    (pi.home / "extensions").mkdir()
    (pi.home / "extensions" / "auto_ext.py").write_text(
        "def extension(pi):\n    pi.register_command('auto-cmd', lambda a, c: None)\n"
    )
    listed = tmp_path / "listed_ext.py"
    listed.write_text("def extension(pi):\n    pi.register_command('listed-cmd', lambda a, c: None)\n")
    (pi.home / "settings.toml").write_text(f"extensions = [{str(listed)!r}]\n")
    cli_ext = tmp_path / "dump_tools.py"
    cli_ext.write_text(DUMP_TOOLS)
    client = RpcClient(pi, "--no-session", "-a", "-e", str(cli_ext), "--prompt-template", str(tmp_path / "once.md"))
    try:
        records = {r["name"]: r["sourceInfo"] for r in client.call({"type": "get_commands"})["data"]["commands"]}
        out = tmp_path / "tools.json"
        assert client.call({"type": "prompt", "message": f"/dump-tools {out}"})["success"] is True
        client.call({"type": "get_state"})
    finally:
        assert client.close() == 0
    home, project = os.path.realpath(pi.home), os.path.realpath(pi.project)

    def shape(info: dict[str, str]) -> tuple[str, str, str]:
        assert set(info) == {"path", "source", "scope", "origin"}, info
        return info["source"], info["scope"], info["origin"]

    assert shape(records["mine"]) == ("auto", "user", "top-level")
    assert os.path.realpath(records["mine"]["path"]) == f"{home}/prompts/mine.md"
    assert shape(records["ours"]) == ("auto", "project", "top-level")
    assert os.path.realpath(records["ours"]["path"]) == f"{project}/.pi/prompts/ours.md"
    assert shape(records["once"]) == ("cli", "temporary", "top-level")
    assert shape(records["dump-tools"]) == ("cli", "temporary", "top-level")
    assert records["dump-tools"]["path"] == os.path.realpath(cli_ext)
    assert shape(records["auto-cmd"]) == ("auto", "user", "top-level")
    assert shape(records["listed-cmd"]) == ("local", "user", "top-level")
    tools = json.loads(out.read_text())
    assert tools["read"] == {"path": "builtin:read", "source": "builtin", "scope": "temporary", "origin": "top-level"}


def test_steer_and_follow_up_while_streaming(pi: PiHome, rpc: RpcClient) -> None:
    pi.server.enqueue(
        Turn([Text("first answer")], hang=2.0),
        Turn([Text("steered answer")]),
        Turn([Text("follow-up answer")]),
    )
    rpc.call({"type": "prompt", "message": "start"})
    assert pi.server.wait_for_requests(1, timeout=30)
    busy = rpc.call({"type": "prompt", "message": "too eager"})
    assert busy["success"] is False and "streamingBehavior" in busy["error"]
    steered = rpc.call({"type": "prompt", "message": "change course", "streamingBehavior": "steer"})
    assert steered["success"] and steered["data"] == {"disposition": "queued"}
    assert rpc.call({"type": "follow_up", "message": "and afterwards this"})["success"]
    state = rpc.call({"type": "get_state"})["data"]
    assert state["isStreaming"] is True and state["pendingMessageCount"] == 2
    rpc.event("agent_end", timeout=30)
    assert len(pi.server.requests) == 3
    assert user_texts(pi.server.requests[1].json) == ["start", "change course"]
    assert user_texts(pi.server.requests[2].json) == ["start", "change course", "and afterwards this"]
    assert rpc.call({"type": "get_last_assistant_text"})["data"]["text"] == "follow-up answer"


def test_steer_command_and_follow_up_behaviour(pi: PiHome, rpc: RpcClient) -> None:
    pi.server.enqueue(Turn([Text("one")], hang=2.0), Turn([Text("two")]), Turn([Text("three")]))
    rpc.call({"type": "prompt", "message": "go"})
    assert pi.server.wait_for_requests(1, timeout=30)
    assert rpc.call({"type": "prompt", "message": "later", "streamingBehavior": "followUp"})["success"]
    assert rpc.call({"type": "steer", "message": "now"})["success"]
    rpc.event("agent_end", timeout=30)
    assert user_texts(pi.server.requests[1].json) == ["go", "now"]
    assert user_texts(pi.server.requests[2].json) == ["go", "now", "later"]


def test_malformed_lines_get_errors_and_the_server_keeps_going(rpc: RpcClient) -> None:
    rpc.send_raw(b"this is not json\n")
    parse = rpc.next_line()
    assert parse["type"] == "response" and parse["command"] == "parse" and parse["success"] is False
    assert parse["error"].startswith("Failed to parse command")
    rpc.send_raw(b"[1, 2]\r\n")
    assert rpc.next_line()["command"] == "parse"
    unknown = rpc.call({"type": "fly"})
    assert unknown == {"id": unknown["id"], "type": "response", "command": "fly", "success": False,
                       "error": "Unknown command: fly"}  # fmt: skip
    assert "Invalid thinking level" in rpc.call({"type": "set_thinking_level", "level": "ultra"})["error"]
    assert "Model not found" in rpc.call({"type": "set_model", "provider": "local", "modelId": "zz"})["error"]
    assert rpc.call({"type": "steer"})["success"] is False
    text = "line\u2028separator"
    rpc.send_raw((json.dumps({"id": "u", "type": "set_session_name", "name": text}, ensure_ascii=False) + "\n").encode())
    assert rpc.response("u")["success"] is True
    assert rpc.call({"type": "get_state"})["data"]["sessionName"] == text
    assert rpc.close() == 0


def test_models_and_thinking(pi: PiHome) -> None:
    pi.write_models(
        "\n[providers.second]\n"
        'api = "anthropic-messages"\n'
        f'base_url = "{pi.server.anthropic_base_url}"\n'
        'api_key = "none"\n'
        'models = [{ id = "deep-model", reasoning = true }]\n'
    )
    rpc = RpcClient(pi, "--no-session", "--model", "local/test-model")
    try:
        models = rpc.call({"type": "get_available_models"})["data"]["models"]
        assert sorted(m["id"] for m in models) == ["deep-model", "test-model"]
        chosen = rpc.call({"type": "set_model", "provider": "second", "modelId": "deep-model"})
        assert chosen["success"] and chosen["data"]["id"] == "deep-model" and chosen["data"]["reasoning"] is True
        assert rpc.call({"type": "set_thinking_level", "level": "high"})["success"]
        assert rpc.call({"type": "get_state"})["data"]["thinkingLevel"] == "high"
        cycled = rpc.call({"type": "cycle_thinking_level"})["data"]
        assert cycled["level"] in ("xhigh", "off")
        moved = rpc.call({"type": "cycle_model"})["data"]
        assert moved["model"]["id"] == "test-model" and moved["isScoped"] is False
        assert rpc.call({"type": "cycle_thinking_level"})["data"] is None  # no reasoning
        assert rpc.call({"type": "set_steering_mode", "mode": "all"})["success"]
        assert rpc.call({"type": "get_state"})["data"]["steeringMode"] == "all"
        assert rpc.call({"type": "set_follow_up_mode", "mode": "sometimes"})["success"] is False
    finally:
        rpc.close()


def test_bash_and_abort_bash(rpc: RpcClient) -> None:
    done = rpc.call({"type": "bash", "command": "echo hi from bash"})
    assert done["success"] and done["data"]["output"].strip() == "hi from bash" and done["data"]["exitCode"] == 0
    assert done["data"]["cancelled"] is False and done["data"]["truncated"] is False
    slow = rpc.send({"type": "bash", "command": "sleep 30"})
    rpc.event("bash_execution_start")
    assert rpc.call({"type": "abort_bash"})["success"]
    aborted = rpc.response(slow)
    assert aborted["success"] and aborted["data"]["cancelled"] is True
    messages = rpc.call({"type": "get_messages"})["data"]["messages"]
    assert [m["role"] for m in messages] == ["bashExecution", "bashExecution"]


def test_abort_stops_a_hanging_stream(pi: PiHome, rpc: RpcClient) -> None:
    pi.server.enqueue(Turn([Text("never")], hang=math.inf))
    rpc.call({"type": "prompt", "message": "wait forever"})
    assert pi.server.wait_for_requests(1, timeout=30)
    assert rpc.call({"type": "abort"})["success"]
    end = rpc.seen_or_next("agent_end")
    assert end["messages"][-1]["stopReason"] == "aborted"
    assert pi.server.requests[0].wait_disconnected(10)
    assert rpc.call({"type": "get_state"})["data"]["isStreaming"] is False


def test_sessions_new_switch_fork_and_name(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("answer one")]), Turn([Text("answer two")]))
    rpc = RpcClient(pi)
    try:
        rpc.call({"type": "prompt", "message": "question one"})
        rpc.event("agent_end")
        rpc.call({"type": "prompt", "message": "question two"})
        rpc.event("agent_end")
        first = rpc.call({"type": "get_state"})["data"]
        assert first["sessionFile"] and Path(first["sessionFile"]).exists()
        assert rpc.call({"type": "set_session_name", "name": "  Work  "})["success"]
        assert rpc.call({"type": "get_state"})["data"]["sessionName"] == "Work"

        assert rpc.call({"type": "new_session"})["data"] == {"cancelled": False}
        fresh = rpc.call({"type": "get_state"})["data"]
        assert fresh["sessionId"] != first["sessionId"] and fresh["messageCount"] == 0

        switched = rpc.call({"type": "switch_session", "sessionPath": first["sessionFile"]})
        assert switched["data"] == {"cancelled": False}
        back = rpc.call({"type": "get_state"})["data"]
        assert back["sessionId"] == first["sessionId"] and back["messageCount"] == 4

        candidates = rpc.call({"type": "get_fork_messages"})["data"]["messages"]
        assert [c["text"] for c in candidates] == ["question one", "question two"]
        forked = rpc.call({"type": "fork", "entryId": candidates[1]["entryId"]})
        assert forked["data"] == {"text": "question two", "cancelled": False}
        after = rpc.call({"type": "get_state"})["data"]
        assert after["sessionId"] != first["sessionId"] and after["messageCount"] == 2
        missing = rpc.call({"type": "switch_session", "sessionPath": str(pi.project / "none.jsonl")})
        assert missing["success"] is False and "not found" in missing["error"]
        exported = rpc.call({"type": "export_html", "outputPath": str(pi.project / "s.html")})
        assert exported["data"]["path"] == str(pi.project / "s.html")
        assert "question one" in (pi.project / "s.html").read_text()
    finally:
        assert rpc.close() == 0


def test_end_of_input_finishes_the_current_run_then_exits(pi: PiHome, rpc: RpcClient) -> None:
    pi.server.enqueue(Turn([Text("finished anyway")], hang=1.0))
    rpc.send({"type": "prompt", "message": "go"})
    assert rpc.close(timeout=30) == 0
    lines = []
    while (line := rpc.lines.get(timeout=10)) is not None:
        lines.append(line)
    assert lines[-1] == {"type": "agent_settled", "aborted": False}
    assert lines[-2]["type"] == "agent_end"
    assert lines[-2]["messages"][-1]["content"][0]["text"] == "finished anyway"


def test_compact_always_answers(rpc: RpcClient) -> None:
    """Whether or not compaction is available, the command gets a response and the server lives on."""
    answer = rpc.call({"type": "compact"}, timeout=30)
    assert answer["command"] == "compact" and isinstance(answer["success"], bool)
    assert rpc.call({"type": "get_state"})["success"] is True
