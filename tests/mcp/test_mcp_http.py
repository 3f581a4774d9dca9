"""Streamable HTTP: connect retries, ``needs sign-in`` on 401, a restarted server (extensions §6.3, §6.7).

A small front server on 127.0.0.1 answers the first POSTs with a chosen status, then forwards
to the tests' tiny MCP server (``--json``: whole JSON bodies, so forwarding is one read).
"""

from __future__ import annotations

import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pi_coder.mcp.config import load_servers
from pi_coder.mcp.manager import McpManager
from tests.mcp.conftest import HttpServer, write_mcp
from tests.mcp.test_mcp_client import Host


class Front:
    """Answers the first ``fail`` POSTs with ``status``; forwards the rest to ``upstream`` (or 404)."""

    def __init__(
        self, status: int, fail: int, upstream: HttpServer | None, *, fail_from: int | None = None, body: bytes = b""
    ) -> None:
        """``fail_from``: forward the first ``fail_from`` POSTs, answer every later one ``status`` with ``body``."""
        self.status, self.fail, self.upstream = status, fail, upstream
        self.fail_from, self.body = fail_from, body
        self.posts: list[int] = []
        self.auth: list[str | None] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, code: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
                self.send_response(code)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._reply(405)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                owner.auth.append(self.headers.get("Authorization"))
                late = owner.fail_from is not None and len(owner.posts) >= owner.fail_from
                if late or len(owner.posts) < owner.fail or owner.upstream is None:
                    owner.posts.append(owner.status)
                    self._reply(owner.status, owner.body if late else b"", {"Content-Type": "text/plain"})
                    return
                owner.posts.append(200)
                self._forward("POST", body)

            def do_DELETE(self) -> None:
                self._forward("DELETE", b"")

            def _forward(self, method: str, body: bytes) -> None:
                assert owner.upstream is not None
                conn = http.client.HTTPConnection("127.0.0.1", owner.upstream.port, timeout=30)
                skip = {"host", "content-length", "connection"}
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                conn.request(method, "/mcp", body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
                keep = {k: v for k, v in answer.getheaders() if k.lower() in ("content-type", "mcp-session-id")}
                conn.close()
                self._reply(answer.status, data, keep)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/mcp"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def json_server():
    server = HttpServer("--json")
    server.start()
    yield server
    server.stop()


async def manager_for(tmp_path: Path, entry: dict[str, Any]) -> tuple[McpManager, Host, list[str]]:
    write_mcp(tmp_path / "mcp.json", {"web": entry})
    config = load_servers(str(tmp_path), project_trusted=False, global_path=tmp_path / "mcp.json")
    manager = McpManager(config, str(tmp_path))
    host, notices = Host(), []
    manager.attach(host, lambda _level, text: notices.append(text))
    manager.start()
    await manager.wait_connecting(60)
    return manager, host, notices


async def test_transient_errors_at_connect_are_retried(tmp_path: Path, json_server: HttpServer) -> None:
    front = Front(503, 2, json_server)
    try:
        started = time.monotonic()
        manager, host, notices = await manager_for(tmp_path, {"url": front.url, "timeout": 30})
        try:
            assert manager.servers["web"].state == "connected", manager.lines()
            assert front.posts[:3] == [503, 503, 200]
            assert time.monotonic() - started >= 1.25  # waited 0.25 s and 1 s
            assert "mcp__web__add" in [t.name for t in host.agent.state.tools]
            assert notices == []
        finally:
            await manager.close()
    finally:
        front.close()


@pytest.mark.parametrize("status", [500, 429])
async def test_retries_stop_after_three_attempts(tmp_path: Path, status: int) -> None:
    front = Front(status, 99, None)
    try:
        manager, _, notices = await manager_for(tmp_path, {"url": front.url, "timeout": 30})
        await manager.close()
        server = manager.servers["web"]
        assert server.state == "failed" and server.error == f"HTTP {status} from {front.url}"
        assert front.posts == [status] * 3
        assert len(notices) == 1 and f"HTTP {status}" in notices[0]
    finally:
        front.close()


@pytest.mark.parametrize("status", [501, 403, 400])
async def test_other_statuses_are_not_retried(tmp_path: Path, status: int) -> None:
    front = Front(status, 99, None)
    try:
        manager, _, _ = await manager_for(tmp_path, {"url": front.url, "timeout": 30})
        await manager.close()
        assert manager.servers["web"].state == "failed"
        assert front.posts == [status]
    finally:
        front.close()


async def test_401_without_authorization_needs_sign_in(tmp_path: Path) -> None:
    front = Front(401, 99, None)
    try:
        manager, host, notices = await manager_for(tmp_path, {"url": front.url, "timeout": 30})
        server = manager.servers["web"]
        assert server.state == "needs sign-in" and front.posts == [401]
        assert len(notices) == 1 and "run /mcp login web" in notices[0]
        assert manager.lines()[0].startswith("web: needs sign-in (direct, global)")
        assert host.agent.state.tools == []
        await manager.close()
    finally:
        front.close()


async def test_401_with_a_bearer_token_is_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEB_TOKEN", "s3cret-value")
    front = Front(401, 99, None)
    try:
        entry = {"url": front.url, "timeout": 30, "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}
        manager, _, notices = await manager_for(tmp_path, entry)
        await manager.close()
        server = manager.servers["web"]
        assert server.state == "failed" and server.error == f"HTTP 401 from {front.url}"
        assert front.auth == ["Bearer s3cret-value"]  # the header reached the server, expanded
        assert "s3cret" not in "\n".join(notices + manager.lines())
    finally:
        front.close()


async def test_server_restarted_between_two_calls(
    tmp_path: Path, json_server: HttpServer, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Scenario 42: the second call meets a 404 for its forgotten session, re-initializes, succeeds.

    The SDK's warning about the old session goes to ``mcp.log``, not to stderr."""
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path / "home"))
    manager, _, notices = await manager_for(tmp_path, {"url": json_server.url, "timeout": 30})
    try:
        first = await manager.call("web", "add", {"a": 1, "b": 2}, None, None)
        assert first.content[0].text == "3"
        json_server.stop()
        json_server.start()
        second = await manager.call("web", "add", {"a": 20, "b": 22}, None, None)
        assert second.content[0].text == "42"
        assert manager.servers["web"].state == "connected"
        assert not any("failed" in n for n in notices)
    finally:
        await manager.close()
    log = (tmp_path / "home" / "logs" / "mcp.log").read_text()
    assert "[sdk] warning mcp.client.streamable_http: Session termination failed: 404" in log
    assert "Session termination" not in capfd.readouterr().err


async def test_a_failed_call_names_the_http_status_and_body(tmp_path: Path, json_server: HttpServer) -> None:
    """A 500 to a tools/call is not retried (the server may have run it); the error names status and body."""
    front = Front(500, 0, json_server, fail_from=0, body=b"upstream database is down")
    try:
        front.fail_from = None
        manager, _, _ = await manager_for(tmp_path, {"url": front.url, "timeout": 30})
        try:
            assert manager.servers["web"].state == "connected"
            front.fail_from = len(front.posts)
            with pytest.raises(Exception, match="HTTP 500: upstream database is down") as caught:
                await manager.call("web", "add", {"a": 1, "b": 2}, None, None)
            assert front.posts.count(500) == 1, caught.value
        finally:
            await manager.close()
    finally:
        front.close()
