"""The ``task`` tool end to end: real ``pi`` processes against the scripted server.

Each child agent answers from its own queue (``RoutedServer``, keyed by a word of the agent's
system prompt), so children running in parallel get their own scripts.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import PiHome, RpcClient, all_text
from tests.subagents.routed import RoutedServer
from tests.support.sse_server import Text, ToolCall, Turn

PI16 = next((p for p in (Path("/work/pi16"), Path("/tmp/pi16")) if p.is_dir()), Path("/work/pi16"))
PI16_PROGRAM = [
    str(PI16 / "node_modules" / ".bin" / "node"),
    str(PI16 / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js"),
]
COST = 'cost = { input = 100.0, output = 100.0, cache_read = 0.0, cache_write = 0.0 }'
USAGE = {"input": 10, "output": 10}
"""With ``COST``: $0.002 a turn."""


@pytest.fixture
def server() -> Iterator[RoutedServer]:
    with RoutedServer() as routed:
        yield routed


def _home(tmp_path: Path, server: RoutedServer, *, priced: bool = False) -> PiHome:
    home = PiHome(tmp_path, server)
    if priced:
        (home.home / "models.toml").write_text(
            "[providers.local]\n"
            'api = "anthropic-messages"\n'
            f'base_url = "{server.anthropic_base_url}"\n'
            'api_key = "none"\n'
            f'models = [{{ id = "test-model", context_window = 32768, max_tokens = 4096, {COST} }}]\n',
            encoding="utf-8",
        )
    agents = home.home / "agents"
    agents.mkdir()
    (agents / "alpha.md").write_text(
        "---\nname: alpha\ndescription: Runs shell commands\ntools: Bash\n---\nYou are ROUTE-ALPHA.\n", encoding="utf-8"
    )
    (agents / "beta.md").write_text(
        "---\nname: beta\ndescription: Reads files\ntools: Read, Grep\n---\nYou are ROUTE-BETA.\n", encoding="utf-8"
    )
    return home


def _task(agent: str, call_id: str, prompt: str = "do it") -> ToolCall:
    return ToolCall("task", {"description": f"{agent} job", "prompt": prompt, "subagent_type": agent}, id=call_id)


def _events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _tool_results(path: Path) -> dict[str, dict[str, Any]]:
    return {
        e["message"]["toolCallId"]: e["message"]
        for e in _entries(path)
        if e.get("type") == "message" and e["message"]["role"] == "toolResult"
    }


def _parent_file(home: PiHome) -> Path:
    files = [f for f in home.session_files() if "parentSession" not in _entries(f)[0]]
    assert len(files) == 1, files
    return files[0]


def test_two_children_run_in_parallel_and_both_answers_reach_the_parent(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    (home.project / "notes.txt").write_text("beta reads this\n", encoding="utf-8")
    server.barrier = {"ROUTE-ALPHA", "ROUTE-BETA"}  # each first request waits for the other's
    server.route("ROUTE-ALPHA", Turn([ToolCall("bash", {"command": "echo from-alpha"})]), Turn([Text("alpha answer")]))
    server.route("ROUTE-BETA", Turn([ToolCall("read", {"path": "notes.txt"})]), Turn([Text("beta answer")]))
    server.enqueue(Turn([_task("alpha", "t1"), _task("beta", "t2")]), Turn([Text("parent done")]))

    run = home.run("--model", "local/test-model", "--mode", "json", "go")

    assert run.returncode == 0, run.stderr
    final = server.requests[-1]
    assert server.marker_of(final) is None
    text = all_text(final.json)
    assert "alpha answer" in text and "beta answer" in text
    # each child's tool ran and its result went back to that child
    alpha = [r for r in server.requests if server.marker_of(r) == "ROUTE-ALPHA"]
    beta = [r for r in server.requests if server.marker_of(r) == "ROUTE-BETA"]
    assert "from-alpha" in all_text(alpha[-1].json) and "beta reads this" in all_text(beta[-1].json)
    # a child sees only its own tools and its own system prompt
    assert [t["name"] for t in alpha[0].json["tools"]] == ["bash"]
    assert sorted(t["name"] for t in beta[0].json["tools"]) == ["grep", "read"]
    # events: start and end for both, with the child session's id
    events = _events(run.stdout)
    starts = {e["toolCallId"]: e for e in events if e["type"] == "subagent_start"}
    ends = {e["toolCallId"]: e for e in events if e["type"] == "subagent_end"}
    assert set(starts) == set(ends) == {"t1", "t2"}
    assert ends["t1"]["turns"] == 2 and "stopped" not in ends["t1"]
    # the parent's tool results link the saved child sessions, which name the parent
    parent = _parent_file(home)
    results = _tool_results(parent)
    for call_id, agent in (("t1", "alpha"), ("t2", "beta")):
        details = results[call_id]["details"]
        assert details["agent"] == agent and details["sessionId"] == starts[call_id]["sessionId"]
        child = _entries(Path(details["sessionFile"]))
        assert child[0]["parentSession"] == str(parent) and child[0]["id"] == details["sessionId"]
        assert details["tools"] == ({"bash": 1} if agent == "alpha" else {"read": 1})
        assert details["firstRequestMs"] is not None


def test_a_child_limit_gives_the_parent_a_clear_tool_error(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    (home.home / "agents" / "alpha.md").write_text(
        "---\nname: alpha\ndescription: x\ntools: Bash\nmax_turns: 2\n---\nYou are ROUTE-ALPHA.\n", encoding="utf-8"
    )
    loop = [Turn([ToolCall("bash", {"command": f"echo step{i}"})]) for i in range(5)]
    server.route("ROUTE-ALPHA", *loop)
    server.enqueue(Turn([_task("alpha", "t1")]), Turn([Text("the child was stopped")]))

    run = home.run("--model", "local/test-model", "-p", "go")

    assert run.returncode == 0, run.stderr
    assert "the child was stopped" in run.stdout
    assert len([r for r in server.requests if server.marker_of(r) == "ROUTE-ALPHA"]) == 2  # stopped between steps
    result = _tool_results(_parent_file(home))["t1"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "Subagent alpha stopped: subagent alpha: turn limit reached (max_turns 2; 2 turns" in text
    assert "Child session: " in text


def test_a_run_wide_budget_stops_every_child_and_the_parent_and_exits_1(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server, priced=True)
    server.barrier = {"ROUTE-ALPHA", "ROUTE-BETA"}
    for marker in ("ROUTE-ALPHA", "ROUTE-BETA"):
        server.route(marker, *[Turn([ToolCall("bash", {"command": "echo step"})], usage=USAGE) for _ in range(6)])
    server.enqueue(Turn([_task("alpha", "t1"), _task("beta", "t2")], usage=USAGE), Turn([Text("never asked")]))

    run = home.run("--model", "local/test-model", "--max-budget-usd", "0.005", "-p", "go")

    assert run.returncode == 1
    assert "Stopped: the run: budget reached (--max-budget-usd 0.005;" in run.stderr
    assert server.pending == 1  # the parent asked nothing after its children
    children = [r for r in server.requests if server.marker_of(r) is not None]
    assert 3 <= len(children) <= 4  # $0.006 reached on the third child turn; the other stops at its next
    parent = _parent_file(home)
    results = _tool_results(parent)
    assert results["t1"]["isError"] and results["t2"]["isError"]
    assert all("budget reached" in results[c]["content"][0]["text"] for c in ("t1", "t2"))
    # The prompt's undo point may follow the results or not (its snapshot races the stop); the
    # conversation itself ends with the tool results: the parent asked nothing more.
    messages = [e for e in _entries(parent) if e["type"] == "message"]
    assert messages[-1]["message"]["role"] == "toolResult"


def test_max_turns_counts_the_children_too(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    server.route("ROUTE-ALPHA", *[Turn([ToolCall("bash", {"command": "echo step"})]) for _ in range(6)])
    server.enqueue(Turn([_task("alpha", "t1")]), Turn([Text("never asked")]))

    run = home.run("--model", "local/test-model", "--max-turns", "3", "-p", "go")

    assert run.returncode == 1
    assert "Stopped: the run: turn limit reached (--max-turns 3;" in run.stderr
    assert len([r for r in server.requests if server.marker_of(r) == "ROUTE-ALPHA"]) == 3
    assert server.pending == 1


def _processes_with(word: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if word in cmdline:
            found.append(int(pid))
    return found


def test_abort_during_children_leaves_no_process_and_a_valid_session_tree(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    marker = f"sleep {os.getpid() % 1000 + 1000}"
    server.route("ROUTE-ALPHA", Turn([ToolCall("bash", {"command": marker})]), Turn([Text("unused")]))
    server.route("ROUTE-BETA", Turn([Text("waiting")], hang=math.inf))
    server.enqueue(Turn([_task("alpha", "t1"), _task("beta", "t2")]), Turn([Text("after abort")]))
    rpc = RpcClient(home, "--model", "local/test-model")
    try:
        rpc.call({"type": "prompt", "message": "go"})
        rpc.wait_for(lambda e: e.get("type") == "subagent_update" and e.get("tool") == "bash", timeout=30)
        deadline = time.monotonic() + 20
        while not _processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _processes_with(marker), "the child's bash command did not start"
        rpc.call({"type": "abort"})
        rpc.seen_or_next("agent_end", timeout=30)
        ends = [e for e in rpc.seen if e.get("type") == "subagent_end"]
        assert {e["toolCallId"] for e in ends} == {"t1", "t2"} and all(e["stopped"] == "aborted" for e in ends)
        state = rpc.call({"type": "get_state"})["data"]
    finally:
        rpc.close()
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _processes_with(marker)
    parent = Path(state["sessionFile"])
    results = _tool_results(parent)
    assert set(results) == {"t1", "t2"} and all(r["isError"] for r in results.values())
    for child in home.session_files():
        entries = _entries(child)  # every line parses
        assert entries[0]["type"] == "session"
        ids = {e["id"] for e in entries[1:]}
        assert all(e["parentId"] is None or e["parentId"] in ids for e in entries[1:])


@pytest.mark.skipif(not (PI16 / "node_modules").is_dir(), reason="Pi 1.6 is not installed at /work/pi16")
def test_pi16_opens_the_parent_session(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    server.route("ROUTE-BETA", Turn([Text("beta answer")]))
    server.enqueue(Turn([_task("beta", "t1")]), Turn([Text("parent done")]))
    run = home.run("--model", "local/test-model", "-p", "go")
    assert run.returncode == 0, run.stderr
    parent = _parent_file(home)

    agent = tmp_path / "pi16home" / ".pi" / "agent"
    agent.mkdir(parents=True)
    model = {"id": "test-model", "contextWindow": 32768, "maxTokens": 4096}
    provider = {"baseUrl": server.anthropic_base_url, "api": "anthropic-messages", "apiKey": "none", "models": [model]}
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.update(HOME=str(tmp_path / "pi16home"), PI_OFFLINE="1")
    server.enqueue(Turn([Text("continued by pi")]))
    pi16 = subprocess.run(
        [*PI16_PROGRAM, "--session", str(parent), "--model", "local/test-model", "-p", "next"],
        cwd=home.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert pi16.returncode == 0, pi16.stderr
    assert "continued by pi" in pi16.stdout
    text = all_text(server.requests[-1].json)
    assert "beta answer" in text and "parent done" in text


CLAUDE_AGENT = """---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
color: blue
---

You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Run git diff to see recent changes
2. Focus on modified files
3. Begin review immediately
"""


def test_a_claude_code_agent_file_works_as_is(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    folder = home.project / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "code-reviewer.md").write_text(CLAUDE_AGENT, encoding="utf-8")
    server.route("senior code reviewer", Turn([Text("looks good")]))
    server.enqueue(Turn([_task("code-reviewer", "t1")]), Turn([Text("parent done")]))

    run = home.run("--model", "local/test-model", "-a", "-p", "review")

    assert run.returncode == 0, run.stderr
    assert "code-reviewer: Expert code review specialist" in json.dumps(server.requests[0].json["tools"])
    child = next(r for r in server.requests if server.marker_of(r) == "senior code reviewer")
    assert sorted(t["name"] for t in child.json["tools"]) == ["bash", "find", "grep", "read"]
    assert "looks good" in all_text(server.requests[-1].json)


def test_project_agents_need_trust(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    folder = home.project / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "code-reviewer.md").write_text(CLAUDE_AGENT, encoding="utf-8")
    server.enqueue(Turn([_task("code-reviewer", "t1")]), Turn([Text("parent done")]))

    run = home.run("--model", "local/test-model", "-na", "-p", "review")

    assert run.returncode == 0, run.stderr
    assert "code-reviewer" not in json.dumps(server.requests[0].json["tools"])
    result = _tool_results(_parent_file(home))["t1"]
    assert result["isError"] and 'unknown subagent_type "code-reviewer"' in result["content"][0]["text"]


def test_no_subagents_leaves_the_task_tool_out(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    server.enqueue(Turn([Text("ok")]))
    run = home.run("--model", "local/test-model", "--no-subagents", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert "task" not in [t["name"] for t in server.requests[0].json["tools"]]


def test_plan_mode_delegates_only_to_read_only_agents(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    (home.project / "notes.txt").write_text("plan notes\n", encoding="utf-8")
    server.route("ROUTE-BETA", Turn([ToolCall("read", {"path": "notes.txt"})]), Turn([Text("beta answer")]))
    server.enqueue(Turn([_task("alpha", "t1"), _task("beta", "t2")]), Turn([Text("planned")]))

    run = home.run("--model", "local/test-model", "--permission-mode", "plan", "-p", "plan it")

    assert run.returncode == 0, run.stderr
    assert not [r for r in server.requests if server.marker_of(r) == "ROUTE-ALPHA"]
    results = _tool_results(_parent_file(home))
    assert results["t1"]["isError"] and 'plan mode: agent "alpha" may change files' in results["t1"]["content"][0]["text"]
    assert not results["t2"]["isError"] and "beta answer" in results["t2"]["content"][0]["text"]


def test_a_child_obeys_the_parent_permission_mode(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    server.route(
        "ROUTE-ALPHA", Turn([ToolCall("bash", {"command": "touch made-by-child"})]), Turn([Text("could not touch")])
    )
    server.enqueue(Turn([_task("alpha", "t1")]), Turn([Text("parent done")]))

    run = home.run("--model", "local/test-model", "--permission-mode", "ask", "-p", "go")  # no UI: "ask" refuses

    assert run.returncode == 0, run.stderr
    assert not (home.project / "made-by-child").exists()
    child_last = [r for r in server.requests if server.marker_of(r) == "ROUTE-ALPHA"][-1]
    child_results = [
        b for m in child_last.json["messages"] if isinstance(m["content"], list) for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert child_results and child_results[0].get("is_error") is True
    assert "could not touch" in all_text(server.requests[-1].json)


def test_agents_command_lists_the_agents_with_their_source(tmp_path: Path, server: RoutedServer) -> None:
    home = _home(tmp_path, server)
    rpc = RpcClient(home, "--model", "local/test-model")
    try:
        commands = rpc.call({"type": "get_commands"})["data"]["commands"]
        assert "agents" in [c["name"] for c in commands]
        rpc.call({"type": "prompt", "message": "/agents"})
        note = rpc.wait_for(lambda line: line.get("method") == "notify")
    finally:
        rpc.close()
    lines = note["message"].splitlines()
    assert f"alpha (user: {home.home / 'agents' / 'alpha.md'}): Runs shell commands" in lines
    assert any(line.startswith("general-purpose (built-in): ") for line in lines)
    assert not server.requests  # a command, not a prompt
