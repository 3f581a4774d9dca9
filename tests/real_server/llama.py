"""A real llama.cpp ``llama-server`` for the tests, and a recorder in front of it.

``.ci/llama-server.sh`` builds the server and fetches the model into a cache outside the clone
and prints their paths; ``.ci/run`` exports them as ``PI_TEST_LLAMA_SERVER``,
``PI_TEST_LLAMA_MODEL`` and ``PI_TEST_LLAMA_TEMPLATES`` (the folder of llama.cpp's bundled chat
templates). :func:`llama_paths` reads them and says why when they are unusable.

:class:`LlamaServer` runs one server process on 127.0.0.1 (a free port, a small context, two
threads, temperature 0 and a fixed seed as the request defaults) and waits for ``/health``.
:class:`RecordingProxy` forwards every request to it unchanged, streaming the answer back as it
arrives, and keeps each request's path and JSON body, so a test can see exactly what pi_coder
sent (the second request of a ``-c`` run, a tool result).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.modes.pirun import PI, clean_env

ENV_SERVER = "PI_TEST_LLAMA_SERVER"
ENV_MODEL = "PI_TEST_LLAMA_MODEL"
ENV_TEMPLATES = "PI_TEST_LLAMA_TEMPLATES"

# Chat templates bundled with llama.cpp (models/templates/). Qwen 2.5's makes llama.cpp's tool
# call parser (and its grammar for a forced tool_choice) work with SmolLM2; DeepSeek R1's ends
# the prompt with an open <think> block, so everything the model writes is reasoning until it
# closes the block.
TOOLS_TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja"
THINK_TEMPLATE = "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"

CTX_SIZE = 2048
MODEL_ID = "smollm2"


@dataclass(frozen=True)
class LlamaPaths:
    server: Path
    model: Path
    templates: Path


def llama_paths() -> tuple[LlamaPaths | None, str]:
    """The configured binary, model and templates, or ``None`` and the reason they are unusable."""
    values = {name: os.environ.get(name, "") for name in (ENV_SERVER, ENV_MODEL, ENV_TEMPLATES)}
    missing = [name for name, value in values.items() if not value]
    if missing:
        reason = os.environ.get("PI_TEST_LLAMA_UNAVAILABLE") or "run .ci/llama-server.sh and export its output"
        return None, f"{', '.join(missing)} not set ({reason})"
    paths = LlamaPaths(Path(values[ENV_SERVER]), Path(values[ENV_MODEL]), Path(values[ENV_TEMPLATES]))
    if not (paths.server.is_file() and os.access(paths.server, os.X_OK)):
        return None, f"{ENV_SERVER}={paths.server} is not an executable file"
    if not paths.model.is_file():
        return None, f"{ENV_MODEL}={paths.model} does not exist"
    for template in (TOOLS_TEMPLATE, THINK_TEMPLATE):
        if not (paths.templates / template).is_file():
            return None, f"{ENV_TEMPLATES}={paths.templates} has no {template}"
    return paths, ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """One ``llama-server`` process; :meth:`stop` kills it (and is safe to call twice)."""

    def __init__(self, paths: LlamaPaths, template: str, log_path: Path, *extra: str) -> None:
        self.port = free_port()
        self.log_path = log_path
        self.url = f"http://127.0.0.1:{self.port}"
        args = [
            str(paths.server),
            "--model", str(paths.model),
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--ctx-size", str(CTX_SIZE),
            "--threads", "2",
            "--parallel", "1",
            "--jinja",
            "--chat-template-file", str(paths.templates / template),
            "--temp", "0",
            "--seed", "42",
            "--alias", MODEL_ID,
            "--no-webui",
            *extra,
        ]  # fmt: skip
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text("utf-8", "replace").splitlines()[-lines:])
        except OSError:
            return ""

    def wait_healthy(self, timeout: float = 240) -> None:
        """Poll ``/health`` until it answers 200 (503 while the model loads)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/health")
                status = conn.getresponse().status
                conn.close()
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"llama-server was not healthy after {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(15)
        self._log.close()


@dataclass
class Recorded:
    method: str
    path: str
    body: dict[str, Any] | None
    status: int = 0


class RecordingProxy:
    """An HTTP proxy on 127.0.0.1 that records requests and streams answers through."""

    _HOP = {"connection", "transfer-encoding", "content-length", "keep-alive", "host"}

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the answer's end is the connection's end

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                record = Recorded(self.command, self.path, body)
                with proxy._lock:
                    proxy.requests.append(record)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in proxy._HOP}
                conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=600)
                try:
                    conn.request(self.command, self.path, body=raw or None, headers=headers)
                    resp = conn.getresponse()
                    record.status = resp.status
                    self.send_response(resp.status)
                    for key, value in resp.getheaders():
                        if key.lower() not in proxy._HOP:
                            self.send_header(key, value)
                    self.send_header("connection", "close")
                    self.end_headers()
                    while chunk := resp.read1(65536):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (OSError, http.client.HTTPException):
                    pass  # the client went away, or the server did: the client sees a cut stream
                finally:
                    conn.close()

            do_GET = do_POST = _forward  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def mark(self) -> int:
        with self._lock:
            return len(self.requests)

    def since(self, mark: int) -> list[Recorded]:
        """Model requests (POSTs) recorded after ``mark``."""
        with self._lock:
            return [r for r in self.requests[mark:] if r.method == "POST"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


WIRE = {"openai": "openai-completions", "anthropic": "anthropic-messages"}


class LlamaHome:
    """A throw-away ``PI_CODER_HOME`` whose models.toml points at the proxy, and a project folder."""

    def __init__(self, tmp_path: Path, proxy: RecordingProxy, wire: str) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.home.mkdir(exist_ok=True)
        self.project.mkdir(exist_ok=True)
        self.proxy = proxy
        self.wire = wire
        self.write_models()

    def write_models(self, *, max_tokens: int = 96, reasoning: bool = False, compat: str = "") -> None:
        base = self.proxy.url + "/v1" if self.wire == "openai" else self.proxy.url
        compat_part = f", compat = {{ {compat} }}" if compat else ""
        (self.home / "models.toml").write_text(
            "[providers.llama]\n"
            f'api = "{WIRE[self.wire]}"\n'
            f'base_url = "{base}"\n'
            'api_key = "none"\n'
            f'models = [{{ id = "{MODEL_ID}", context_window = {CTX_SIZE}, max_tokens = {max_tokens}, '
            f"reasoning = {'true' if reasoning else 'false'}{compat_part} }}]\n",
            encoding="utf-8",
        )

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """``pi --provider llama --model smollm2 *args`` in the project folder, stdin empty."""
        proc = subprocess.run(
            [*PI, "--provider", "llama", "--model", MODEL_ID, *args],
            cwd=self.project,
            env=clean_env(self.home),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )
        return subprocess.CompletedProcess(
            proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
        )

    def session_files(self) -> list[Path]:
        root = self.home / "sessions"
        return sorted(root.rglob("*.jsonl")) if root.exists() else []

    def session_messages(self) -> list[dict[str, Any]]:
        """The messages of the only session file, in order."""
        files = self.session_files()
        assert len(files) == 1, files
        entries = [json.loads(line) for line in files[0].read_text("utf-8").splitlines() if line.strip()]
        return [e["message"] for e in entries if e.get("type") == "message"]
