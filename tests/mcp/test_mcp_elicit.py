"""Elicitation (docs/mcp.md#elicitation) against ``elicit_server.py`` (the SDK's MCPServer): declined in
``pi -p``, one extension-UI dialog per field in RPC mode, one form in the TUI (pilot)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_coder.ai.providers.faux import faux_message, faux_tool_call
from pi_coder.mcp.elicit import fields
from pi_coder.tui.mcp_elicit import ElicitationScreen
from tests.mcp.conftest import HERE, PY, write_mcp
from tests.mcp.test_mcp_e2e import script_call, tool_result_text
from tests.mcp.test_mcp_tui import _attach, _send
from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer
from tests.tui.conftest import make_session, project  # noqa: F401 (fixtures)
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app_with_extensions

BOOKING = {"command": PY, "args": [str(HERE / "elicit_server.py")], "timeout": 60}
BOOKED = 'booked {"breakfast": true, "guest": "Ann Lee", "nights": 3, "room": "suite"}'


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server, "anthropic")
    (home.home / "settings.toml").write_text("[mcp]\nstartup_wait = 90\n", encoding="utf-8")
    write_mcp(home.home / "mcp.json", {"booking": BOOKING})
    return home


def test_print_mode_declines(pi: PiHome, sse_server: SSEServer) -> None:
    script_call(sse_server, "mcp__booking__book", {})
    done = pi.run("-p", "book a room", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "declined" in tool_result_text(sse_server)


def test_rpc_mode_asks_one_dialog_per_field(pi: PiHome, sse_server: SSEServer) -> None:
    script_call(sse_server, "mcp__booking__book", {})
    rpc = RpcClient(pi)
    try:
        assert rpc.call({"type": "prompt", "message": "book a room"})["success"]
        # Answer the dialogs as a client would: the first choice, then each field (a wrong number once).
        replies = {
            'MCP server "booking" asks: Details for the booking': "Answer",
            "Guest name - as on the passport": "Ann Lee",
            "Breakfast": "yes",
            "Room": "suite",
        }
        seen: list[str] = []
        while True:
            request = rpc.wait_for(lambda line: line.get("type") == "extension_ui_request" and line.get("method") in ("select", "input"), timeout=120)
            title = request["title"]
            seen.append(title)
            if title.startswith("Nights"):
                value = "3" if "at most 14" in title else "40"
            else:
                value = replies[title]
            if request["method"] == "select":
                assert value in request["options"]
            rpc.send({"type": "extension_ui_response", "id": request["id"], "value": value})
            if title == "Room":
                break
        assert seen == [
            'MCP server "booking" asks: Details for the booking',
            "Guest name - as on the passport",
            "Nights",
            "Nights\nNights: at most 14",
            "Breakfast",
            "Room",
        ]
        rpc.wait_for(lambda line: line.get("type") == "agent_end", timeout=120)
        assert json.dumps(BOOKED)[1:-1] in tool_result_text(sse_server)  # as the request's JSON quotes it
    finally:
        assert rpc.close() == 0


async def test_tui_form(make_session, project: Path, tmp_path: Path) -> None:  # noqa: F811
    session, faux = make_session([faux_message(faux_tool_call("mcp__booking__book", {})), faux_message("done")])
    app = make_app_with_extensions(session, project, ["none.py"], {"none.py": "def extension(pi):\n    pass\n"})
    write_mcp(tmp_path / "mcp.json", {"booking": BOOKING})
    manager = _attach(session, tmp_path / "mcp.json")
    from pi_coder.modes.mcp_ui import elicitation_handler

    manager.elicit = elicitation_handler(session)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_until(pilot, lambda: "mcp__booking__book" in session.tool_names, what="tools", timeout=60)
        await _send(pilot, "book a room")
        await wait_until(pilot, lambda: isinstance(app.screen, ElicitationScreen), what="the form", timeout=60)
        text = screen_text(app)
        assert 'MCP server "booking" asks: Details for the booking' in text
        assert "Guest name - as on the passport" in text and "Nights" in text
        await pilot.pause(0.2)
        await pilot.press(*("space" if c == " " else c for c in "Ann Lee"))
        await pilot.press("enter")  # next field
        await pilot.press("9", "9")
        await pilot.press("ctrl+s")  # refused: out of range, the form stays
        await wait_until(pilot, lambda: "Nights: at most 14" in screen_text(app), what="the range error")
        assert isinstance(app.screen, ElicitationScreen)
        from textual.widgets import Checkbox, Input, Select

        nights = app.screen.query_one("#field-1", Input)
        nights.value = "3"
        app.screen.query_one("#field-2", Checkbox).value = True
        app.screen.query_one("#field-3", Select).value = "suite"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not session.is_streaming and faux.state.call_count == 2, what="the reply", timeout=60)
        results = [m for m in session.messages if getattr(m, "role", "") == "toolResult"]
        assert BOOKED in results[-1].content[0].text
    await manager.close()


def test_schema_fields_and_parsing() -> None:
    schema = {
        "properties": {
            "n": {"type": "integer", "minimum": 1, "title": "N"},
            "mail": {"type": "string", "format": "email"},
            "pick": {"type": "string", "oneOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]},
            "many": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
            "flag": {"type": "boolean", "default": False},
        },
        "required": ["n", "mail"],
    }
    n, mail, pick, many, flag = fields(schema)
    assert n.parse("4") == 4 and (n.required, mail.required, pick.required) == (True, True, False)
    with pytest.raises(ValueError, match="N: at least 1"):
        n.parse("0")
    with pytest.raises(ValueError, match="N is required"):
        n.parse(" ")
    with pytest.raises(ValueError, match="give an email address"):
        mail.parse("nobody")
    assert pick.parse("Beta") == "b" and pick.parse("") is None
    assert many.parse("x, y") == ["x", "y"]
    assert flag.parse("") is False and flag.parse("yes") is True
