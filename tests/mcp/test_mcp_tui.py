"""``/mcp`` in the TUI and a hanging server that never blocks it (extensions §6.4, §6.6)."""

from __future__ import annotations

import time
from pathlib import Path

from pi_coder.ai.providers.faux import faux_message
from pi_coder.mcp.config import load_servers
from pi_coder.mcp.manager import McpManager
from tests.mcp.conftest import HANG, PY, tiny, write_mcp
from tests.tui.conftest import make_session, project  # noqa: F401 (fixtures)
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


def _attach(session, config_file: Path) -> McpManager:
    from pi_coder.modes.mcp_host import StartupWait

    config = load_servers(session.cwd, project_trusted=False, global_path=config_file)
    manager = McpManager(config, session.cwd)
    manager.attach(session, lambda level, text: None)
    session.add_run_hook(StartupWait(manager))
    session.mcp = manager
    return manager


async def _send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_mcp_command_lists_and_disables(make_session, tmp_path: Path) -> None:  # noqa: F811
    session, _ = make_session([])
    write_mcp(tmp_path / "mcp.json", {"tiny": tiny()})
    manager = _attach(session, tmp_path / "mcp.json")
    app = make_app(session)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_until(pilot, lambda: "mcp__tiny__add" in session.tool_names, what="tools", timeout=30)
        await _send(pilot, "/mcp reconnect tiny")
        await wait_until(pilot, lambda: "tiny: connected, 8 tools" in screen_text(app), what="listing", timeout=30)
        await _send(pilot, "/mcp disable tiny")
        await wait_until(pilot, lambda: "tiny: disabled" in screen_text(app), what="disabled", timeout=15)
        assert not any(n.startswith("mcp__") for n in session.tool_names)
    await manager.close()


async def test_hanging_server_does_not_block_the_first_prompt(make_session, tmp_path: Path) -> None:  # noqa: F811
    session, faux = make_session([faux_message("answer")])
    write_mcp(tmp_path / "mcp.json", {"hang": {"command": PY, "args": [HANG], "timeout": 1}})
    manager = _attach(session, tmp_path / "mcp.json")
    app = make_app(session)
    async with app.run_test(size=(120, 40)) as pilot:
        started = time.monotonic()
        await _send(pilot, "hello")
        await wait_until(pilot, lambda: faux.state.call_count == 1, what="the request", timeout=30)
        assert time.monotonic() - started < 30  # the server never answers
        await wait_until(pilot, lambda: not session.is_streaming and len(session.messages) >= 3, what="reply")
        # its 1 s start-up timeout runs on its own clock: the reply may come first on a loaded machine
        await wait_until(pilot, lambda: manager.servers["hang"].state == "failed", what="the server given up")
        await pilot.pause(0.3)
    await manager.close()


async def test_mcp_prompt_completes_and_runs_as_a_slash_command(make_session, tmp_path: Path) -> None:  # noqa: F811
    from pi_coder.tui.widgets.completion_menu import CompletionMenu

    session, faux = make_session([faux_message("reviewed")])
    write_mcp(tmp_path / "mcp.json", {"tiny": tiny()})
    manager = _attach(session, tmp_path / "mcp.json")
    app = make_app(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: "mcp__tiny__add" in session.tool_names, what="tools", timeout=30)
        await type_text(pilot, "/mcp__tiny__rev")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.is_open, what="the menu")
        assert [item.label for item in menu.items] == ["/mcp__tiny__review"]
        app.editor.text = ""
        await _send(pilot, "/mcp__tiny__review src/app.py focus=naming")
        await wait_until(pilot, lambda: faux.state.call_count == 1, what="the request", timeout=15)
        sent = faux.state.contexts[0].messages[-1]
        assert sent.content[0].text == "Review src/app.py for naming."
    await manager.close()
