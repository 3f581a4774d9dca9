"""Checkpoints never block: targets outside the folder that are not regular files (a device, a FIFO)
or are too large are not read before a ``write``, ``edit`` or bash redirection; the tool result
names them ("not undoable"). Real ``pi`` processes against the scripted model server."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server)
    (home.project / "a.txt").write_text("a\n")
    return home


def _tool_results(pi: PiHome) -> list[str]:
    (session,) = pi.session_files()
    out = []
    for entry in map(json.loads, session.read_text().splitlines()):
        message: dict[str, Any] = entry.get("message") or {}
        if entry["type"] == "message" and message.get("role") == "toolResult":
            out.append("".join(part.get("text", "") for part in message.get("content") or []))
    return out


def test_write_to_dev_zero_is_not_read(pi: PiHome) -> None:
    """Before the fix the whole of /dev/zero was read (gigabytes); now it is named as not undoable."""
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "/dev/zero", "content": "x"}, id="c1")]), Turn([Text("Done.")])
    )
    started = time.monotonic()
    run = pi.run("-p", "write zero", timeout=60)
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - started < 60
    (result,) = _tool_results(pi)
    assert "not undoable: /dev/zero (not a regular file)" in result


def test_edit_of_an_outside_fifo_keeps_rpc_answering(pi: PiHome, tmp_path: Path) -> None:
    """An edit aimed at a FIFO outside the folder: the run ends, get_state is answered, the result says why."""
    fifo = tmp_path / "outside" / "pipe"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    pi.server.enqueue(
        Turn([ToolCall("edit", {"path": str(fifo), "edits": [{"oldText": "a", "newText": "b"}]}, id="c1")]),
        Turn([Text("Done.")]),
    )
    rpc = RpcClient(pi)
    try:
        assert rpc.call({"type": "prompt", "message": "edit the pipe"})["success"]
        rpc.event("agent_settled", timeout=30)
        assert rpc.call({"type": "get_state"}, timeout=10)["success"]
    finally:
        rpc.close()
    (result,) = _tool_results(pi)
    assert f"not undoable: {fifo} (not a regular file)" in result


def test_write_to_an_outside_fifo_ends_in_print_mode(pi: PiHome, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": str(fifo), "content": "hi\n"}, id="c1")]), Turn([Text("Done.")])
    )
    run = pi.run("-p", "write the pipe", timeout=60)
    assert run.returncode == 0, run.stderr
    (result,) = _tool_results(pi)
    assert f"not undoable: {fifo} (not a regular file)" in result


def test_bash_redirection_into_an_outside_fifo_meets_the_bash_timeout(pi: PiHome, tmp_path: Path) -> None:
    """`echo hi > ../pipe` with no reader blocks in bash itself: its timeout ends it, not a hang before it."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "echo hi > ../pipe", "timeout": 2}, id="c1")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "echo into the pipe", timeout=60)
    assert run.returncode == 0, run.stderr
    (result,) = _tool_results(pi)
    assert "timed out" in result.lower()
    assert f"not undoable: {fifo} (not a regular file)" in result


def test_outside_file_over_the_size_limit_is_not_read(pi: PiHome, tmp_path: Path) -> None:
    (pi.home / "settings.toml").write_text("[checkpoints]\nmax_file_mb = 1\n")
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * (2 * 1024 * 1024))
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": str(big), "content": "small\n"}, id="c1")]), Turn([Text("Done.")])
    )
    assert pi.run("-p", "overwrite big").returncode == 0
    (result,) = _tool_results(pi)
    assert f"not undoable: {big} (larger than 1 MB)" in result
