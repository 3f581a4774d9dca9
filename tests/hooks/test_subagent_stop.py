"""SubagentStop: a Claude Code hook runs when a ``task`` tool's child agent has ended."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hooks.conftest import HookHome, hook
from tests.subagents.routed import RoutedServer
from tests.support.sse_server import Text, ToolCall, Turn


@pytest.fixture
def routed() -> Iterator[RoutedServer]:
    with RoutedServer() as server:
        yield server


def test_subagent_stop_gets_the_child_agent_and_its_transcript(tmp_path: Path, routed: RoutedServer) -> None:
    home = HookHome(tmp_path, routed, "anthropic")
    agents = home.home / "agents"
    agents.mkdir()
    (agents / "reader.md").write_text(
        "---\nname: reader\ndescription: Reads files\ntools: Read\n---\nYou are ROUTE-READER.\n",
        encoding="utf-8",
    )
    seen = tmp_path / "seen.jsonl"
    home.claude_settings({"SubagentStop": hook(f"cat >> {seen}; echo >> {seen}")}, where="user")
    routed.route("ROUTE-READER", Turn([Text("the reader's answer")]))
    task = ToolCall("task", {"description": "read", "prompt": "read it", "subagent_type": "reader"}, id="t1")
    routed.enqueue(Turn([task]), Turn([Text("parent done")]))

    run = home.run("-p", "go")

    assert run.returncode == 0, run.stderr
    assert "parent done" in run.stdout
    events = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
    assert len(events) == 1
    event = events[0]
    assert event["hook_event_name"] == "SubagentStop"
    assert event["agent_type"] == "reader"
    transcript = Path(event["agent_transcript_path"])
    assert transcript.is_file()
    header = json.loads(transcript.read_text().splitlines()[0])
    assert header["id"] == event["agent_id"]
    assert "the reader's answer" in transcript.read_text()
