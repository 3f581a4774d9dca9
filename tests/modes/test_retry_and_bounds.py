"""Retries in the open, bounded requests and named errors, through the real ``pi`` process.

Pi 1.6 (observed against this scripted server): on a 500 or a 429 the run ends with
``agent_end`` ``willRetry: true``, then ``auto_retry_start``; the good answer's ``message_end`` is
followed by ``auto_retry_end`` ``success: true``; ``abort_retry`` ends the cycle with "Retry
cancelled" before its response; the provider itself retries nothing.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, RpcClient, user_texts
from tests.support.sse_server import SSEServer, Text, Thinking, Turn, error_turn

FAST_RETRY = "[retry]\nbase_delay_ms = 50\n"


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, "anthropic")


def settings(pi: PiHome, text: str) -> None:
    (pi.home / "settings.toml").write_text(text, encoding="utf-8")


@pytest.fixture
def rpc_factory(pi: PiHome) -> Iterator[list[RpcClient]]:
    clients: list[RpcClient] = []
    yield clients
    for client in clients:
        client.close()


def start_rpc(pi: PiHome, clients: list[RpcClient]) -> RpcClient:
    client = RpcClient(pi, "--no-session")
    clients.append(client)
    return client


def _retry_kinds(lines: list[dict]) -> list[str]:
    out = []
    for line in lines:
        kind = line["type"]
        if kind == "agent_end":
            out.append(f"agent_end:{line['willRetry']}")
        elif kind == "message_end" and line["message"]["role"] == "assistant":
            out.append(f"message_end:{line['message']['stopReason']}")
        elif kind in ("auto_retry_start", "auto_retry_end"):
            out.append(kind)
    return out


@pytest.mark.parametrize("status", [500, 429])
def test_rpc_retry_is_visible_like_pi(pi: PiHome, rpc_factory: list[RpcClient], status: int) -> None:
    settings(pi, FAST_RETRY)
    pi.server.enqueue(error_turn(status, "boom"), error_turn(status, "boom"), Turn([Text("ok")]))
    rpc = start_rpc(pi, rpc_factory)
    rpc.call({"type": "prompt", "message": "hi"})
    rpc.wait_for(lambda line: line["type"] == "agent_end" and line["willRetry"] is False)
    assert _retry_kinds(rpc.seen) == [
        "message_end:error", "agent_end:True", "auto_retry_start",
        "message_end:error", "agent_end:True", "auto_retry_start",
        "message_end:stop", "auto_retry_end", "agent_end:False",
    ]  # fmt: skip
    starts = [line for line in rpc.seen if line["type"] == "auto_retry_start"]
    assert [(s["attempt"], s["maxAttempts"], s["delayMs"]) for s in starts] == [(1, 3, 50), (2, 3, 100)]
    assert f"({status} " in starts[0]["errorMessage"] and "boom" in starts[0]["errorMessage"]
    end = next(line for line in rpc.seen if line["type"] == "auto_retry_end")
    assert end == {"type": "auto_retry_end", "success": True, "attempt": 2}
    assert len(pi.server.requests) == 3  # no silent provider retry underneath


def test_rpc_abort_retry_cancels_the_wait(pi: PiHome, rpc_factory: list[RpcClient]) -> None:
    settings(pi, "[retry]\nbase_delay_ms = 60000\n")
    pi.server.enqueue(error_turn(500, "boom"), Turn([Text("never")]))
    rpc = start_rpc(pi, rpc_factory)
    rpc.call({"type": "prompt", "message": "hi"})
    rpc.event("auto_retry_start")
    began = time.monotonic()
    response = rpc.call({"type": "abort_retry"})
    assert time.monotonic() - began < 10
    assert response == {"id": response["id"], "type": "response", "command": "abort_retry", "success": True}
    end = rpc.seen_or_next("auto_retry_end")
    assert end == {"type": "auto_retry_end", "success": False, "attempt": 1, "finalError": "Retry cancelled"}
    kinds = [line["type"] for line in rpc.seen]
    assert kinds.index("auto_retry_end") < len(kinds) - 1  # emitted before the response, as Pi does
    assert rpc.call({"type": "get_state"})["data"]["isStreaming"] is False
    assert len(pi.server.requests) == 1


def test_rpc_set_auto_retry_false_gives_one_failure(pi: PiHome, rpc_factory: list[RpcClient]) -> None:
    settings(pi, FAST_RETRY)
    pi.server.enqueue(error_turn(500, "boom"), Turn([Text("never")]))
    rpc = start_rpc(pi, rpc_factory)
    response = rpc.call({"type": "set_auto_retry", "enabled": False})
    assert response == {"id": response["id"], "type": "response", "command": "set_auto_retry", "success": True}
    assert rpc.call({"type": "set_auto_retry", "enabled": "no"})["success"] is False
    rpc.call({"type": "prompt", "message": "hi"})
    end = rpc.event("agent_end")
    assert end["willRetry"] is False
    rpc.call({"type": "get_state"})
    assert "auto_retry_start" not in [line["type"] for line in rpc.seen]
    assert len(pi.server.requests) == 1


def test_rpc_compact_while_streaming_is_refused_and_keeps_the_queue(pi: PiHome, rpc_factory: list[RpcClient]) -> None:
    pi.server.enqueue(
        Turn([Text("a" * 40)], delta_chars=1, delay=0.05),  # about 2 s of streaming
        Turn([Text("steered")]),
        Turn([Text("followed")]),
    )
    rpc = start_rpc(pi, rpc_factory)
    rpc.call({"type": "prompt", "message": "first"})
    rpc.event("message_update")
    assert rpc.call({"type": "steer", "message": "steer me"})["success"] is True
    assert rpc.call({"type": "follow_up", "message": "then this"})["success"] is True
    response = rpc.call({"type": "compact"})
    assert response["success"] is False
    assert response["error"].startswith("Cannot compact while the agent is running")
    rpc.wait_for(
        lambda line: line["type"] == "message_end"
        and line["message"]["role"] == "assistant"
        and "followed" in json.dumps(line["message"]["content"]),
        timeout=30,
    )
    assert len(pi.server.requests) == 3
    texts = user_texts(pi.server.requests[2].json)
    assert "steer me" in texts and "then this" in texts
    first = next(line for line in rpc.seen if line["type"] == "message_end" and line["message"]["role"] == "assistant")
    assert first["message"]["stopReason"] == "stop"  # the run was not aborted


def test_print_retry_series_is_bounded(pi: PiHome) -> None:
    """retry.max_total_ms stops a series of slow failures early, saying why."""
    settings(pi, "[retry]\nbase_delay_ms = 50\nmax_retries = 10\nmax_total_ms = 1500\n")
    turns = [error_turn(500, "slow failure") for _ in range(12)]
    for turn in turns:
        turn.hang = 0.6  # each attempt takes 0.6 s before its 500
    pi.server.enqueue(*turns)
    began = time.monotonic()
    result = pi.run("--no-session", "--mode", "json", "hi", timeout=60)
    elapsed = time.monotonic() - began
    records = [json.loads(line) for line in result.stdout.splitlines()]
    end = next(r for r in records if r["type"] == "auto_retry_end")
    assert end["success"] is False
    assert "retry.max_total_ms" in end["finalError"]
    assert 2 <= len(pi.server.requests) <= 4
    assert elapsed < 20


def test_print_never_answering_server_errors_within_the_bound(pi: PiHome) -> None:
    settings(pi, "http_idle_timeout_ms = 500\n[retry]\nbase_delay_ms = 50\nmax_retries = 1\n")
    pi.server.enqueue(Turn([Text("late")], hang=math.inf), Turn([Text("late")], hang=math.inf))
    began = time.monotonic()
    result = pi.run("--no-session", "-p", "hi", timeout=60)
    assert time.monotonic() - began < 45  # the server never answers
    assert result.returncode == 1
    port = pi.server.port
    assert (
        f"Request timed out after 0.5 s waiting for the first byte from 127.0.0.1:{port} (setting http_idle_timeout_ms)"
        in result.stderr
    )
    assert "retry 1 of 1" in result.stderr
    assert len(pi.server.requests) == 2
    assert "Traceback" not in result.stderr


def test_print_ping_forever_server_errors_within_the_bound(pi: PiHome) -> None:
    settings(pi, "http_content_timeout_ms = 800\n[retry]\nenabled = false\n")
    start = {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {"input_tokens": 1}}}
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    body = b"event: message_start\ndata: " + json.dumps(start).encode() + b"\n\n" + ping * 600
    pi.server.enqueue(Turn(raw=body, chunk_size=len(ping), delay=0.05))  # 30 s of pings
    began = time.monotonic()
    result = pi.run("--no-session", "-p", "hi", timeout=60)
    assert time.monotonic() - began < 15
    assert result.returncode == 1
    assert "no content from 127.0.0.1" in result.stderr and "http_content_timeout_ms" in result.stderr


def test_print_connection_refused_is_named(pi: PiHome, tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (pi.home / "models.toml").write_text(
        (pi.home / "models.toml").read_text().replace(f":{pi.server.port}", f":{port}"), encoding="utf-8"
    )
    settings(pi, "[retry]\nenabled = false\n")
    result = pi.run("--no-session", "-p", "hi", timeout=60)
    assert result.returncode == 1
    assert f"Connection error: connection refused (127.0.0.1:{port})" in result.stderr


def test_print_shows_the_error_event_message(pi: PiHome) -> None:
    settings(pi, "[retry]\nenabled = false\n")
    start = {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {"input_tokens": 1}}}
    error = {"type": "server_error", "code": 500, "message": "the model crashed"}
    body = (
        b"event: message_start\ndata: " + json.dumps(start).encode() + b"\n\n"
        b"event: error\ndata: " + json.dumps(error).encode() + b"\n\n"
    )
    pi.server.enqueue(Turn(raw=body))
    result = pi.run("--no-session", "-p", "hi", timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().endswith("local API error (server_error): the model crashed")


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_print_max_tokens_warns_and_exits_1(tmp_path: Path, sse_server: SSEServer, wire: str) -> None:
    pi = PiHome(tmp_path, sse_server, wire)
    stop = "max_tokens" if wire == "anthropic" else "length"
    sse_server.enqueue(Turn([Text("The answer is")], stop=stop))
    result = pi.run("--no-session", "-p", "hi", timeout=60)
    assert result.returncode == 1
    assert result.stdout == "The answer is\n"
    assert result.stderr.startswith("Warning: Response was truncated before completion.")
    assert "max_tokens" in result.stderr


def test_print_reasoning_that_used_the_whole_budget_warns(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Thinking("thinking and thinking")], stop="max_tokens"))
    result = pi.run("--no-session", "-p", "hi", timeout=60)
    assert result.returncode == 1 and result.stdout == ""
    assert "before writing an answer" in result.stderr


def test_json_mode_carries_the_length_stop_reason(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("cut")], stop="max_tokens"))
    result = pi.run("--no-session", "--mode", "json", "hi", timeout=60)
    assert result.returncode == 0  # json mode: the outcome is in the stream (pi-product 1.4)
    records = [json.loads(line) for line in result.stdout.splitlines()]
    end = [r for r in records if r["type"] == "message_end" and r["message"]["role"] == "assistant"][-1]
    assert end["message"]["stopReason"] == "length"
    assert next(r for r in records if r["type"] == "agent_end")["willRetry"] is False
