"""The Agent driven by the faux provider (streamed partials, tool-call deltas, abort mid-stream),
and the JSON form of agent events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pi_coder.agent import Agent, AgentToolResult, ToolExecutionEnd, ToolExecutionUpdate
from pi_coder.ai.providers.faux import faux_message, faux_provider, faux_tool_call
from pi_coder.ai.types import TextContent

from .script import make_echo, sigs


async def test_faux_tool_round_trip_streams_updates_into_one_slot() -> None:
    faux = faux_provider(
        [faux_message(faux_tool_call("echo", {"value": "hello"}, id="c1")), faux_message("All done, the echo worked.")]
    )
    echo = make_echo()
    agent = Agent(stream_fn=faux.stream, initial_state={"model": faux.model, "tools": [echo]})
    events: list[Any] = []
    agent.subscribe(lambda e, s: events.append(e))
    await agent.prompt("say hello")

    names = sigs(events)
    assert names[:4] == ["AS", "TS", "MS:user", "ME:user"]
    assert "MU:toolcall_delta" in names and "MU:text_delta" in names
    assert names.count("AS") == 1 and names[-1] == "AE"
    assert [m.role for m in agent.state.messages] == ["system", "user", "assistant", "toolResult", "assistant"]
    final = agent.state.messages[-1]
    assert final.text() == "All done, the echo worked." and final.stop_reason == "stop"
    streamed = "".join(e.assistant_message_event.delta for e in events if e.type == "message_update"
                       and e.assistant_message_event.type == "text_delta")  # fmt: skip
    assert streamed == "All done, the echo worked."
    assert faux.state.call_count == 2
    second_request = faux.state.contexts[1].messages
    assert [m.role for m in second_request] == ["system", "user", "assistant", "toolResult"]


async def test_faux_abort_mid_stream_ends_with_an_aborted_assistant() -> None:
    faux = faux_provider([faux_message("word " * 200)], chunk_delay=0.002)
    agent = Agent(stream_fn=faux.stream, initial_state={"model": faux.model})
    updates = 0

    def listener(event: Any, signal: Any) -> None:
        nonlocal updates
        if event.type == "message_update":
            updates += 1
            if updates == 3:
                agent.abort()

    agent.subscribe(listener)
    await asyncio.wait_for(agent.prompt("talk"), 5)
    last = agent.state.messages[-1]
    assert last.stop_reason == "aborted" and agent.state.error_message == "Request was aborted"
    assert 0 < len(last.text()) < len("word " * 200)


async def test_event_json_uses_pi_camel_case_names() -> None:
    faux = faux_provider([faux_message(faux_tool_call("echo", {"value": "x"}, id="c1")), faux_message("ok")])
    agent = Agent(stream_fn=faux.stream, initial_state={"model": faux.model, "tools": [make_echo()]})
    dumped: list[dict[str, Any]] = []
    agent.subscribe(lambda e, s: dumped.append(json.loads(json.dumps(e.to_json_dict()))))
    await agent.prompt("go")

    by_type = {d["type"]: d for d in dumped}
    assert by_type["agent_start"] == {"type": "agent_start"}
    assert by_type["tool_execution_start"] == {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "echo", "args": {"value": "x"}}
    end = by_type["tool_execution_end"]
    assert end["isError"] is False and end["result"] == {"content": [{"type": "text", "text": "echoed: x"}], "details": {"value": "x"}}
    assert isinstance(end["durationMs"], int) and end["durationMs"] >= 0
    # Pi 1.6's wire form of updates is delta-only: no cumulative message, no partial snapshot.
    updates = [d for d in dumped if d["type"] == "message_update"]
    assert all(set(u) == {"type", "usage", "assistantMessageEvent"} for u in updates)
    assert all("partial" not in u["assistantMessageEvent"] for u in updates)
    assert all("contentIndex" in u["assistantMessageEvent"] for u in updates)
    call_start = next(u["assistantMessageEvent"] for u in updates if u["assistantMessageEvent"]["type"] == "toolcall_start")
    assert call_start["id"] == "c1" and call_start["toolName"] == "echo"
    turn_end = [d for d in dumped if d["type"] == "turn_end"][0]
    assert turn_end["toolResults"][0]["toolCallId"] == "c1" and turn_end["message"]["stopReason"] == "toolUse"
    assert [m["role"] for m in by_type["agent_end"]["messages"]] == ["user", "assistant", "toolResult", "assistant"]

    progress = ToolExecutionUpdate(
        tool_call_id="c9", tool_name="bash", args={"command": "ls"},
        partial_result=AgentToolResult(content=[TextContent(text="a")], details={"n": 1}),
    )  # fmt: skip
    assert progress.to_json_dict()["partialResult"] == {"content": [{"type": "text", "text": "a"}], "details": {"n": 1}}
    done = ToolExecutionEnd(tool_call_id="c9", tool_name="bash", result=AgentToolResult(terminate=True), is_error=True)
    assert done.to_json_dict()["result"] == {"content": [], "details": None, "terminate": True}
