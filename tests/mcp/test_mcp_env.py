"""Environment expansion in ``env`` and ``headers`` as Pi 1.6 does it, plus ``${X:-default}``.

An unset variable fails that server with a named error (the others connect); ``$HOME`` and
``${HOME}`` are expanded; ``${X:-default}`` takes the default when X is unset or empty. The real
server's environment is read from ``/proc/<pid>/environ``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.mcp.config import UnsetVariable, expand_value, load_servers
from pi_coder.mcp.manager import McpManager
from tests.mcp.conftest import tiny, write_mcp
from tests.mcp.test_mcp_client import Host


def server_environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)


async def test_unset_variable_fails_that_server_and_the_rest_expand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PI31_UNSET", raising=False)
    monkeypatch.delenv("PI31_EMPTY_DEFAULT", raising=False)
    monkeypatch.setenv("PI31_SET", "value")
    write_mcp(
        tmp_path / "mcp.json",
        {
            "broken": tiny(env={"TOKEN": "x-${PI31_UNSET}"}),
            "good": tiny(
                env={
                    "A": "$HOME/data",
                    "B": "${HOME}",
                    "C": "${PI31_UNSET:-fallback}",
                    "D": "${PI31_SET:-unused}",
                    "E": "cost $ 5",
                }
            ),
        },
    )
    config = load_servers(str(tmp_path), project_trusted=False, global_path=tmp_path / "mcp.json")
    manager = McpManager(config, str(tmp_path))
    notices: list[str] = []
    manager.attach(Host(), lambda _level, text: notices.append(text))
    manager.start()
    try:
        assert await manager.wait_connecting(60) == []
        broken = manager.servers["broken"]
        assert broken.state == "failed"
        assert broken.error is not None and "PI31_UNSET" in broken.error and '"TOKEN"' in broken.error
        assert any('"broken" failed' in n and "PI31_UNSET" in n for n in notices)
        assert broken.pid is None  # never started
        good = manager.servers["good"]
        assert good.state == "connected", good.error
        pid = int((await manager.call("good", "pid", {}, None, None)).content[0].text)
        env = server_environ(pid)
        home = str(Path.home())
        assert env["A"] == f"{home}/data" and env["B"] == home
        assert env["C"] == "fallback" and env["D"] == "value" and env["E"] == "cost $ 5"
        assert env["AI_AGENT"] == "pi" and env["PI_CODING_AGENT"] == "true"  # as Pi 1.6 passes them
    finally:
        await manager.close()


async def test_pis_provider_keys_reach_a_server_only_through_its_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The provider keys pi uses are not inherited by stdio servers; an ``env`` entry passes one
    on purpose; other variables (a server's own token) are inherited as before."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-servers")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-passed-on-purpose")
    monkeypatch.setenv("PI31_SERVER_TOKEN", "the-server-reads-this")
    write_mcp(tmp_path / "mcp.json", {"s": tiny(env={"OPENAI_API_KEY": "${OPENAI_API_KEY}"})})
    config = load_servers(str(tmp_path), project_trusted=False, global_path=tmp_path / "mcp.json")
    manager = McpManager(config, str(tmp_path))
    manager.attach(Host(), lambda _level, _text: None)
    manager.start()
    try:
        assert await manager.wait_connecting(60) == []
        pid = int((await manager.call("s", "pid", {}, None, None)).content[0].text)
        env = server_environ(pid)
        assert "ANTHROPIC_API_KEY" not in env
        assert env["OPENAI_API_KEY"] == "sk-openai-passed-on-purpose"
        assert env["PI31_SERVER_TOKEN"] == "the-server-reads-this"
    finally:
        await manager.close()


def test_expand_value_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI31_V", "v")
    monkeypatch.setenv("PI31_EMPTY", "")
    monkeypatch.delenv("PI31_NONE", raising=False)
    assert expand_value("a${PI31_V}b$PI31_V.c") == "avbv.c"
    assert expand_value("${PI31_EMPTY:-d}|${PI31_NONE:-}|${PI31_NONE:-x y}") == "d||x y"
    with pytest.raises(UnsetVariable, match="PI31_NONE"):
        expand_value("${PI31_NONE}")
    with pytest.raises(UnsetVariable, match="PI31_NONE"):
        expand_value("$PI31_NONE")
    assert expand_value("$1 and $ and 100$") == "$1 and $ and 100$"
