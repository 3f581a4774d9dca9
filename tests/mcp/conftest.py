"""Helpers for the MCP tests: a configuration home with ``mcp.json`` and the test servers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
TINY = str(HERE / "tiny_server.py")
HANG = str(HERE / "hang_server.py")
PY = sys.executable


def tiny(*args: str, **extra: Any) -> dict[str, Any]:
    return {"command": PY, "args": [TINY, *args], "timeout": 30, **extra}


def write_mcp(path: Path, servers: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not alive
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_dead(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HttpServer:
    """``tiny_server.py http PORT`` in a subprocess."""

    def __init__(self, *extra: str) -> None:
        self.port = free_port()
        self.extra = extra
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [PY, TINY, "http", str(self.port), *self.extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the HTTP MCP server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


@pytest.fixture
def http_server():
    server = HttpServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def everything_http():
    """npm server-everything over Streamable HTTP (tests/mcp/everything.py; skips without npm)."""
    from tests.mcp.everything import EverythingHttp

    server = EverythingHttp()
    server.start()
    yield server
    server.stop()
