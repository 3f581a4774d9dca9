"""The first-party extensions (extensions §8) in the real ``pi`` with the scripted server."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from pi_coder.extensions.builtin.permission_gate import NO_UI_REASON
from pi_coder.extensions.builtin.plan_mode import PLAN_PROMPT, parse_plan
from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import Text, ToolCall, Turn


def _tool_results(request: dict[str, Any]) -> list[tuple[str, bool]]:
    """(text, is_error) of the tool results in an Anthropic request."""
    out = []
    for message in request["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
                out.append((text, bool(block.get("is_error"))))
    return out


def _system(request: dict[str, Any]) -> str:
    system = request.get("system")
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


def test_permission_gate_blocks_dangerous_bash_without_a_ui(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": f"rm -rf {pi.project / 'keep'}"}, id="c1")]),
        Turn([ToolCall("bash", {"command": "echo fine"}, id="c2")]),
        Turn([Text("done")]),
    )
    (pi.project / "keep").mkdir()
    run = pi.run("-e", "builtin:permission-gate", "-p", "clean up")
    assert run.returncode == 0, run.stderr
    assert (pi.project / "keep").is_dir()
    assert _tool_results(pi.server.requests[1].json) == [(NO_UI_REASON, True)]
    assert _tool_results(pi.server.requests[2].json)[-1] == ("fine\n", False) or "fine" in _tool_results(
        pi.server.requests[2].json
    )[-1][0]


def test_permission_gate_asks_over_rpc(pi: PiHome) -> None:
    pi.server.enqueue(Turn([ToolCall("bash", {"command": "sudo true"}, id="c1")]), Turn([Text("ok")]))
    client = RpcClient(pi, "-e", "builtin:permission-gate")
    try:
        client.send({"type": "prompt", "message": "go"})
        request = client.event("extension_ui_request")
        assert request["method"] == "select"
        assert request["options"] == ["Allow once", "Allow for this session", "Block"]
        client.send_raw((json.dumps({"type": "extension_ui_response", "id": request["id"], "value": "Block"}) + "\n").encode())
        client.event("agent_end")
    finally:
        client.close()
    assert _tool_results(pi.server.requests[1].json) == [("blocked by permission-gate: the user refused", True)]


def test_protected_paths_blocks_env_and_git(pi: PiHome) -> None:
    (pi.project / ".git").mkdir()
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": ".env", "content": "KEY=1"}, id="c1"),
              ToolCall("write", {"path": ".git/config", "content": "x"}, id="c2"),
              ToolCall("write", {"path": "ok.txt", "content": "fine"}, id="c3")]),
        Turn([Text("done")]),
    )
    run = pi.run("-e", "builtin:protected-paths", "-p", "write")
    assert run.returncode == 0, run.stderr
    assert not (pi.project / ".env").exists() and not (pi.project / ".git" / "config").exists()
    assert (pi.project / "ok.txt").read_text() == "fine"
    results = _tool_results(pi.server.requests[1].json)
    assert results[:2] == [("Path .env is protected", True), ("Path .git/config is protected", True)]
    assert "[protected-paths] warning: Blocked write of protected path .env" in run.stderr


def test_todo_list_lives_in_details_and_follows_the_session(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn([ToolCall("todo", {"action": "add", "text": "write tests"}, id="c1")]),
        Turn([ToolCall("todo", {"action": "add", "text": "ship"}, id="c2")]),
        Turn([ToolCall("todo", {"action": "toggle", "id": 1}, id="c3")]),
        Turn([Text("done")]),
    )
    run = pi.run("-e", "builtin:todo", "-p", "plan")
    assert run.returncode == 0, run.stderr
    assert _tool_results(pi.server.requests[3].json)[-1] == ("1. [x] write tests\n2. [ ] ship", False)
    (session,) = pi.session_files()
    details = [json.loads(line)["message"].get("details") for line in session.read_text().splitlines()
               if '"toolResult"' in line]
    assert details[-1] == {"items": [{"id": 1, "text": "write tests", "done": True}, {"id": 2, "text": "ship", "done": False}]}

    # Continuing the session rebuilds the list from the branch: a list action sees both items.
    pi.server.enqueue(Turn([ToolCall("todo", {"action": "list"}, id="c4")]), Turn([Text("ok")]))
    run = pi.run("-e", "builtin:todo", "-c", "-p", "again")
    assert run.returncode == 0, run.stderr
    assert _tool_results(pi.server.requests[5].json)[-1] == ("1. [x] write tests\n2. [ ] ship", False)


def test_plan_mode_flag_makes_the_run_read_only(pi: PiHome) -> None:
    assert parse_plan("Thoughts\nPlan:\n1. Read it\n2) Fix it\n") == ["Read it", "Fix it"]
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "touch made"}, id="c1"), ToolCall("bash", {"command": "git status"}, id="c2")]),
        Turn([Text("Plan:\n1. Do it")]),
    )
    run = pi.run("-e", "builtin:plan-mode", "--plan", "-p", "fix the bug")
    assert run.returncode == 0, run.stderr
    first = pi.server.requests[0].json
    # read-only built-ins, also those off by default (as Pi's plan mode)
    assert sorted(t["name"] for t in first["tools"]) == ["bash", "find", "grep", "ls", "read"]
    assert PLAN_PROMPT.strip() in _system(first)
    assert not (pi.project / "made").exists()
    assert _tool_results(pi.server.requests[1].json)[0][1] is True


def test_git_checkpoint_restores_files_on_fork(pi: PiHome) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=pi.project, check=True)
    (pi.project / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], cwd=pi.project, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=pi.project, check=True)
    (pi.project / "a.txt").write_text("two\n")  # uncommitted work the first turn starts from
    pi.server.enqueue(Turn([Text("first")]), Turn([Text("second")]))
    client = RpcClient(pi, "-e", "builtin:git-checkpoint")
    try:
        client.call({"type": "prompt", "message": "one"})
        client.event("agent_end")
        subprocess.run(["git", "checkout", "-q", "a.txt"], cwd=pi.project, check=True)  # work lost after turn one
        client.call({"type": "prompt", "message": "two"})
        client.event("agent_end")
        forks = client.call({"type": "get_fork_messages"})["data"]["messages"]
        client.send({"type": "fork", "entryId": forks[0]["entryId"]})  # back before "one"
        request = client.event("extension_ui_request")
        assert request["method"] == "confirm"
        client.send_raw((json.dumps({"type": "extension_ui_response", "id": request["id"], "confirmed": True}) + "\n").encode())
        response = client.event("response")
        assert response["command"] == "fork" and response["data"]["cancelled"] is False
    finally:
        client.close()
    assert (pi.project / "a.txt").read_text() == "two\n"  # the state the first turn started from
