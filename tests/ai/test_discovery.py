"""Local-server discovery: a keyless openai-completions provider found on loopback."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pi_coder.ai import discovery
from pi_coder.ai.discovery import DEFAULT_PORTS, LOOPBACK, discover_local, found_notice, register_found
from pi_coder.ai.models import create_models
from tests.modes.pirun import PI, clean_env
from tests.support.sse_server import Text, Turn, encode_openai


class _Handler(BaseHTTPRequestHandler):
    requests: list[tuple[str, str]]

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path))
        if self.path != "/v1/models":
            self.send_error(404)
            return
        body = json.dumps({"object": "list", "data": [{"id": "tiny-coder", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.requests.append(("POST", self.path))
        body = encode_openai(Turn([Text("Hello from the local server.")]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def local_server() -> Iterator[tuple[int, list[tuple[str, str]]]]:
    seen: list[tuple[str, str]] = []
    handler = type("Handler", (_Handler,), {"requests": seen})
    server = ThreadingHTTPServer((LOOPBACK, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], seen
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def test_discovery_finds_the_server_and_registers_a_keyless_provider(local_server: Any) -> None:
    port, seen = local_server
    found = discover_local(ports={port: "llamacpp", _closed_port(): "vllm"})
    assert [(f.name, f.port, f.model_ids) for f in found] == [("llamacpp", port, ("tiny-coder",))]
    assert seen == [("GET", "/v1/models")]
    assert f"llama.cpp at 127.0.0.1:{port} with 1 model" in found_notice(found)
    models = create_models(models_toml=Path("/nonexistent/models.toml"), env={}, include_builtin=False)
    register_found(models, found)
    model = models.get_model("llamacpp", "tiny-coder")
    assert model is not None and model.api == "openai-completions"
    assert model.base_url == f"http://127.0.0.1:{port}/v1"
    assert models.available_models() == [model]


def test_env_var_gives_the_ports(local_server: Any) -> None:
    port, _ = local_server
    found = discover_local(env={"PI_CODER_DISCOVERY_PORTS": f"{port}=ollama"})
    assert [f.label for f in found] == ["Ollama"]
    assert discover_local(env={"PI_CODER_DISCOVERY_PORTS": ""}) == []


def test_closed_ports_answer_at_once() -> None:
    """(The 100 ms budget itself is a speed figure; a loaded machine cannot hold a test to it.)"""
    ports = {_closed_port(): "llamacpp", _closed_port(): "ollama"}
    start = time.perf_counter()
    assert discover_local(ports=ports) == []
    assert time.perf_counter() - start < 2


def test_a_silent_server_is_cut_off_at_the_budget() -> None:
    with socket.socket() as sock:  # accepts connections (backlog) but never answers
        sock.bind((LOOPBACK, 0))
        sock.listen(8)
        start = time.perf_counter()
        assert discover_local(ports={sock.getsockname()[1]: "vllm"}) == []
        assert time.perf_counter() - start < 2  # the server would never answer


def test_only_loopback_is_contacted_on_the_default_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    contacted: list[tuple[str, int]] = []

    async def fake_open(host: str, port: int, **_: Any) -> Any:
        contacted.append((host, port))
        raise ConnectionRefusedError

    monkeypatch.setattr(discovery.asyncio, "open_connection", fake_open)
    assert discover_local(env={}) == []
    assert sorted(contacted) == sorted((LOOPBACK, p) for p in DEFAULT_PORTS)
    assert set(DEFAULT_PORTS) == {11434, 8080, 1234, 8000}


def test_discovery_works_inside_a_running_loop(local_server: Any) -> None:
    port, _ = local_server

    async def main() -> list[Any]:
        return discover_local(ports={port: "lmstudio"})

    assert [f.name for f in asyncio.run(main())] == ["lmstudio"]


def _pi(home: Path, project: Path, port: int, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env(home) | {"PI_CODER_DISCOVERY_PORTS": f"{port}=llamacpp"}
    return subprocess.run(
        [*PI, *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_print_mode_answers_through_a_discovered_server(tmp_path: Path, local_server: Any) -> None:
    port, seen = local_server
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    run = _pi(home, project, port, "-p", "--no-session", "hi")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "Hello from the local server.\n"
    assert seen == [("GET", "/v1/models"), ("POST", "/v1/chat/completions")]
    # News, not a warning: said once on stderr, without "Warning:" (issue 33).
    found = [line for line in run.stderr.splitlines() if "llama.cpp at 127.0.0.1" in line]
    assert found == [f"Found llama.cpp at 127.0.0.1:{port} with 1 model (no API key needed; /model to switch)."], run.stderr
    assert not (home / "models.toml").exists()


def test_local_discovery_false_finds_nothing(tmp_path: Path, local_server: Any) -> None:
    port, seen = local_server
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / "settings.toml").write_text("local_discovery = false\n")
    run = _pi(home, project, port, "-p", "--no-session", "hi")
    assert run.returncode != 0
    assert "No model configured" in run.stderr
    assert seen == []


def test_an_untrusted_project_cannot_turn_it_off(tmp_path: Path, local_server: Any) -> None:
    port, seen = local_server
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.toml").write_text("local_discovery = false\n")
    run = _pi(home, project, port, "-p", "--no-session", "hi")
    assert run.returncode == 0, run.stderr
    assert seen[0] == ("GET", "/v1/models")


def test_no_probe_when_a_provider_has_a_key(
    tmp_path: Path, local_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_coder.cli import parse_args
    from pi_coder.modes.setup import _discover_local
    from pi_coder.settings import load_settings

    port, seen = local_server
    monkeypatch.setenv("PI_CODER_DISCOVERY_PORTS", f"{port}=llamacpp")
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path))
    settings = load_settings(str(tmp_path))
    keyed = create_models(models_toml=tmp_path / "models.toml", env={"ANTHROPIC_API_KEY": "sk-test"})
    assert _discover_local(parse_args([]), keyed, settings) == [] and seen == []
    keyless = create_models(models_toml=tmp_path / "models.toml", env={})
    news = _discover_local(parse_args([]), keyless, settings)
    assert seen == [("GET", "/v1/models")] and "llama.cpp at 127.0.0.1" in news[0]
