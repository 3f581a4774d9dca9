"""npm ``@modelcontextprotocol/server-everything`` (the MCP client test server) for the tests.

Installed once per machine with npm into a cache outside the clone, as ``.ci/run`` keeps its
other downloads: ``${PI_CODER_CI_CACHE:-${XDG_CACHE_HOME:-~/.cache}/pi-coder-ci}/npm-everything-<version>``
(a lock file lets one test process install while others wait). Without node, npm or the registry
the tests that need it skip, saying why.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

VERSION = "2026.8.31"
PACKAGE = "@modelcontextprotocol/server-everything"


def _cache() -> Path:
    base = os.environ.get("PI_CODER_CI_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pi-coder-ci"
    )
    return Path(base) / f"npm-everything-{VERSION}"


def _entry(folder: Path) -> Path:
    return folder / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


_REASON: str | None = None


def everything_script() -> Path:
    """The server's ``dist/index.js`` (installing it on first use); skips the test when it cannot."""
    global _REASON
    if _REASON is not None:
        pytest.skip(_REASON)
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _REASON = "server-everything needs node and npm, which are not installed"
        pytest.skip(_REASON)
    folder = _cache()
    script = _entry(folder)
    if script.is_file():
        return script
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".npm-everything-{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not script.is_file():
            try:
                done = subprocess.run(
                    [
                        npm, "install", "--no-audit", "--no-fund", "--silent", "--fetch-retries=1",
                        "--fetch-timeout=60000", "--prefix", str(folder), f"{PACKAGE}@{VERSION}",
                    ],
                    capture_output=True,
                    text=True,
                    timeout=300,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                _REASON = f"npm install {PACKAGE}@{VERSION} took over 300 s (is the npm registry reachable?)"
                pytest.skip(_REASON)
            if done.returncode != 0 or not script.is_file():
                last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                _REASON = f"npm install {PACKAGE}@{VERSION} failed (is the npm registry reachable?): {last}"
                pytest.skip(_REASON)
    return script


def everything_stdio(**extra: Any) -> dict[str, Any]:
    """An ``mcp.json`` entry running server-everything over stdio."""
    return {"command": shutil.which("node") or "node", "args": [str(everything_script()), "stdio"], "timeout": 60, **extra}


class EverythingHttp:
    """server-everything over Streamable HTTP on a free port of 127.0.0.1 (``start``/``stop``, restartable)."""

    def __init__(self) -> None:
        self.script = everything_script()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        env = {**os.environ, "PORT": str(self.port)}
        self.proc = subprocess.Popen(
            [shutil.which("node") or "node", str(self.script), "streamableHttp"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("server-everything (HTTP) did not start listening within 60 s")

    def stop(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, 9)
            self.proc.wait(10)
            self.proc = None
