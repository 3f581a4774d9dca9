"""`!` commands under the permission modes, through a real ``pi --mode rpc`` (the RPC ``bash`` command)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server)


def _bash(rpc: RpcClient, command: str) -> dict[str, Any]:
    reply = rpc.call({"type": "bash", "command": command}, timeout=30)
    assert reply["success"], reply
    return reply["data"]


@pytest.mark.parametrize("mode", ["plan", "deny"])
def test_read_only_runs_and_a_change_is_refused(pi: PiHome, mode: str) -> None:
    (pi.project / "a.txt").write_text("alpha\n")
    rpc = RpcClient(pi, "--permission-mode", mode)
    try:
        listed = _bash(rpc, "ls | grep a.txt")
        assert listed["exitCode"] == 0 and "a.txt" in listed["output"]
        refused = _bash(rpc, "touch made.txt")
        assert refused["cancelled"] and refused["output"].startswith("Not run:")
        assert ("Plan mode" if mode == "plan" else "Permission mode deny") in refused["output"]
    finally:
        rpc.close()
    assert not (pi.project / "made.txt").exists()


@pytest.mark.parametrize("mode", ["ask", "accept-edits"])
def test_ask_modes_ask_before_a_changing_command(pi: PiHome, mode: str) -> None:
    rpc = RpcClient(pi, "--permission-mode", mode)
    try:
        rpc.send({"type": "bash", "command": "touch one.txt", "id": "b1"})
        request = rpc.wait_for(
            lambda line: line.get("type") == "extension_ui_request" and line.get("method") == "select"
        )
        assert "!touch one.txt" in request["title"]
        rpc.send_raw(
            json.dumps({"type": "extension_ui_response", "id": request["id"], "value": "Allow once"}).encode() + b"\n"
        )
        assert rpc.response("b1", timeout=30)["data"]["exitCode"] == 0

        rpc.send({"type": "bash", "command": "touch two.txt", "id": "b2"})
        request = rpc.wait_for(
            lambda line: line.get("type") == "extension_ui_request" and line.get("method") == "select"
        )
        rpc.send_raw(
            json.dumps({"type": "extension_ui_response", "id": request["id"], "value": "Deny"}).encode() + b"\n"
        )
        denied = rpc.response("b2", timeout=30)["data"]
        assert denied["cancelled"] and "denied" in denied["output"]
        assert _bash(rpc, "cat one.txt")["exitCode"] == 0  # read-only: no question
    finally:
        rpc.close()
    assert (pi.project / "one.txt").exists() and not (pi.project / "two.txt").exists()
