"""Pi 1.6 flags -nt, -xt/--exclude-tools and --offline (a real process)."""

from __future__ import annotations

from pathlib import Path

from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer, Text, Turn


def _tools(request: dict) -> list[str]:  # type: ignore[type-arg]
    return sorted(t["name"] for t in request.get("tools", []))


def test_exclude_tools_short_no_tools_and_offline(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    sse_server.enqueue(Turn([Text("a")]), Turn([Text("b")]))
    done = pi.run("--offline", "-xt", "bash,write", "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert _tools(sse_server.requests[0].json) == ["edit", "read"]
    done = pi.run("-nt", "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert _tools(sse_server.requests[1].json) == []
    help_text = pi.run("--help").stdout
    assert "--exclude-tools" in help_text and "-nt" in help_text and "--offline" in help_text
