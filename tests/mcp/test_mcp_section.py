"""The ``mcp_servers`` section is updated by appending a system message when it changes (as Pi 1.6)."""

from __future__ import annotations

from pathlib import Path

from pi_coder.ai.context import get_current_system_prompt
from pi_coder.ai.providers.faux import faux_message
from pi_coder.ai.types import SystemMessage
from pi_coder.mcp.config import load_servers
from pi_coder.mcp.manager import McpManager
from pi_coder.modes.mcp_host import StartupWait
from tests.mcp.conftest import write_mcp
from tests.mcp.everything import everything_stdio
from tests.tui.conftest import make_session, project  # noqa: F401 (fixtures)


async def test_section_appended_when_a_server_connects_later(make_session, tmp_path: Path) -> None:  # noqa: F811
    session, faux = make_session([faux_message("one"), faux_message("two"), faux_message("three")])
    write_mcp(tmp_path / "mcp.json", {"every": everything_stdio(exposure="deferred")})
    config = load_servers(session.cwd, project_trusted=False, global_path=tmp_path / "mcp.json")
    manager = McpManager(config, session.cwd)
    manager.attach(session, lambda level, text: None)
    session.add_run_hook(StartupWait(manager))
    session.mcp = manager
    try:
        await session.prompt("first")  # deferred servers are not waited for: no summary yet
        first = get_current_system_prompt(faux.state.contexts[0].messages)
        assert "- mcp__every (tool_search)\n</mcp_servers>" in first, first
        assert await manager.wait_connecting(90) == []
        await session.prompt("second")
        messages = faux.state.contexts[1].messages
        second = get_current_system_prompt(messages)
        assert "- mcp__every (tool_search): # Everything Server – Server Instructions\n" in second
        systems = [m for m in messages if isinstance(m, SystemMessage)]
        appended = systems[-1]
        assert appended.content == "" and list(appended.sections or {}) == ["mcp_servers"]
        assert messages.index(appended) > [m.role for m in messages].index("assistant")  # after the first exchange
        assert messages[: len(faux.state.contexts[0].messages)][0] == faux.state.contexts[0].messages[0]
        count = len(systems)
        await session.prompt("third")  # unchanged: nothing appended
        assert len([m for m in faux.state.contexts[2].messages if isinstance(m, SystemMessage)]) == count
    finally:
        await manager.close()
