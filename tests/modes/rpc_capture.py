"""One scripted RPC conversation, run against pi_coder (tests) or Pi 1.6 (to capture its answers).

``run_scenario`` sends the RPC commands added for Pi 1.6 parity (``get_available_thinking_levels``,
``set_auto_retry``, ``abort_retry``, ``get_commands``, ``get_entries``, ``get_tree``,
``clear_queue``, ``clone``) and a ``compact`` whose first summary request fails with a 529, and
returns each response plus the compaction and summarisation-retry events, labelled by step.

Capture Pi 1.6's records (needs /tmp/pi16, see /work/notes/helper-rules.md)::

    .venv/bin/python -m tests.modes.rpc_capture

which writes ``tests/session/golden/pi16/rpc_commands.jsonl``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, Turn, error_turn

GOLDEN = Path(__file__).parent.parent / "session" / "golden" / "pi16" / "rpc_commands.jsonl"
PI16 = Path("/tmp/pi16/node_modules")
PI16_PROGRAM = [str(PI16 / ".bin" / "node"), str(PI16 / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js")]
EVENTS = (
    "compaction_start",
    "compaction_end",
    "summarization_retry_scheduled",
    "summarization_retry_attempt_start",
    "summarization_retry_finished",
)


def pi_coder_home(tmp: Path, server: SSEServer) -> PiHome:
    """pi_coder's home: a reasoning model on ``server`` and a small compaction keep window."""
    pi = PiHome(tmp, server, "anthropic")
    (pi.home / "models.toml").write_text(
        "[providers.local]\n"
        'api = "anthropic-messages"\n'
        f'base_url = "{server.anthropic_base_url}"\n'
        'api_key = "none"\n'
        'models = [{ id = "test-model", name = "Test Model", reasoning = true, context_window = 32768, '
        "max_tokens = 4096 }]\n",
        encoding="utf-8",
    )
    (pi.home / "settings.toml").write_text(
        "[compaction]\nkeep_recent_tokens = 30\n[retry]\nbase_delay_ms = 200\n", encoding="utf-8"
    )
    return pi


def pi16_client(tmp: Path, server: SSEServer) -> RpcClient:
    """Pi 1.6 in RPC mode with the same model and settings (HOME is a scratch folder)."""
    pi = PiHome(tmp, server, "anthropic")
    agent = tmp / "pi16home" / ".pi" / "agent"
    agent.mkdir(parents=True)
    model = {"id": "test-model", "name": "Test Model", "reasoning": True, "contextWindow": 32768, "maxTokens": 4096}
    provider = {"baseUrl": server.anthropic_base_url, "api": "anthropic-messages", "apiKey": "none", "models": [model]}
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    settings = {"compaction": {"keepRecentTokens": 30}, "retry": {"baseDelayMs": 200}}
    (agent / "settings.json").write_text(json.dumps(settings))
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.update(HOME=str(tmp / "pi16home"), PI_OFFLINE="1")
    return RpcClient(pi, "--model", "local/test-model", program=PI16_PROGRAM, env=env)


def run_scenario(rpc: RpcClient, server: SSEServer) -> list[dict[str, Any]]:
    """Send the script; returns ``{"step": ..., "record": ...}`` for each response and listed event."""
    out: list[dict[str, Any]] = []

    def call(step: str, command: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        response = rpc.call(command, timeout)
        out.append({"step": step, "record": response})
        return response

    call("get_available_thinking_levels", {"type": "get_available_thinking_levels"})
    call("set_auto_retry_off", {"type": "set_auto_retry", "enabled": False})
    call("set_auto_retry_on", {"type": "set_auto_retry", "enabled": True})
    call("set_auto_retry_bad", {"type": "set_auto_retry"})
    call("abort_retry_idle", {"type": "abort_retry"})
    call("get_commands", {"type": "get_commands"})

    long = " ".join(f"Point {n}: the answer explains one more detail of the question." for n in range(12))
    server.enqueue(
        Turn([Text("answer one. " + long)], usage={"input": 10, "output": 5}),
        Turn([Text("answer two. " + long)], usage={"input": 20, "output": 5}),
    )
    call("prompt", {"type": "prompt", "message": "question one " + long})
    rpc.event("agent_end", 60)
    call("prompt_two", {"type": "prompt", "message": "question two " + long})
    rpc.event("agent_end", 60)
    entries = call("get_entries", {"type": "get_entries"})
    first = entries["data"]["entries"][0]["id"]
    call("get_entries_since", {"type": "get_entries", "since": first})
    call("get_entries_bad_since", {"type": "get_entries", "since": "nope"})
    call("get_tree", {"type": "get_tree"})

    server.enqueue(
        error_turn(529, "Overloaded", error_type="overloaded_error"),
        Turn([Text("## Goal\nSUMMARY OF EARLIER WORK")], usage={"input": 30, "output": 8}),
        Turn([Text("## Turn\nSUMMARY OF THE TURN PREFIX")], usage={"input": 30, "output": 8}),
    )
    compact_id = rpc.send({"type": "compact"})
    while True:
        line = rpc.next_line(60)
        if line.get("type") in EVENTS:
            out.append({"step": "compact_event", "record": line})
        if line.get("type") == "response" and line.get("id") == compact_id:
            out.append({"step": "compact", "record": line})
            break
    server.clear()  # a summary request the other program did not make

    server.enqueue(Turn([Text("never")], hang=math.inf))
    requests = len(server.requests)
    call("prompt_hang", {"type": "prompt", "message": "go"})
    assert server.wait_for_requests(requests + 1, timeout=60)
    call("steer", {"type": "steer", "message": "Change direction"})
    call("follow_up", {"type": "follow_up", "message": "Summarize when finished"})
    call("clear_queue", {"type": "clear_queue"})
    call("clear_queue_empty", {"type": "clear_queue"})
    call("abort", {"type": "abort"})

    call("clone", {"type": "clone"})
    call("get_state_after_clone", {"type": "get_state"})
    return out


def main() -> int:
    if not PI16.is_dir():
        print("Pi 1.6 is not installed in /tmp/pi16", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder, SSEServer() as server:
        rpc = pi16_client(Path(folder), server)
        try:
            records = run_scenario(rpc, server)
        finally:
            rpc.close()
    GOLDEN.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records), encoding="utf-8")
    print(f"wrote {len(records)} records to {GOLDEN}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
