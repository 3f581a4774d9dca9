"""Prompt templates: listed in / completion with descriptions, expanded before sending or queueing,
and in ``pi -p "/name args"``."""

from __future__ import annotations

from pathlib import Path

from pi_coder.ai.providers.faux import faux_message, faux_tool_call
from pi_coder.tui.widgets.completion_menu import CompletionMenu
from tests.modes.pirun import PiHome, user_texts
from tests.support.sse_server import SSEServer, Text, Turn
from tests.tui import helpers
from tests.tui.helpers import BlockingTool, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app

REVIEW = """---
description: Review a file carefully
---
Review $1 focusing on ${@:2}.
"""
EXPLAIN = "Explain $@ in simple words\n\nUse short sentences.\n"


def _write_templates(project: Path) -> None:
    home = project.parent / "home"
    (home / "prompts").mkdir(parents=True, exist_ok=True)
    (home / "prompts" / "review.md").write_text(REVIEW)
    (project / ".pi" / "prompts").mkdir(parents=True, exist_ok=True)
    (project / ".pi" / "prompts" / "explain.md").write_text(EXPLAIN)


async def test_templates_show_in_slash_completion_with_descriptions(project: Path, make_session) -> None:
    _write_templates(project)
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("/", "r", "e", "v")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.is_open, what="menu")
        labels = [(item.label, item.description) for item in menu.items]
        assert ("/review", "Review a file carefully") in labels
        assert "Review a file carefully" in screen_text(app)
        app.editor.set_text("")
        await pilot.press("/", "e", "x", "p")
        await wait_until(pilot, lambda: any(item.label == "/explain" for item in menu.items), what="explain")
        explain = next(item for item in menu.items if item.label == "/explain")
        assert explain.description.startswith("Explain $@")


async def test_template_is_expanded_before_sending(project: Path, make_session) -> None:
    _write_templates(project)
    session, faux = make_session([faux_message("looks fine")])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await helpers.type_text(pilot, '/review src/app.py "error handling" and logging')
        app.query_one(CompletionMenu).close()
        await pilot.press("enter")
        await wait_until(pilot, lambda: faux.state.call_count == 1 and not session.is_streaming, what="run")
        await pilot.pause(0.1)
        assert helpers.user_texts(faux.state.contexts[0]) == [
            "Review src/app.py focusing on error handling and logging.\n"
        ]


async def test_template_is_expanded_before_queueing(project: Path, make_session) -> None:
    _write_templates(project)
    blocker = BlockingTool()
    session, faux = make_session(
        [faux_message(faux_tool_call("wait", {})), faux_message("done")], tools=[blocker.tool]
    )
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await helpers.type_text(pilot, "start")
        await pilot.press("enter")
        await wait_until(pilot, blocker.started.is_set, what="tool running")
        await helpers.type_text(pilot, "/explain closures")
        app.query_one(CompletionMenu).close()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(session.queued_messages()) == 1, what="queued")
        assert session.queued_messages() == [("steer", "Explain closures in simple words\n\nUse short sentences.\n")]
        blocker.release()
        await wait_until(pilot, lambda: not session.is_streaming, what="run end")
        await pilot.pause(0.1)  # let the last session events reach the app before it closes
        assert helpers.user_texts(faux.state.contexts[-1])[-1].startswith("Explain closures in simple words")


def test_print_mode_expands_templates(tmp_path: Path, sse_server: SSEServer) -> None:
    """``pi -p "/greet Ann 'Bob Smith'"`` sends the expanded template."""
    pi = PiHome(tmp_path, sse_server, "anthropic")
    (pi.home / "prompts").mkdir()
    (pi.home / "prompts" / "greet.md").write_text("Say hello to $1 and to $2.\n")
    pi.server.enqueue(Turn([Text("Hello both!")]))
    run = pi.run("-p", "/greet Ann 'Bob Smith'")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "Hello both!\n"
    assert user_texts(pi.server.requests[0].json) == ["Say hello to Ann and to Bob Smith.\n"]
