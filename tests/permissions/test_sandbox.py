"""The bubblewrap sandbox with the real ``bwrap``: ``pi sandbox -- cmd`` and the bash tool under ``--sandbox``."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modes.pirun import PI, PiHome, all_text
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn


def _bwrap_problem() -> str | None:
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    probe = subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "true"], capture_output=True
    )
    if probe.returncode != 0:
        return (
            f"bubblewrap cannot create user namespaces here: {probe.stderr.decode(errors='replace').strip()}"
        )
    return None


_PROBLEM = _bwrap_problem()
pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=_PROBLEM or "")


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on 127.0.0.1 outside the sandbox; yields its port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.sendall(b"hello\n")
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def _connect(port: int) -> str:
    return f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('CONNECTED')\""


def _outside(tmp_path: Path) -> Path:
    # Outside the workspace and outside the temporary folder (which stays writable).
    target = Path.home() / f".pi-sandbox-test-{tmp_path.name}"
    return target


def test_pi_sandbox_command(tmp_path: Path, listener: int) -> None:
    work = tmp_path / "work"
    work.mkdir()
    outside = _outside(tmp_path)
    env = {"PI_CODER_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    inside = subprocess.run(
        [*PI, "sandbox", "--", "sh", "-c", "echo ok > made.txt"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert inside.returncode == 0, inside.stderr
    assert (work / "made.txt").read_text() == "ok\n"
    out = subprocess.run(
        [*PI, "sandbox", "--", "sh", "-c", f"echo no > {outside}"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0 and not outside.exists()
    assert "Read-only file system" in out.stderr
    net = subprocess.run(
        [*PI, "sandbox", "--", "sh", "-c", _connect(listener)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert net.returncode != 0 and "CONNECTED" not in net.stdout
    # the same connection works outside, and inside with --network
    free = subprocess.run(
        [*PI, "sandbox", "--network", "--", "sh", "-c", _connect(listener)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert "CONNECTED" in free.stdout, free.stderr
    ro = subprocess.run(
        [*PI, "sandbox", "--mode", "read-only", "--", "sh", "-c", "echo x > ro.txt"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert ro.returncode != 0 and not (work / "ro.txt").exists()


def test_bash_tool_under_the_sandbox(tmp_path: Path, sse_server: SSEServer, listener: int) -> None:
    pi = PiHome(tmp_path, sse_server)
    outside = _outside(tmp_path)
    sse_server.enqueue(
        Turn([ToolCall("bash", {"command": "echo in > inside.txt; cat inside.txt"}, id="c1")]),
        Turn([ToolCall("bash", {"command": f"echo out > {outside}"}, id="c2")]),
        Turn([ToolCall("bash", {"command": _connect(listener)}, id="c3")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "--sandbox", "workspace-write", "go")
    assert run.returncode == 0, run.stderr
    assert (pi.project / "inside.txt").read_text() == "in\n"
    assert not outside.exists()
    assert "Read-only file system" in all_text(sse_server.requests[2].json)
    last = all_text(sse_server.requests[3].json)
    assert "Connection refused" in last or "Network is unreachable" in last


def test_missing_bwrap_refuses_to_start(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server)
    empty = tmp_path / "bin"
    empty.mkdir()
    (empty / "sh").symlink_to("/bin/sh")
    run = pi.run("-p", "--sandbox", "workspace-write", "go", PATH=str(empty))
    assert run.returncode == 1
    assert "bubblewrap" in run.stderr and run.stderr.strip().count("\n") == 0, run.stderr
    assert sse_server.requests == []
