"""``pi mcp list|add|remove``, project trust for ``.pi/mcp.json``, and start-up imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.conftest import PY, TINY, tiny, write_mcp
from tests.modes.pirun import PiHome, clean_env
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, "anthropic")


def test_add_list_remove(pi: PiHome) -> None:
    added = pi.run("mcp", "add", "tiny", "--env", "K=V", "--", PY, TINY)
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == f'Added global MCP server "tiny" in {pi.home / "mcp.json"}.'
    entry = json.loads((pi.home / "mcp.json").read_text())["mcpServers"]["tiny"]
    assert entry == {"command": PY, "args": [TINY], "env": {"K": "V"}}
    listed = pi.run("mcp", "list")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "tiny: connected, 8 tools (direct, global)" in listed.stdout
    assert "add, echo" in listed.stdout
    again = pi.run("mcp", "add", "tiny", "--url", "http://127.0.0.1:9/mcp")
    assert again.stdout.startswith('Replaced global MCP server "tiny"')
    removed = pi.run("mcp", "remove", "tiny")
    assert removed.returncode == 0
    assert json.loads((pi.home / "mcp.json").read_text())["mcpServers"] == {}
    assert pi.run("mcp", "remove", "tiny").returncode == 1


def test_list_exits_1_on_failed_server_or_invalid_entry(pi: PiHome) -> None:
    write_mcp(pi.home / "mcp.json", {"gone": {"command": "/nonexistent/x"}, "bad name!": {"command": "x"}})
    listed = pi.run("mcp", "list", "--json")
    assert listed.returncode == 1
    data = json.loads(listed.stdout)
    assert data["servers"][0]["state"] == "failed"
    assert "command not found" in data["servers"][0]["error"]
    assert any("bad name!" in e for e in data["errors"])


def test_add_rejects_sse(pi: PiHome) -> None:
    done = pi.run("mcp", "add", "old", "--url", "http://x/sse", "--exposure", "sideways")
    assert done.returncode == 1
    assert not (pi.home / "mcp.json").exists()


def test_untrusted_project_mcp_json_runs_nothing_until_trusted(pi: PiHome, sse_server: SSEServer) -> None:
    """The project's server would write a marker: it does not run until trust is given."""
    marker = pi.project / "pwned"
    write_mcp(pi.project / ".pi" / "mcp.json", {"repo": tiny("--marker", str(marker))})
    sse_server.enqueue(Turn(blocks=[Text("hi")]))
    done = pi.run("-p", "hi")
    assert done.returncode == 0, done.stderr
    assert "is not trusted" in done.stderr and "-a" in done.stderr
    listed = pi.run("mcp", "list")
    assert "was ignored: this folder is not trusted" in listed.stdout
    assert not marker.exists()
    assert not any(t["name"].startswith("mcp__") for t in sse_server.requests[0].json.get("tools", []))
    # Trusted for this run (-a): the server runs and its tools are there.
    sse_server.enqueue(Turn(blocks=[ToolCall("mcp__repo__add", {"a": 1, "b": 2}, id="c1")]), Turn(blocks=[Text("ok")]))
    trusted = pi.run("-a", "-p", "hi")
    assert trusted.returncode == 0, trusted.stderr
    assert marker.exists()
    assert not (pi.home / "trust.json").exists()


def test_trust_dialog_lines_show_commands(tmp_path: Path) -> None:
    from pi_coder.permissions.trust import project_resources

    write_mcp(
        tmp_path / ".pi" / "mcp.json",
        {"git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"T": "!pass show x"}}, "docs": {"url": "http://h/mcp"}},
    )
    lines = project_resources(tmp_path)
    assert ".pi/mcp.json: 2 servers (docs (http: http://h/mcp), git (stdio: uvx mcp-server-git; runs pass show x))" in lines


PROBE = (
    "import json, sys\n"
    "from pi_coder.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stderr.write('MODULES' + json.dumps(sorted(sys.modules)))\n"
)


def _modules(pi: PiHome, *args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=pi.project,
        env=clean_env(pi.home),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return set(json.loads(done.stderr.rsplit("MODULES", 1)[1]))


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("--list-models",), ("-p", "hi")])
def test_runs_without_servers_never_import_mcp(pi: PiHome, sse_server: SSEServer, args: tuple[str, ...]) -> None:
    sse_server.enqueue(Turn(blocks=[Text("hi")]))
    loaded = _modules(pi, *args)
    assert "mcp" not in loaded and "pi_coder.mcp" not in loaded


def test_version_with_a_server_configured_never_imports_mcp(pi: PiHome) -> None:
    write_mcp(pi.home / "mcp.json", {"tiny": tiny()})
    for args in (("--version",), ("--help",), ("--list-models",)):
        assert "mcp" not in _modules(pi, *args)


def test_root_mcp_json_of_claude_code_read_in_a_trusted_folder(pi: PiHome, sse_server: SSEServer) -> None:
    """``.mcp.json`` at the root (Claude Code's project file): listed by the trust dialog, ignored
    untrusted, read trusted; ``.pi/mcp.json`` wins a shared name and may override only ``enabled``."""
    from pi_coder.permissions.trust import project_resources

    marker = pi.project / "pwned"
    (pi.project / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "claude": {"type": "stdio", **tiny("--marker", str(marker)), "env": {"X": "${PI31_UNSET_X:-d}"}},
                    "both": tiny(),
                    "off": tiny(),
                }
            }
        ),
        encoding="utf-8",
    )
    write_mcp(pi.project / ".pi" / "mcp.json", {"both": tiny(exposure="hidden"), "off": {"enabled": False}})
    assert any(line.startswith(".mcp.json: 3 servers (both (stdio: ") for line in project_resources(pi.project))
    sse_server.enqueue(Turn(blocks=[Text("hi")]))
    done = pi.run("-p", "hi")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert not any(t["name"].startswith("mcp__") for t in sse_server.requests[0].json.get("tools", []))
    listed = pi.run("mcp", "list")
    assert ".mcp.json was ignored: this folder is not trusted" in listed.stdout
    trusted = pi.run("mcp", "list", "--json", "-a")
    servers = {s["name"]: s for s in json.loads(trusted.stdout)["servers"]}
    assert servers["claude"]["state"] == "connected" and servers["claude"]["source"] == "project"
    assert servers["both"]["exposure"] == "hidden" and servers["off"]["state"] == "disabled"
    assert marker.exists()
