"""A stdio server's start cancelled while its process starts (see tests/support/start_race.py)."""

from __future__ import annotations

from pathlib import Path

from pi_coder.mcp.client import Tail, stdio_transport
from pi_coder.mcp.config import ServerConfig
from tests.support.start_race import BACKGROUND_SCRIPT, assert_cancel_while_starting_kills_all


def test_a_cancel_while_the_server_starts_kills_its_group(tmp_path: Path) -> None:
    """The connecting task is cancelled (``/reload``, exit) while the server's process starts:
    the server's whole group is killed and the start ends at once. (asyncio alone kills only the
    server's own process, and a child it had started kept running.)"""
    pids = tmp_path / "pids"
    config = ServerConfig(
        name="bg",
        transport="stdio",
        source="global",
        path=tmp_path / "mcp.json",
        command="bash",
        args=["-c", BACKGROUND_SCRIPT, "bash", str(pids)],
    )

    async def start() -> None:
        async with stdio_transport(config, str(tmp_path), Tail(), lambda _pid: None):
            raise AssertionError("the start was cancelled: the transport must not open")

    assert_cancel_while_starting_kills_all(start, pids, "the server's start")
