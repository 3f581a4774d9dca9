"""The TUI in a real terminal (tmux) stops its MCP servers when it is killed by SIGHUP or SIGTERM.

One server ignores stdin EOF once connected (only a signal stops it), another never finishes
initializing (and has a child): closing the terminal (``tmux kill-session``: SIGHUP) or a
``kill <pi>`` (SIGTERM) must kill both process groups, as Ctrl+D and ``pi -p`` do.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.mcp.conftest import HANG, PY, TINY, wait_dead, write_mcp
from tests.tui.tmux_support import pi_home, start_pi

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _wait_file(path: Path, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().strip():
            return path.read_text()
        time.sleep(0.1)
    raise AssertionError(f"{path.name} was not written within {timeout:g} s")


def _pi_pid(pane_pid: int) -> int:
    """The ``pi`` process under the pane's shell (``env`` execs it)."""
    # -ww: the whole command line (ps cuts it at 80 columns otherwise, and a long checkout path
    # pushes "--model" past them)
    done = subprocess.run(["ps", "-ww", "-o", "pid=,args=", "--ppid", str(pane_pid)], capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines():
        pid, _, args = line.strip().partition(" ")
        if "pi" in args and "--model" in args:
            return int(pid)
    raise AssertionError(f"no pi process under {pane_pid}: {done.stdout!r}")


@pytest.mark.parametrize("how", ["kill-session", "sigterm"])
def test_tui_killed_leaves_no_mcp_server_running(tmp_path: Path, how: str) -> None:
    with pi_home(tmp_path) as (home, project, _server):
        tiny_pid, hang_pids = tmp_path / "tiny.pid", tmp_path / "hang.pid"
        write_mcp(
            home / "mcp.json",
            {
                "stubborn": {"command": PY, "args": [TINY, "--ignore-eof", "--pid-file", str(tiny_pid)], "timeout": 120},
                "hang": {"command": PY, "args": [HANG], "timeout": 600, "env": {"HANG_PID_FILE": str(hang_pids)}},
            },
        )
        tmux = start_pi(home, project, prefix="pi-mcp-kill")
        try:
            tmux.wait_text("test-model", timeout=60)  # the footer: the TUI is up
            pids = [int(_wait_file(tiny_pid)), *(int(p) for p in _wait_file(hang_pids).split())]
            time.sleep(3)  # let the stubborn server finish its handshake (both states must be covered)
            if how == "kill-session":
                tmux.run("kill-session", "-t", tmux.name)
            else:
                pane = int(tmux.run("list-panes", "-t", tmux.name, "-F", "#{pane_pid}").split()[0])
                os.kill(_pi_pid(pane), signal.SIGTERM)
            assert all(wait_dead(p, 20) for p in pids), "an MCP server outlived pi"
        finally:
            tmux.run("kill-session", "-t", tmux.name)
            for path in (tiny_pid, hang_pids):  # never leave them behind, whatever failed
                if path.is_file():
                    for pid in path.read_text().split():
                        try:
                            os.killpg(int(pid), signal.SIGKILL)
                        except OSError:
                            pass


def test_untrusted_folder_says_its_mcp_json_and_skills_were_ignored(tmp_path: Path) -> None:
    with pi_home(tmp_path) as (home, project, _server):
        marker = tmp_path / "ran"
        write_mcp(project / ".pi" / "mcp.json", {"local": {"command": PY, "args": [TINY, "--marker", str(marker)]}})
        (home / "trust.json").write_text(json.dumps({str(project.resolve()): False}))
        tmux = start_pi(home, project, prefix="pi-mcp-trust", size=(220, 40))
        try:
            tmux.wait_text("This project folder is not trusted", timeout=60)
            tmux.wait(lambda: "skills" in " ".join(tmux.screen().split()), "the list of what was ignored", timeout=60)
            screen = " ".join(tmux.screen().split())
            assert ".pi/mcp.json" in screen and "skills" in screen, screen
            tmux.wait_text("test-model", timeout=60)  # the footer: the editor takes keys
            tmux.text("/mcp")
            tmux.keys("Enter")
            tmux.wait_text(".pi/mcp.json was ignored", timeout=30)
            assert not marker.exists()  # nothing the folder controls ran
        finally:
            tmux.run("kill-session", "-t", tmux.name)
