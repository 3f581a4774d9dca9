"""Commands allowed only because the parser judged them read-only run in the read-only sandbox:
the bash tool (plan mode, ``pi -p``) and ``!`` commands (RPC ``bash``), with the real bwrap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, RpcClient, all_text
from tests.permissions.test_sandbox import _PROBLEM
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

# Inside the sandbox's PID namespace, process 1 is bubblewrap itself.
PID1 = "cat /proc/1/comm"


@pytest.mark.skipif(_PROBLEM is not None, reason=_PROBLEM or "")
@pytest.mark.parametrize("mode", ["plan", "ask", "deny"])
def test_bash_tool_read_only_commands_run_confined(tmp_path: Path, sse_server: SSEServer, mode: str) -> None:
    pi = PiHome(tmp_path, sse_server)
    (pi.project / ".envrc").write_text("PROJECT-SECRET\n")
    sse_server.enqueue(
        Turn([ToolCall("bash", {"command": PID1}, id="c1")]),
        Turn([ToolCall("bash", {"command": "ls -a; cat .envrc"}, id="c2")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "--permission-mode", mode, "look")
    assert run.returncode == 0, run.stderr
    assert "bwrap" in all_text(sse_server.requests[1].json)
    last = all_text(sse_server.requests[2].json)
    assert ".envrc: Permission denied" in last and "PROJECT-SECRET" not in last  # .env* hidden
    assert "parser alone" not in run.stderr


@pytest.mark.skipif(_PROBLEM is not None, reason=_PROBLEM or "")
def test_an_allow_rule_is_not_confined(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server)
    (pi.home / "settings.toml").write_text(
        '[permissions]\nmode = "ask"\nallow = ["bash(cat /proc/1/comm)"]\n'
    )
    sse_server.enqueue(Turn([ToolCall("bash", {"command": PID1}, id="c1")]), Turn([Text("Done.")]))
    run = pi.run("-p", "look")
    assert run.returncode == 0, run.stderr
    assert "bwrap" not in all_text(sse_server.requests[1].json)


@pytest.mark.skipif(_PROBLEM is not None, reason=_PROBLEM or "")
def test_user_bang_commands_run_confined(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server)
    rpc = RpcClient(pi, "--permission-mode", "plan")
    try:
        reply = rpc.call({"type": "bash", "command": PID1}, timeout=30)
    finally:
        rpc.close()
    assert reply["success"] and "bwrap" in reply["data"]["output"], reply


def test_without_bwrap_plan_mode_says_once_it_relies_on_the_parser(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    pi = PiHome(tmp_path, sse_server)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sh", "bash", "cat", "ls"):
        found = next((Path(d) / name for d in ("/usr/bin", "/bin") if (Path(d) / name).exists()), None)
        assert found is not None
        (bin_dir / name).symlink_to(found)
    sse_server.enqueue(
        Turn([ToolCall("bash", {"command": "ls"}, id="c1")]),
        Turn([ToolCall("bash", {"command": "cat /proc/1/comm"}, id="c2")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "--permission-mode", "plan", "look", PATH=str(bin_dir))
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("rely on the parser alone") == 1, run.stderr
    assert "bwrap" not in all_text(sse_server.requests[2].json)
    assert os.path.exists(pi.project)
