"""The MCP client end to end through ``pi -p``: the scripted model calls real servers' tools."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.mcp.conftest import HANG, PY, alive, tiny, wait_dead, write_mcp
from tests.modes.pirun import PiHome, all_text
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server, "anthropic")
    # The first prompt waits for the servers; on a loaded machine importing the SDK (in pi and
    # in each test server) can take several seconds, so wait longer than the default 10 s.
    (home.home / "settings.toml").write_text("[mcp]\nstartup_wait = 90\n", encoding="utf-8")
    return home


def script_call(server: SSEServer, name: str, args: dict, answer: str = "done") -> None:
    server.enqueue(Turn(blocks=[ToolCall(name, args, id="c1")]), Turn(blocks=[Text(answer)]))


def tool_result_text(server: SSEServer, index: int = 1) -> str:
    return all_text(server.requests[index].json)


def result_text(block: dict) -> str:
    """The text of one Anthropic ``tool_result`` block (a string, or a list of text blocks)."""
    content = block["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_stdio_tool_call_through_pi_p(pi: PiHome, sse_server: SSEServer) -> None:
    write_mcp(pi.home / "mcp.json", {"tiny": tiny()})
    script_call(sse_server, "mcp__tiny__add", {"a": 2, "b": 3})
    done = pi.run("-p", "add them")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    first = sse_server.requests[0].json
    declared = [t["name"] for t in first.get("tools", [])]
    assert "mcp__tiny__add" in declared
    add = next(t for t in first["tools"] if t["name"] == "mcp__tiny__add")
    assert add["input_schema"]["required"] == ["a", "b"]
    result = sse_server.requests[1].json["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result_text(result) == "5"


def test_garbage_on_stdout_is_skipped(pi: PiHome, sse_server: SSEServer) -> None:
    write_mcp(pi.home / "mcp.json", {"tiny": tiny("--garbage")})
    script_call(sse_server, "mcp__tiny__echo", {"text": "still works"})
    done = pi.run("-p", "echo")
    assert done.returncode == 0, done.stderr
    assert "still works" in tool_result_text(sse_server)


def test_published_server_from_pypi(pi: PiHome, sse_server: SSEServer) -> None:
    """mcp-server-time (the test extra), started by its console script."""
    script = Path(PY).with_name("mcp-server-time")
    write_mcp(pi.home / "mcp.json", {"time": {"command": str(script), "args": ["--local-timezone", "UTC"]}})
    script_call(sse_server, "mcp__time__get_current_time", {"timezone": "Europe/Paris"})
    done = pi.run("-p", "what time is it")
    assert done.returncode == 0, done.stderr
    text = tool_result_text(sse_server)
    assert "Europe/Paris" in text and "datetime" in text


def test_http_server(pi: PiHome, sse_server: SSEServer, http_server) -> None:
    write_mcp(pi.home / "mcp.json", {"web": {"url": http_server.url, "headers": {"X-Test": "${HOME}"}}})
    script_call(sse_server, "mcp__web__add", {"a": 20, "b": 22})
    done = pi.run("-p", "add")
    assert done.returncode == 0, done.stderr
    assert result_text(sse_server.requests[1].json["messages"][-1]["content"][0]) == "42"


def test_hanging_missing_sse_and_healthy_servers(pi: PiHome, sse_server: SSEServer, tmp_path: Path) -> None:
    """One notice each for the broken ones; the healthy one works; exit 0; the hung group is killed."""
    pid_file = tmp_path / "hang.pid"
    write_mcp(
        pi.home / "mcp.json",
        {
            "hang": {"command": PY, "args": [HANG], "timeout": 1, "env": {"HANG_PID_FILE": str(pid_file)}},
            "missing": {"command": "/nonexistent/mcp-server"},
            "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
            "tiny": tiny(),
        },
    )
    script_call(sse_server, "mcp__tiny__add", {"a": 1, "b": 1})
    started = time.monotonic()
    done = pi.run("-p", "go")
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    assert done.stderr.count('MCP server "hang" failed') == 1
    assert "did not finish connecting within 1 s" in done.stderr
    assert "hanging forever" in done.stderr  # the stderr tail
    assert done.stderr.count('MCP server "missing" failed') == 1
    assert done.stderr.count("SSE transport is not supported") == 1
    assert elapsed < 20
    pids = [int(p) for p in pid_file.read_text().split()]
    assert all(wait_dead(p) for p in pids), "the hung server's group must be killed"


def test_crash_mid_call_then_reconnect(pi: PiHome, sse_server: SSEServer) -> None:
    write_mcp(pi.home / "mcp.json", {"tiny": tiny()})
    sse_server.enqueue(
        Turn(blocks=[ToolCall("mcp__tiny__crash", {}, id="c1")]),
        Turn(blocks=[ToolCall("mcp__tiny__add", {"a": 4, "b": 5}, id="c2")]),
        Turn(blocks=[Text("ok")]),
    )
    done = pi.run("-p", "crash it")
    assert done.returncode == 0, done.stderr
    crashed = sse_server.requests[1].json["messages"][-1]["content"][0]
    assert crashed.get("is_error") is True
    after = sse_server.requests[2].json["messages"][-1]["content"][0]
    assert result_text(after) == "9"
    assert 'MCP server "tiny" disconnected' in done.stderr


def test_exit_leaves_no_server_alive(pi: PiHome, sse_server: SSEServer) -> None:
    write_mcp(pi.home / "mcp.json", {"one": tiny(), "two": tiny()})
    sse_server.enqueue(
        Turn(blocks=[ToolCall("mcp__one__pid", {}, id="c1"), ToolCall("mcp__two__pid", {}, id="c2")]),
        Turn(blocks=[Text("ok")]),
    )
    done = pi.run("-p", "pids")
    assert done.returncode == 0, done.stderr
    results = sse_server.requests[1].json["messages"][-1]["content"]
    texts = [result_text(block) for block in results]
    assert all(t.isdigit() for t in texts), (texts, done.stderr)
    pids = [int(t) for t in texts]
    assert len(pids) == 2
    assert not any(alive(p) for p in pids)


def test_no_mcp_starts_nothing(pi: PiHome, sse_server: SSEServer, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    write_mcp(pi.home / "mcp.json", {"tiny": tiny("--marker", str(marker))})
    sse_server.enqueue(Turn(blocks=[Text("hi")]))
    done = pi.run("--no-mcp", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert not any(t["name"].startswith("mcp__") for t in sse_server.requests[0].json.get("tools", []))


def test_hidden_tool_is_not_declared(pi: PiHome, sse_server: SSEServer) -> None:
    write_mcp(pi.home / "mcp.json", {"tiny": tiny(toolExposure={"echo": "hidden"})})
    script_call(sse_server, "mcp__tiny__echo", {"text": "x"})
    done = pi.run("-p", "echo")
    assert done.returncode == 0, done.stderr
    declared = [t["name"] for t in sse_server.requests[0].json.get("tools", [])]
    assert "mcp__tiny__add" in declared and "mcp__tiny__echo" not in declared
    assert "mcp__tiny__echo" in json.dumps(sse_server.requests[1].json["messages"][-1])
    assert sse_server.requests[1].json["messages"][-1]["content"][0].get("is_error") is True


def test_deferred_tools_are_declared_by_tool_search(pi: PiHome, sse_server: SSEServer) -> None:
    """``exposure: deferred``: only ``tool_search`` is declared; its matches are declared for the next call."""
    write_mcp(pi.home / "mcp.json", {"tiny": tiny(exposure="deferred", toolExposure={"pid": "direct"})})
    sse_server.enqueue(
        Turn(blocks=[ToolCall("tool_search", {"query": "add integers", "limit": 1}, id="c1")]),
        Turn(blocks=[ToolCall("mcp__tiny__add", {"a": 2, "b": 3}, id="c2")]),
        Turn(blocks=[Text("done")]),
    )
    done = pi.run("-p", "add")
    assert done.returncode == 0, done.stderr
    declared = [[t["name"] for t in r.json.get("tools", [])] for r in sse_server.requests]
    assert "tool_search" in declared[0] and "mcp__tiny__pid" in declared[0]
    assert not any(n in declared[0] for n in ("mcp__tiny__add", "mcp__tiny__echo"))
    found = result_text(sse_server.requests[1].json["messages"][-1]["content"][0])
    assert "Declared for your next call:\n- mcp__tiny__add: Add two integers." == found
    assert "mcp__tiny__add" in declared[1] and "mcp__tiny__echo" not in declared[1]
    assert result_text(sse_server.requests[2].json["messages"][-1]["content"][0]) == "5"


def test_tool_search_finds_nothing(pi: PiHome, sse_server: SSEServer) -> None:
    write_mcp(pi.home / "mcp.json", {"tiny": tiny(exposure="codemode")})
    sse_server.enqueue(Turn(blocks=[ToolCall("tool_search", {"query": "weather"}, id="c1")]), Turn(blocks=[Text("ok")]))
    done = pi.run("-p", "find")
    assert done.returncode == 0, done.stderr
    assert result_text(sse_server.requests[1].json["messages"][-1]["content"][0]) == 'No undeclared tool matches "weather".'


def test_no_tools_declares_no_mcp_tools(pi: PiHome, sse_server: SSEServer) -> None:
    """``-nt``: no tools at all, MCP ones included (Pi's rule); ``-t mcp__...`` still picks some."""
    write_mcp(pi.home / "mcp.json", {"tiny": tiny()})
    sse_server.enqueue(Turn(blocks=[Text("none")]), Turn(blocks=[Text("one")]))
    done = pi.run("-nt", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert sse_server.requests[0].json.get("tools", []) == []
    done = pi.run("-nt", "-t", "mcp__tiny__add", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert [t["name"] for t in sse_server.requests[1].json.get("tools", [])] == ["mcp__tiny__add"]
