"""Running the real ``pi`` entry point against the scripted server, for CLI and mode tests.

``PiHome`` is a throw-away ``PI_CODER_HOME`` with a models.toml provider (``local``, model
``test-model``) pointing at an ``SSEServer`` in either wire format, plus a project folder to run
in. ``RpcClient`` drives ``pi --mode rpc`` over pipes.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.sse_server import SSEServer

PI = [str(Path(sys.executable).with_name("pi"))] if Path(sys.executable).with_name("pi").exists() else [
    sys.executable,
    "-m",
    "pi_coder",
]

WIRE = {"anthropic": "anthropic-messages", "openai": "openai-completions"}


def clean_env(home: Path) -> dict[str, str]:
    """The test process's environment without keys or base-URL overrides, with ``PI_CODER_HOME``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_OAUTH_TOKEN", "_BASE_URL")) and k not in ("HF_TOKEN", "PYTHONSTARTUP")
    }
    env["PI_CODER_HOME"] = str(home)
    # Let the children keep bytecode caches (gitignored): a cold start per test run is slow.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


class PiHome:
    """A configuration home, a project folder and the server they point at."""

    def __init__(self, tmp_path: Path, server: SSEServer, wire: str = "anthropic") -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.home.mkdir(exist_ok=True)
        self.project.mkdir(exist_ok=True)
        self.server = server
        self.wire = wire
        self.write_models()

    def write_models(self, extra: str = "") -> None:
        base = self.server.anthropic_base_url if self.wire == "anthropic" else self.server.openai_base_url
        (self.home / "models.toml").write_text(
            "[providers.local]\n"
            f'api = "{WIRE[self.wire]}"\n'
            f'base_url = "{base}"\n'
            'api_key = "none"\n'
            'models = [{ id = "test-model", name = "Test Model", context_window = 32768, max_tokens = 4096, input = ["text", "image"] }]\n'
            + extra,
            encoding="utf-8",
        )

    def env(self, **extra: str) -> dict[str, str]:
        return clean_env(self.home) | extra

    def run(
        self, *args: str, input: str | bytes | None = None, timeout: float = 60, cwd: Path | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """Run ``pi *args`` to completion (stdin is ``input``, else empty)."""
        data = input.encode() if isinstance(input, str) else input
        proc = subprocess.run(
            [*PI, *args],
            cwd=cwd or self.project,
            env=self.env(**env),
            input=data if data is not None else b"",
            capture_output=True,
            timeout=timeout,
        )
        return subprocess.CompletedProcess(
            proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
        )

    def session_files(self) -> list[Path]:
        root = self.home / "sessions"
        return sorted(root.rglob("*.jsonl")) if root.exists() else []


def user_texts(request_json: dict[str, Any]) -> list[str]:
    """Texts of the user messages of a recorded request, in either wire format."""
    texts: list[str] = []
    for message in request_json.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "text":
                    texts.append(block["text"])
    return texts


def all_text(request_json: dict[str, Any]) -> str:
    """Everything a request says, as one string (for "contains" checks)."""
    return json.dumps(request_json.get("messages", []), ensure_ascii=False)


class RpcClient:
    """``pi --mode rpc`` in a subprocess; stdout lines are collected by a thread."""

    def __init__(
        self, pi_home: PiHome, *args: str, program: list[str] | None = None, env: dict[str, str] | None = None
    ) -> None:
        """``program`` runs another RPC server (Pi 1.6 for captures) with ``env``, else pi_coder's ``pi``."""
        self.proc = subprocess.Popen(
            [*(program or PI), "--mode", "rpc", *args],
            cwd=pi_home.project,
            env=env if env is not None else pi_home.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._next_id = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(json.loads(raw))
        self.lines.put(None)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, command: dict[str, Any]) -> str:
        """Send ``command`` with a fresh id (unless it has one); returns the id."""
        if "id" not in command:
            self._next_id += 1
            command = {"id": f"r{self._next_id}", **command}
        self.send_raw(json.dumps(command).encode() + b"\n")
        return str(command["id"])

    def next_line(self, timeout: float = 60) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise EOFError("pi closed stdout")
        self.seen.append(line)
        return line

    def wait_for(self, match: Callable[[dict[str, Any]], bool], timeout: float = 60) -> dict[str, Any]:
        """The next line satisfying ``match`` (earlier lines stay in ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.next_line(max(0.01, deadline - time.monotonic()))
            if match(line):
                return line

    def response(self, request_id: str, timeout: float = 60) -> dict[str, Any]:
        return self.wait_for(lambda line: line.get("type") == "response" and line.get("id") == request_id, timeout)

    def call(self, command: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        """Send ``command`` and wait for its response."""
        return self.response(self.send(command), timeout)

    def event(self, kind: str, timeout: float = 60) -> dict[str, Any]:
        """The next event of ``kind`` not read yet."""
        return self.wait_for(lambda line: line.get("type") == kind, timeout)

    def seen_or_next(self, kind: str, timeout: float = 60) -> dict[str, Any]:
        """The last event of ``kind`` already read (e.g. while waiting for a response), else the next."""
        for line in reversed(self.seen):
            if line.get("type") == kind:
                return line
        return self.event(kind, timeout)

    def close(self, timeout: float = 60) -> int:
        """Close stdin and wait for the process; returns its exit code."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")
