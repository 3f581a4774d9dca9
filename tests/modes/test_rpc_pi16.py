"""RPC responses and compaction retry events against Pi 1.6's, captured for the same script.

``tests/modes/rpc_capture.py`` runs one conversation (``get_available_thinking_levels``,
``set_auto_retry``, ``abort_retry``, ``get_commands``, ``get_entries``, ``get_tree``,
``clear_queue``, ``clone`` and a ``compact`` whose first summary request gets a 529) against Pi
1.6 (``tests/session/golden/pi16/rpc_commands.jsonl``) and here against ``pi --mode rpc``. Each
step must give a record of the same shape: the same keys, the same data keys, the same event
sequence, and equal data where both programs see the same facts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import RpcClient
from tests.modes.rpc_capture import GOLDEN, pi_coder_home, run_scenario
from tests.support.sse_server import SSEServer

# Deliberate differences (see README "Programs: JSON and RPC modes"):
# - set_auto_retry without "enabled": Pi accepts it and does nothing, pi_coder answers with an error.
# - get_commands: Pi lists its built-in llama and mcp extensions; pi_coder's /mcp is a TUI command.
# - Pi stores its system prompt as a message entry; pi_coder declares it per request.
# - Pi's entries and messages carry extra fields (durationMs, rawStopReason, responseId, cacheWrite1h).
DIFFERENT_ANSWER = {"set_auto_retry_bad"}
EQUAL_DATA = {
    "get_available_thinking_levels",
    "set_auto_retry_off",
    "set_auto_retry_on",
    "abort_retry_idle",
    "prompt",
    "prompt_two",
    "prompt_hang",
    "steer",
    "follow_up",
    "clear_queue",
    "clear_queue_empty",
    "abort",
    "clone",
}
ENTRY_KEYS = {"type", "id", "parentId", "timestamp"}


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    theirs = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    with SSEServer() as server:
        pi = pi_coder_home(tmp_path_factory.mktemp("rpc16"), server)
        rpc = RpcClient(pi)
        try:
            ours = run_scenario(rpc, server)
        finally:
            assert rpc.close(60) == 0
    return ours, theirs


def _step(records: list[dict[str, Any]], step: str) -> dict[str, Any]:
    return next(r["record"] for r in records if r["step"] == step)


def _without_system(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("message", {}).get("role") != "system"]


def test_same_steps_and_record_keys(records: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    ours, theirs = records
    assert [r["step"] for r in ours] == [r["step"] for r in theirs]
    for mine, pis in zip(ours, theirs, strict=True):
        if mine["step"] in DIFFERENT_ANSWER:
            continue
        a, b = mine["record"], pis["record"]
        assert set(a) == set(b), mine["step"]
        assert a.get("success") == b.get("success"), mine["step"]
        if isinstance(b.get("data"), dict):
            assert set(a["data"]) == set(b["data"]), mine["step"]
        if mine["step"] in EQUAL_DATA:
            assert a.get("data") == b.get("data"), mine["step"]


def test_entries_and_tree_shapes(records: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    ours, theirs = records
    for step in ("get_entries", "get_entries_since"):
        mine, pis = _step(ours, step)["data"], _step(theirs, step)["data"]
        assert [e["type"] for e in _without_system(mine["entries"])] == [
            e["type"] for e in _without_system(pis["entries"])
        ]
        assert all(ENTRY_KEYS <= set(e) for e in mine["entries"])
        assert mine["leafId"] == mine["entries"][-1]["id"]
    assert _step(ours, "get_entries_bad_since")["error"] == _step(theirs, "get_entries_bad_since")["error"]

    def node_keys(nodes: list[dict[str, Any]]) -> set[frozenset[str]]:
        out: set[frozenset[str]] = set()
        for node in nodes:
            out.add(frozenset(node))
            out |= node_keys(node["children"])
        return out

    mine, pis = _step(ours, "get_tree")["data"], _step(theirs, "get_tree")["data"]
    assert set(mine) == set(pis) == {"tree", "leafId"}
    assert node_keys(mine["tree"]) == node_keys(pis["tree"]) == {frozenset({"entry", "children"})}


def test_compaction_retry_events_match(records: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    ours, theirs = records

    def events(rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r["record"] for r in rs if r["step"] == "compact_event"]

    mine, pis = events(ours), events(theirs)
    assert [e["type"] for e in mine] == [e["type"] for e in pis] == [
        "compaction_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
        "compaction_end",
    ]
    for a, b in zip(mine, pis, strict=True):
        assert set(a) == set(b), a["type"]
        if a["type"] != "summarization_retry_scheduled":
            assert {k: v for k, v in a.items() if k != "result"} == {k: v for k, v in b.items() if k != "result"}
    scheduled = mine[1]
    assert (scheduled["attempt"], scheduled["maxAttempts"], scheduled["delayMs"]) == (1, 3, 200)
    assert "529" in scheduled["errorMessage"]
    assert set(mine[-1]["result"]) == set(pis[-1]["result"])
    assert set(mine[-1]["result"]["usage"]) >= {"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}
    assert mine[-1]["result"]["usage"]["input"] == pis[-1]["result"]["usage"]["input"] == 60


def test_clone_switches_to_a_new_session_file(
    records: tuple[list[dict[str, Any]], list[dict[str, Any]]], tmp_path: Path
) -> None:
    ours, _ = records
    state = _step(ours, "get_state_after_clone")["data"]
    header, *entries = [json.loads(line) for line in Path(state["sessionFile"]).read_text().splitlines()]
    assert header["type"] == "session" and "parentSession" in header
    assert any(e["type"] == "compaction" for e in entries)
