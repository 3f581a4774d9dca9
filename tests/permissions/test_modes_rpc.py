"""Permission modes through real ``pi`` processes (print and rpc) against the scripted model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import PiHome, RpcClient, all_text
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server)


def _tool_results(request: dict[str, Any]) -> str:
    return all_text(request)


def _script_write(pi: PiHome, path: str = "out.txt") -> None:
    pi.server.enqueue(
        Turn([Text("Writing."), ToolCall("write", {"path": path, "content": "hi\n"}, id="call_1")]),
        Turn([Text("Done.")]),
    )


def test_print_mode_ask_refuses_with_one_stderr_line(pi: PiHome) -> None:
    _script_write(pi)
    run = pi.run("-p", "--permission-mode", "ask", "write it")
    assert run.returncode == 0, run.stderr
    assert not (pi.project / "out.txt").exists()
    lines = [line for line in run.stderr.splitlines() if "refused" in line]
    assert len(lines) == 1 and "write: out.txt" in lines[0], run.stderr
    assert "no one could approve" in _tool_results(pi.server.requests[-1].json)


def test_print_mode_auto_runs_and_deny_rules_still_apply(pi: PiHome) -> None:
    (pi.home / "settings.toml").write_text('[permissions]\ndeny = ["bash(r*m -rf*)"]\n')
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "echo ok > a.txt && \\rm -rf a.txt"}, id="c1")]),
        Turn([ToolCall("bash", {"command": "echo ok > b.txt"}, id="c2")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "go")
    assert run.returncode == 0, run.stderr
    assert not (pi.project / "a.txt").exists()
    assert (pi.project / "b.txt").read_text() == "ok\n"
    assert "deny rule" in all_text(pi.server.requests[1].json)


def test_deny_mode_refuses_what_would_ask(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "git status; ls"}, id="c1")]),
        Turn([ToolCall("bash", {"command": "touch made.txt"}, id="c2")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "--permission-mode", "deny", "go")
    assert run.returncode == 0, run.stderr
    assert not (pi.project / "made.txt").exists()
    assert "Permission mode deny" in all_text(pi.server.requests[2].json)


def test_invalid_permission_mode_is_one_line(pi: PiHome) -> None:
    run = pi.run("-p", "--permission-mode", "yolo", "hi")
    assert run.returncode == 1
    assert run.stderr.strip().count("\n") == 0 and "Invalid --permission-mode" in run.stderr


def _answer_select(rpc: RpcClient, choice: str) -> dict[str, Any]:
    request = rpc.wait_for(
        lambda line: line.get("type") == "extension_ui_request" and line.get("method") == "select"
    )
    rpc.send_raw(
        json.dumps({"type": "extension_ui_response", "id": request["id"], "value": choice}).encode() + b"\n"
    )
    return request


def _idle(rpc: RpcClient) -> None:
    rpc.event("agent_settled", timeout=30)


def test_rpc_ask_allow_once_then_deny_with_reason(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "one.txt", "content": "1"}, id="c1")]),
        Turn([ToolCall("write", {"path": "two.txt", "content": "2"}, id="c2")]),
        Turn([Text("Done.")]),
    )
    rpc = RpcClient(pi, "--permission-mode", "ask")
    try:
        rpc.send({"type": "prompt", "message": "write files"})
        first = _answer_select(rpc, "Allow once")
        assert "write: one.txt" in first["title"] and "Always allow (save a rule)" in first["options"]
        _answer_select(rpc, "Deny")
        reason = rpc.wait_for(
            lambda line: line.get("type") == "extension_ui_request" and line.get("method") == "input"
        )
        rpc.send_raw(
            json.dumps(
                {"type": "extension_ui_response", "id": reason["id"], "value": "not that file"}
            ).encode()
            + b"\n"
        )
        _idle(rpc)
    finally:
        rpc.close()
    assert (pi.project / "one.txt").read_text() == "1"
    assert not (pi.project / "two.txt").exists()
    assert "not that file" in all_text(pi.server.requests[2].json)


def test_rpc_ask_allow_session_and_always(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "touch a.txt"}, id="c1")]),
        Turn([ToolCall("bash", {"command": "touch a.txt"}, id="c2")]),
        Turn([ToolCall("bash", {"command": "touch b.txt"}, id="c3")]),
        Turn([Text("Done.")]),
    )
    rpc = RpcClient(pi, "--permission-mode", "ask")
    try:
        rpc.send({"type": "prompt", "message": "touch"})
        _answer_select(rpc, "Allow this session")
        # the second identical call runs without a question; the third asks
        third = _answer_select(rpc, "Always allow (save a rule)")
        assert "touch b.txt" in third["title"]
        _idle(rpc)
    finally:
        rpc.close()
    assert (pi.project / "a.txt").exists() and (pi.project / "b.txt").exists()
    settings = (pi.home / "settings.toml").read_text()
    assert "bash(touch b.txt)" in settings and "bash(touch a.txt)" not in settings


def test_rpc_accept_edits(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "in.txt", "content": "x"}, id="c1")]),
        Turn([ToolCall("bash", {"command": "touch b.txt"}, id="c2")]),
        Turn([Text("Done.")]),
    )
    rpc = RpcClient(pi, "--permission-mode", "accept-edits")
    try:
        rpc.send({"type": "prompt", "message": "go"})
        asked = _answer_select(rpc, "Deny")
        assert "touch b.txt" in asked["title"]
        reason = rpc.wait_for(
            lambda line: line.get("type") == "extension_ui_request" and line.get("method") == "input"
        )
        rpc.send_raw(
            json.dumps({"type": "extension_ui_response", "id": reason["id"], "cancelled": True}).encode()
            + b"\n"
        )
        _idle(rpc)
    finally:
        rpc.close()
    assert (pi.project / "in.txt").read_text() == "x"
    assert not (pi.project / "b.txt").exists()


def test_rpc_plan_mode_end_to_end(pi: PiHome) -> None:
    (pi.project / "a.py").write_text("x = 1\n")
    pi.server.enqueue(
        Turn([ToolCall("read", {"path": "a.py"}, id="c1")]),
        Turn(
            [ToolCall("edit", {"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}, id="c2")]
        ),
        Turn([Text("1. Change x to 2 in a.py")]),
        Turn(
            [ToolCall("edit", {"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}, id="c3")]
        ),
        Turn([Text("Done.")]),
    )
    rpc = RpcClient(pi, "--permission-mode", "plan")
    try:
        rpc.send({"type": "prompt", "message": "plan the change"})
        approval = _answer_select(rpc, "Execute the plan in mode accept-edits")
        assert "Keep planning" in approval["options"]
        rpc.event(
            "agent_end", timeout=30
        )  # the run that executes the plan (started by the gate: no agent_settled)
    finally:
        rpc.close()
    requests = pi.server.requests
    assert "Plan mode" in json.dumps(requests[0].json)  # the system prompt says it is planning
    assert "Plan mode: only read-only tools may run" in all_text(requests[2].json)
    assert "Execute the plan." in all_text(requests[3].json)
    assert "Plan mode" not in json.dumps(requests[3].json.get("system", ""))
    assert (pi.project / "a.py").read_text() == "x = 2\n"


def test_rpc_permissions_command_switches_mode(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "w.txt", "content": "x"}, id="c1")]), Turn([Text("Done.")])
    )
    rpc = RpcClient(pi, "--permission-mode", "deny")
    try:
        rpc.call({"type": "prompt", "message": "/permissions auto"})
        status = rpc.wait_for(
            lambda line: line.get("method") == "setStatus" and line.get("statusKey") == "permissions"
        )
        assert status.get("statusText") is None
        rpc.send({"type": "prompt", "message": "write"})
        _idle(rpc)
    finally:
        rpc.close()
    assert (pi.project / "w.txt").read_text() == "x"


def test_rpc_ask_unanswered_is_refused_after_the_timeout(pi: PiHome) -> None:
    """A client that never answers: the question expires (permissions.rpc_dialog_timeout), the call is refused."""
    (pi.home / "settings.toml").write_text("[permissions]\nrpc_dialog_timeout = 1\n")
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "late.txt", "content": "1"}, id="c1")]),
        Turn([Text("Done.")]),
    )
    rpc = RpcClient(pi, "--permission-mode", "ask")
    try:
        rpc.send({"type": "prompt", "message": "write"})
        request = rpc.wait_for(
            lambda line: line.get("type") == "extension_ui_request" and line.get("method") == "select"
        )
        assert request["timeout"] == 1000
        _idle(rpc)  # no answer is ever sent
    finally:
        rpc.close()
    assert not (pi.project / "late.txt").exists()
    assert "No one approved this call in time" in all_text(pi.server.requests[-1].json)
