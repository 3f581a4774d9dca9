"""Pi 1.6 RPC commands: clear_queue, get_entries, get_tree, get_available_thinking_levels, clone (a real process)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, Turn


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, "anthropic")


@pytest.fixture
def rpc(pi: PiHome) -> Iterator[RpcClient]:
    client = RpcClient(pi, "--no-session")
    yield client
    client.close()


def test_clear_queue_returns_the_queued_texts(pi: PiHome, rpc: RpcClient) -> None:
    pi.server.enqueue(Turn([Text("never")], hang=math.inf))
    rpc.call({"type": "prompt", "message": "go"})
    assert pi.server.wait_for_requests(1, timeout=30)
    assert rpc.call({"type": "steer", "message": "Change direction"})["success"]
    assert rpc.call({"type": "follow_up", "message": "Summarize when finished"})["success"]
    cleared = rpc.call({"type": "clear_queue"})
    assert cleared["success"] and cleared["command"] == "clear_queue"
    assert cleared["data"] == {"steering": ["Change direction"], "followUp": ["Summarize when finished"]}
    assert rpc.call({"type": "get_state"})["data"]["pendingMessageCount"] == 0
    assert rpc.call({"type": "clear_queue"})["data"] == {"steering": [], "followUp": []}
    rpc.call({"type": "abort"})


def test_available_thinking_levels(rpc: RpcClient) -> None:
    response = rpc.call({"type": "get_available_thinking_levels"})
    assert response["success"] and response["data"] == {"levels": ["off"]}  # test-model has no reasoning


def test_entries_tree_and_clone(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("answer one")]), Turn([Text("answer two")]))
    rpc = RpcClient(pi)
    try:
        start = rpc.call({"type": "get_entries"})["data"]  # the model and thinking level entries
        assert start["leafId"] == start["entries"][-1]["id"]
        rpc.call({"type": "prompt", "message": "question one"})
        rpc.event("agent_end")
        rpc.call({"type": "prompt", "message": "question two"})
        rpc.event("agent_end")
        data = rpc.call({"type": "get_entries"})["data"]
        messages = [e for e in data["entries"] if e["type"] == "message"]
        assert [e["message"]["role"] for e in messages] == ["user", "assistant", "user", "assistant"]
        assert all("id" in e and "parentId" in e for e in data["entries"])
        assert data["leafId"] == data["entries"][-1]["id"]
        since = rpc.call({"type": "get_entries", "since": messages[1]["id"]})["data"]["entries"]
        assert [e["id"] for e in since] == [e["id"] for e in data["entries"]][
            [e["id"] for e in data["entries"]].index(messages[1]["id"]) + 1 :
        ]
        bad = rpc.call({"type": "get_entries", "since": "nope"})
        assert bad["success"] is False

        tree = rpc.call({"type": "get_tree"})["data"]
        assert tree["leafId"] == data["leafId"] and len(tree["tree"]) == 1
        node, depth = tree["tree"][0], 1
        while node["children"]:
            assert len(node["children"]) == 1 and node["children"][0]["entry"]["parentId"] == node["entry"]["id"]
            node, depth = node["children"][0], depth + 1
        assert depth == len(data["entries"]) and node["entry"]["id"] == data["leafId"]

        first = rpc.call({"type": "get_state"})["data"]
        cloned = rpc.call({"type": "clone"})
        assert cloned["success"] and cloned["data"] == {"cancelled": False}
        after = rpc.call({"type": "get_state"})["data"]
        assert after["sessionId"] != first["sessionId"] and after["messageCount"] == 4
        assert after["sessionFile"] != first["sessionFile"] and Path(after["sessionFile"]).exists()
        lines = [json.loads(x) for x in Path(after["sessionFile"]).read_text().splitlines()]
        assert lines[0]["parentSession"] == first["sessionFile"]
        assert [x["id"] for x in lines[1:]] == [e["id"] for e in data["entries"]]
    finally:
        assert rpc.close() == 0


def test_bash_execution_update_carries_id_and_delta(rpc: RpcClient) -> None:
    script = "for i in 1 2 3; do echo line$i; sleep 0.3; done"
    request_id = rpc.send({"id": "req-1", "type": "bash", "command": script})
    assert request_id == "req-1"
    done = rpc.response(request_id)
    assert done["success"] and done["data"]["output"].strip() == "line1\nline2\nline3"
    updates = [line for line in rpc.seen if line.get("type") == "bash_execution_update"]
    assert len(updates) >= 2  # streamed as it arrived, not once at the end
    assert all(set(u) == {"type", "id", "delta"} and u["id"] == "req-1" for u in updates)
    assert "".join(u["delta"] for u in updates) == "line1\nline2\nline3\n"
