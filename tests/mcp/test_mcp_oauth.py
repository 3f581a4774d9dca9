"""OAuth sign-in end to end (docs/mcp.md#oauth-sign-in) against ``oauth_server.py``: a protected MCP server
and its authorization server on 127.0.0.1. The test plays the browser: it fetches the
authorization URL ``pi mcp login`` prints and follows the redirect to pi's loopback listener.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from pi_coder.mcp.config import load_servers
from pi_coder.mcp.manager import McpManager
from tests.mcp.conftest import HERE, PY, free_port, tiny, write_mcp
from tests.mcp.test_mcp_client import Host
from tests.modes.pirun import PI, clean_env
from tests.tui.conftest import make_session, project  # noqa: F401 (fixtures)

SERVER = str(HERE / "oauth_server.py")


class OAuthServer:
    def __init__(self, tmp_path: Path, *extra: str) -> None:
        self.port = free_port()
        self.log = tmp_path / f"oauth-{self.port}.log"
        self.proc = subprocess.Popen(
            [PY, SERVER, str(self.port), str(self.log), *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("the OAuth test server did not start") from None
                time.sleep(0.1)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        rows = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [r for r in rows if kind is None or r["event"] == kind]

    def revoke(self, *, refresh: bool = False) -> None:
        query = "?refresh=1" if refresh else ""
        httpx.post(f"http://127.0.0.1:{self.port}/admin/revoke{query}", timeout=10).raise_for_status()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("PI_CODER_HOME", str(home))
    return home


@pytest.fixture
def oauth(tmp_path: Path) -> Any:
    server = OAuthServer(tmp_path)
    yield server
    server.stop()


def pi_login(home: Path, cwd: Path, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """``pi mcp login NAME --no-browser``; the test follows the printed URL like a browser would."""
    proc = subprocess.Popen(
        [*PI, "mcp", "login", name, "--no-browser", "--timeout", "60", *extra],
        cwd=cwd, env=clean_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("http://"):
                page = httpx.get(line.strip(), follow_redirects=True, timeout=30)
                assert page.status_code == 200 and "pi is signed in to " + name in page.text
                break
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(lines) + out, err)


def pi_logout(home: Path, cwd: Path, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PI, "mcp", "logout", name], cwd=cwd, env=clean_env(home), capture_output=True, text=True, timeout=60)


async def connect(home: Path, cwd: Path) -> tuple[McpManager, list[str]]:
    config = load_servers(str(cwd), project_trusted=False, global_path=home / "mcp.json")
    manager = McpManager(config, str(cwd))
    notices: list[str] = []
    manager.attach(Host(), lambda _level, text: notices.append(text))
    manager.start()
    assert await manager.wait_connecting(30) == []
    return manager, notices


def stored(home: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((home / "mcp-auth.json").read_text())
    return data


async def test_login_connect_refresh_logout(home: Path, tmp_path: Path, oauth: OAuthServer) -> None:
    write_mcp(home / "mcp.json", {"secure": {"url": oauth.url, "timeout": 30}})

    manager, notices = await connect(home, tmp_path)
    await manager.close()
    assert manager.servers["secure"].state == "needs sign-in"
    assert "run /mcp login secure (or pi mcp login secure)" in notices[0]

    done = pi_login(home, tmp_path, "secure")
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'Signed in to MCP server "secure"' in done.stdout
    # Discovery from the 401, dynamic registration as "pi" for the loopback redirect, PKCE code flow.
    [registered] = oauth.events("register")
    assert registered["client_name"] == "pi"
    assert registered["redirect_uris"][0].startswith("http://127.0.0.1:")
    [authorized] = oauth.events("authorize")
    assert authorized["resource"] == oauth.url and authorized["scope"] == "mcp"
    path = home / "mcp-auth.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    record = stored(home)[f"secure {oauth.url}"]
    first = record["tokens"]["access_token"]
    assert record["client"]["client_id"] == registered["client_id"]
    assert first not in done.stdout + done.stderr  # the token is never printed

    manager, notices = await connect(home, tmp_path)
    try:
        assert manager.servers["secure"].state == "connected", notices
        result = await manager.call("secure", "whoami", {}, None, None)
        assert result.content[0].text == "signed-in user"
        # The server stops accepting the token: the next connection refreshes it on the 401 and goes on.
        oauth.revoke()
        await manager.reconnect("secure", wait=True)
        assert manager.servers["secure"].state == "connected"
        assert (await manager.call("secure", "whoami", {}, None, None)).content[0].text == "signed-in user"
    finally:
        await manager.close()
    refreshes = [e for e in oauth.events("token") if e["grant"] == "refresh_token"]
    assert len(refreshes) == 1 and refreshes[0]["client_id"] == registered["client_id"]
    assert refreshes[0]["resource"] == oauth.url
    renewed = stored(home)[f"secure {oauth.url}"]["tokens"]["access_token"]
    assert renewed != first
    # Access and refresh tokens both refused: the refresh fails and the server needs sign-in again.
    oauth.revoke(refresh=True)
    manager, notices = await connect(home, tmp_path)
    await manager.close()
    assert manager.servers["secure"].state == "needs sign-in", notices
    assert oauth.events("token_refused")[-1]["grant"] == "refresh_token"

    log = home / "logs" / "mcp.log"
    assert not log.exists() or first not in log.read_text() and renewed not in log.read_text()

    # A second sign-in reuses the registered client (same redirect port), and logout forgets it all.
    again = pi_login(home, tmp_path, "secure")
    assert again.returncode == 0, again.stderr
    assert len(oauth.events("register")) == 1
    out = pi_logout(home, tmp_path, "secure")
    assert out.returncode == 0 and 'Signed out of MCP server "secure"' in out.stdout
    assert f"secure {oauth.url}" not in stored(home)
    manager, _ = await connect(home, tmp_path)
    await manager.close()
    assert manager.servers["secure"].state == "needs sign-in"


async def test_expired_token_is_refreshed_before_use(home: Path, tmp_path: Path) -> None:
    server = OAuthServer(tmp_path, "--expires", "1")
    try:
        write_mcp(home / "mcp.json", {"secure": {"url": server.url, "timeout": 30}})
        done = pi_login(home, tmp_path, "secure")
        assert done.returncode == 0, done.stderr
        await asyncio.sleep(1.2)  # past the token's life
        before = len(server.events("unauthorized"))
        manager, notices = await connect(home, tmp_path)
        await manager.close()
        assert manager.servers["secure"].state == "connected", notices
        assert [e["grant"] for e in server.events("token")] == ["authorization_code", "refresh_token"]
        # Refreshed ahead of the request: the expired token was never sent.
        assert not [e for e in server.events("unauthorized")[before:] if e["had_token"]]
    finally:
        server.stop()


def test_login_mistakes_are_one_line(home: Path, tmp_path: Path) -> None:
    write_mcp(home / "mcp.json", {"local": tiny(), "keyed": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}}})
    env = clean_env(home)
    for args, expected in (
        (["nosuch"], 'no MCP server "nosuch" in mcp.json (servers: local, keyed)'),
        (["local"], '"local" is not an HTTP server'),
        (["keyed"], '"keyed" sends its own Authorization header'),
        ([], "login needs a server name"),
    ):
        done = subprocess.run([*PI, "mcp", "login", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and expected in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    # An untrusted project's server is not signed in to: its headers could run a command.
    marker = tmp_path / "ran"
    write_mcp(tmp_path / ".pi" / "mcp.json", {"proj": {"url": "http://127.0.0.1:9/mcp", "headers": {"X": f"!touch {marker}"}}})
    for args in (["-l", "proj"], ["proj"]):
        done = subprocess.run([*PI, "mcp", "login", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and ("not trusted" in done.stderr if "-l" in args else 'no MCP server "proj"' in done.stderr)
    assert not marker.exists()


def test_oauth_entry_is_validated(tmp_path: Path) -> None:
    write_mcp(tmp_path / "mcp.json", {
        "ok": {"url": "http://127.0.0.1:9/mcp", "oauth": {"clientId": "abc", "callbackPort": 8765, "clientName": "Other"}},
        "bad": {"url": "http://127.0.0.1:9/mcp", "oauth": {"callbackPort": "x"}},
        "odd": {"url": "http://127.0.0.1:9/mcp", "oauth": {"scopes": "a"}},
    })
    config = load_servers(str(tmp_path), project_trusted=False, global_path=tmp_path / "mcp.json")
    ok = config.servers["ok"].oauth
    assert ok is not None and (ok.client_id, ok.callback_port, ok.client_name) == ("abc", 8765, "Other")
    assert any("oauth.callbackPort must be a port number" in e for e in config.errors)
    assert any('unknown oauth key "scopes"' in e for e in config.errors)


def test_no_sdk_import_for_pi_p_without_oauth(tmp_path: Path) -> None:
    """Loading the oauth entry reads no SDK (it is imported only when an HTTP server connects)."""
    code = (
        "import sys; from pi_coder.mcp.config import load_servers; from pathlib import Path;"
        f"load_servers('.', project_trusted=False, global_path=Path({str(tmp_path / 'mcp.json')!r}));"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'httpx2')))"
    )
    write_mcp(tmp_path / "mcp.json", {"s": {"url": "http://127.0.0.1:9/mcp", "oauth": {"clientId": "x"}}})
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.stdout.strip() == "[]", out.stderr


async def test_tui_login_by_browser_then_by_pasted_url(make_session, project: Path, home: Path, oauth: OAuthServer) -> None:  # noqa: F811
    """``/mcp login`` in the TUI: the sign-in screen shows the URL; the browser's redirect (or the URL
    it was redirected to, pasted) completes it and the server reconnects."""
    from textual.widgets import Input

    from pi_coder.tui.mcp_panel import McpServersScreen, SignInScreen
    from tests.mcp.test_mcp_panel import _choose
    from tests.mcp.test_mcp_tui import _attach, _send
    from tests.tui.helpers import wait_until
    from tests.tui.screen_text import screen_text
    from tests.tui.screens_support import make_app

    write_mcp(home / "mcp.json", {"secure": {"url": oauth.url, "timeout": 30}})
    session, _ = make_session([])
    manager = _attach(session, home / "mcp.json")
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: manager.servers["secure"].state == "needs sign-in", what="needs sign-in", timeout=30)
        # The first sign-in from the /mcp dialogs: the server, then its "Sign in" action.
        await _send(pilot, "/mcp")
        await wait_until(pilot, lambda: isinstance(app.screen, McpServersScreen), what="the server list")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Error: HTTP 401: run /mcp login secure" in screen_text(app), what="the details")
        await _choose(pilot, app, "Sign in")
        await wait_until(pilot, lambda: isinstance(app.screen, SignInScreen), what="the sign-in screen", timeout=30)
        screen = app.screen
        assert isinstance(screen, SignInScreen) and screen.url.startswith(f"http://127.0.0.1:{oauth.port}/auth/authorize?")
        page = await asyncio.to_thread(httpx.get, screen.url, follow_redirects=True, timeout=30)
        assert page.status_code == 200
        await wait_until(pilot, lambda: manager.servers["secure"].state == "connected", what="connected", timeout=30)
        assert "mcp__secure__whoami" in session.tool_names
        await wait_until(pilot, lambda: "State: connected, 1 tool" in screen_text(app), what="the details again")
        assert "Sign out" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, McpServersScreen), what="the list again")
        await pilot.press("escape")

        # Sign out from the command, then sign in with the redirected URL pasted (a browser elsewhere).
        await _send(pilot, "/mcp logout secure")
        await wait_until(pilot, lambda: manager.servers["secure"].state == "needs sign-in", what="signed out", timeout=30)
        await _send(pilot, "/mcp login secure")
        await wait_until(pilot, lambda: isinstance(app.screen, SignInScreen), what="the sign-in screen again", timeout=30)
        screen = app.screen
        assert isinstance(screen, SignInScreen)
        answer = await asyncio.to_thread(httpx.get, screen.url, follow_redirects=False, timeout=30)
        redirected = answer.headers["location"]
        box = screen.query_one(Input)
        box.value = "not a redirect"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "carries no code" in str(screen.query_one("#sign-in-error").render()), what="the hint")
        box.value = redirected
        await pilot.press("enter")
        await wait_until(pilot, lambda: manager.servers["secure"].state == "connected", what="connected again", timeout=30)
    await manager.close()
    assert len(oauth.events("register")) == 2  # signing out forgot the client: registered again


def test_rpc_mcp_login(tmp_path: Path, sse_server, oauth: OAuthServer) -> None:
    """``/mcp login`` in RPC mode: the URL comes as a notice, the command finishes once the browser is back."""
    from tests.modes.pirun import PiHome, RpcClient

    pi = PiHome(tmp_path, sse_server, "anthropic")
    write_mcp(pi.home / "mcp.json", {"secure": {"url": oauth.url, "timeout": 30}})
    rpc = RpcClient(pi, env=pi.env(BROWSER="true"))
    try:
        assert rpc.call({"type": "prompt", "message": "/mcp login secure"})["success"]
        note = rpc.wait_for(lambda line: "Open this URL to sign in to secure: " in json.dumps(line), timeout=90)
        url = json.dumps(note).split("Open this URL to sign in to secure: ")[1].split('"')[0]
        assert httpx.get(url, follow_redirects=True, timeout=30).status_code == 200
        done = rpc.wait_for(lambda line: 'Signed in to MCP server \\"secure\\"' in json.dumps(line), timeout=90)
        assert done["type"] == "extension_ui_request" and done["method"] == "notify"
        listed = rpc.call({"type": "prompt", "message": "/mcp"})
        assert listed["success"]
        table = rpc.wait_for(lambda line: line.get("method") == "notify" and "secure:" in line.get("message", ""), timeout=90)
        assert table["message"].startswith("secure: connected, 1 tool")
    finally:
        assert rpc.close() == 0
    assert sse_server.requests == []


def test_cli_login_with_a_pasted_redirect_url(home: Path, tmp_path: Path, oauth: OAuthServer) -> None:
    """On a terminal, ``pi mcp login`` also takes the URL the browser was redirected to (a browser elsewhere)."""
    import pty

    write_mcp(home / "mcp.json", {"secure": {"url": oauth.url, "timeout": 30}})
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*PI, "mcp", "login", "secure", "--no-browser", "--timeout", "60"],
        cwd=tmp_path, env=clean_env(home), stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    os.close(slave)
    try:
        assert proc.stdout is not None
        url = next(line.strip() for line in proc.stdout if line.startswith("http://"))
        answer = httpx.get(url, follow_redirects=False, timeout=30)  # the browser, which cannot reach pi
        assert answer.status_code == 302
        os.write(master, answer.headers["location"].encode() + b"\n")
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert 'Signed in to MCP server "secure"' in out
    assert stored(home)[f"secure {oauth.url}"]["tokens"]["access_token"]


async def test_next_prompt_uses_a_sign_in_from_another_shell(make_session, home: Path, tmp_path: Path, oauth: OAuthServer) -> None:  # noqa: F811
    """A running session whose server needs sign-in reconnects it at the next prompt once ``pi mcp login`` stored tokens."""
    from pi_coder.ai.providers.faux import faux_message
    from tests.mcp.test_mcp_tui import _attach

    write_mcp(home / "mcp.json", {"secure": {"url": oauth.url, "timeout": 30}})
    session, faux = make_session([faux_message("one"), faux_message("two")])
    manager = _attach(session, home / "mcp.json")
    try:
        await session.prompt("first")
        assert manager.servers["secure"].state == "needs sign-in"
        assert "mcp__secure__whoami" not in session.tool_names
        done = await asyncio.to_thread(pi_login, home, tmp_path, "secure")
        assert done.returncode == 0, done.stderr
        await session.prompt("second")
        assert manager.servers["secure"].state == "connected"
        assert "mcp__secure__whoami" in session.tool_names and faux.state.call_count == 2
    finally:
        await manager.close()


def test_login_to_an_open_server_stores_nothing(home: Path, tmp_path: Path, http_server) -> None:
    write_mcp(home / "mcp.json", {"open": {"url": http_server.url, "timeout": 30}})
    done = subprocess.run(
        [*PI, "mcp", "login", "open", "--no-browser", "--timeout", "60"],
        cwd=tmp_path, env=clean_env(home), capture_output=True, text=True, timeout=90,
    )
    assert done.returncode == 0, done.stderr
    assert 'MCP server "open" did not ask for sign-in; nothing stored' in done.stdout
    assert not (home / "mcp-auth.json").exists()


def test_print_mode_mcp_login(tmp_path: Path, sse_server, oauth: OAuthServer) -> None:
    """``pi -p "/mcp login <server>"``: the URL on stderr, the outcome on stdout, no model call."""
    from tests.modes.pirun import PiHome

    pi = PiHome(tmp_path, sse_server, "anthropic")
    write_mcp(pi.home / "mcp.json", {"secure": {"url": oauth.url, "timeout": 30}})
    proc = subprocess.Popen(
        [*PI, "-p", "/mcp login secure"], cwd=pi.project, env=pi.env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stderr is not None
        line = next(line for line in proc.stderr if "Open this URL to sign in to secure: " in line)
        url = line.split("Open this URL to sign in to secure: ")[1].strip()
        assert httpx.get(url, follow_redirects=True, timeout=30).status_code == 200
        out, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert out.strip().startswith('Signed in to MCP server "secure"')
    assert sse_server.requests == []


def test_mcp_add_writes_the_oauth_entry(home: Path, tmp_path: Path) -> None:
    env = clean_env(home)

    def add(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*PI, "mcp", "add", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)

    done = add("web", "--url", "http://127.0.0.1:9/mcp", "--oauth-client-id", "abc", "--oauth-callback-port", "8765",
               "--oauth-client-name", "Other", "--oauth-client-secret", "${WEB_SECRET}")
    assert done.returncode == 0, done.stderr
    entry = json.loads((home / "mcp.json").read_text())["mcpServers"]["web"]
    assert entry["oauth"] == {"clientId": "abc", "callbackPort": 8765, "clientName": "Other", "clientSecret": "${WEB_SECRET}"}
    bad = add("web2", "--url", "http://127.0.0.1:9/mcp", "--oauth-callback-port", "eighty")
    assert bad.returncode == 1 and "oauth.callbackPort must be a port number" in bad.stderr
    stdio = add("local", "--oauth-client-id", "abc", "--", "server")
    assert stdio.returncode == 1 and "--oauth-* options are for servers with --url" in stdio.stderr


def test_login_with_a_configured_client_and_port(home: Path, tmp_path: Path, oauth: OAuthServer) -> None:
    """``oauth.clientId`` + ``callbackPort``: no registration, the fixed redirect URI."""
    port = free_port()
    redirect = f"http://127.0.0.1:{port}/callback"
    made = httpx.post(f"http://127.0.0.1:{oauth.port}/auth/register", json={"redirect_uris": [redirect], "client_name": "admin"}, timeout=10)
    client_id = made.json()["client_id"]
    write_mcp(home / "mcp.json", {"secure": {"url": oauth.url, "oauth": {"clientId": client_id, "callbackPort": port}}})
    done = pi_login(home, tmp_path, "secure")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [e["client_name"] for e in oauth.events("register")] == ["admin"]  # pi registered nothing
    assert oauth.events("authorize")[-1]["client_id"] == client_id
    assert f"redirect_uri={redirect.replace(':', '%3A').replace('/', '%2F')}" in done.stdout


async def test_two_processes_share_a_rotated_refresh(home: Path, tmp_path: Path, oauth: OAuthServer) -> None:
    """Two sessions on one sign-in: the first refreshes (the server rotates the refresh token), the
    second takes the new tokens from the file instead of refreshing with the old one."""
    write_mcp(home / "mcp.json", {"secure": {"url": oauth.url, "timeout": 30}})
    assert pi_login(home, tmp_path, "secure").returncode == 0
    first, _ = await connect(home, tmp_path)
    second, _ = await connect(home, tmp_path)
    try:
        oauth.revoke()
        assert (await first.call("secure", "whoami", {}, None, None)).content[0].text == "signed-in user"
        assert (await second.call("secure", "whoami", {}, None, None)).content[0].text == "signed-in user"
    finally:
        await first.close()
        await second.close()
    assert [e["grant"] for e in oauth.events("token")] == ["authorization_code", "refresh_token"]
    assert oauth.events("token_refused") == []
