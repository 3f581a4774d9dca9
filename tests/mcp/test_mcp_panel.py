"""The interactive ``/mcp`` of the TUI (docs/mcp.md#commands): server list, details, actions (Textual pilot)."""

from __future__ import annotations

import json
from pathlib import Path

from pi_coder.tui.mcp_panel import McpServerScreen, McpServersScreen
from tests.mcp.conftest import tiny, write_mcp
from tests.mcp.test_mcp_tui import _attach, _send
from tests.tui.conftest import make_session, project  # noqa: F401 (fixtures)
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


async def _choose(pilot, app, label: str) -> None:
    """Highlight the action ``label`` of the open server screen and press Enter."""
    from textual.widgets import OptionList

    actions = app.screen.query_one("#mcp-actions", OptionList)
    index = next(i for i in range(actions.option_count) if str(actions.get_option_at_index(i).prompt) == label)
    actions.highlighted = index
    await pilot.press("enter")


async def test_panel_lists_shows_details_and_acts(make_session, tmp_path: Path) -> None:  # noqa: F811
    session, _ = make_session([])
    config = tmp_path / "mcp.json"
    write_mcp(config, {"tiny": tiny(), "broken": {"command": "/nonexistent/server"}})
    manager = _attach(session, config)
    app = make_app(session)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_until(pilot, lambda: "mcp__tiny__add" in session.tool_names, what="tools", timeout=30)
        await wait_until(pilot, lambda: manager.servers["broken"].state == "failed", what="failure", timeout=30)
        await _send(pilot, "/mcp")
        await wait_until(pilot, lambda: isinstance(app.screen, McpServersScreen), what="the server list")
        await wait_until(pilot, lambda: "tiny: connected, 8 tools" in screen_text(app), what="listing")
        text = screen_text(app)
        assert text.index("broken: failed") < text.index("tiny: connected")  # needing attention first
        assert "command not found: /nonexistent/server" in text  # the highlighted server's error

        # The failed one's details, then back, then the connected one.
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Error: command not found" in screen_text(app), what="details")
        assert isinstance(app.screen, McpServerScreen)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, McpServersScreen), what="the list again")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: "State: connected, 8 tools" in screen_text(app), what="tiny's details")
        text = screen_text(app)
        assert "State: connected, 8 tools" in text and "add (direct, mcp__tiny__add)" in text
        assert "Sign in" not in text  # a stdio server

        # Exposure: deferred, saved to the file, the tools leave the declared list.
        await _choose(pilot, app, "Exposure: deferred")
        await wait_until(pilot, lambda: "add (deferred, mcp__tiny__add)" in screen_text(app), what="details after exposure")
        assert json.loads(config.read_text())["mcpServers"]["tiny"]["exposure"] == "deferred"
        assert "mcp__tiny__add" not in session.tool_names and "tool_search" in session.tool_names

        # Disable, then enable again.
        await _choose(pilot, app, "Disable")
        await wait_until(pilot, lambda: manager.servers["tiny"].state == "disabled", what="disabled", timeout=15)
        assert json.loads(config.read_text())["mcpServers"]["tiny"]["enabled"] is False
        await wait_until(pilot, lambda: isinstance(app.screen, McpServerScreen), what="details after disable")
        await _choose(pilot, app, "Enable")
        await wait_until(pilot, lambda: manager.servers["tiny"].state == "connected", what="enabled", timeout=30)
        await wait_until(pilot, lambda: isinstance(app.screen, McpServerScreen), what="details after enable")
        await _choose(pilot, app, "Back")
        await wait_until(pilot, lambda: isinstance(app.screen, McpServersScreen), what="the list at the end")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, McpServersScreen | McpServerScreen), what="closed")
    await manager.close()


async def test_list_follows_a_server_that_connects_while_open(make_session, tmp_path: Path) -> None:  # noqa: F811
    session, _ = make_session([])
    write_mcp(tmp_path / "mcp.json", {"slow": tiny("--init-delay", "1.5")})
    manager = _attach(session, tmp_path / "mcp.json")
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await _send(pilot, "/mcp")
        await wait_until(pilot, lambda: "slow: connecting" in screen_text(app), what="connecting", timeout=30)
        await wait_until(pilot, lambda: "slow: connected, 8 tools" in screen_text(app), what="connected in place", timeout=60)
        assert isinstance(app.screen, McpServersScreen)
        await pilot.press("escape")
    await manager.close()
