"""The "ask" dialog in the TUI, driven with Textual's pilot: the model's write waits for the user."""

from __future__ import annotations

from pathlib import Path

from pi_coder.ai import faux_message, faux_tool_call
from pi_coder.permissions import gate
from pi_coder.permissions.policy import Policy
from pi_coder.permissions.rules import RuleSet
from pi_coder.tui.extension_ui import SelectScreen
from tests.tui.helpers import type_text, wait_until
from tests.tui.screens_support import make_app_with_extensions


async def test_ask_dialog_allow_once_and_deny(make_session, project: Path) -> None:
    session, _ = make_session(
        [
            faux_message(faux_tool_call("write", {"path": "yes.txt", "content": "1"})),
            faux_message(faux_tool_call("write", {"path": "no.txt", "content": "2"})),
            faux_message("Done."),
        ],
        tool_names=["write"],
    )
    gate.configure(Policy("ask", RuleSet(), str(project)))
    app = make_app_with_extensions(session, project, ["builtin:permissions"])
    try:
        async with app.run_test(size=(110, 32)) as pilot:
            await type_text(pilot, "write two files")
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, SelectScreen), what="the ask dialog")
            assert app.screen._options[0] == "Allow once"
            await pilot.press("enter")  # Allow once
            await wait_until(pilot, lambda: (project / "yes.txt").exists(), what="the allowed write")
            await wait_until(
                pilot, lambda: isinstance(app.screen, SelectScreen), what="the second ask dialog"
            )
            await pilot.press("down", "down", "down", "enter")  # Deny
            await wait_until(
                pilot, lambda: not isinstance(app.screen, SelectScreen), what="the reason prompt"
            )
            await pilot.press("escape")  # no reason
            await wait_until(pilot, lambda: not session.is_streaming, what="the run's end")
    finally:
        gate.configure(None)
    assert (project / "yes.txt").read_text() == "1"
    assert not (project / "no.txt").exists()
    results = [m for m in session.messages if getattr(m, "role", None) == "toolResult"]
    assert results[-1].is_error and "The user denied this tool call." in results[-1].content[0].text


async def test_footer_shows_the_mode_unless_auto(make_session, project: Path) -> None:
    """The mode is a footer item (its third line), not a transcript line; `auto` shows nothing."""
    from pi_coder.tui.widgets.status_bar import StatusBar
    from tests.tui.screen_text import screen_text

    session, _ = make_session([])
    gate.configure(Policy("plan", RuleSet(), str(project)))
    app = make_app_with_extensions(session, project, ["builtin:permissions"])
    try:
        async with app.run_test(size=(110, 32)) as pilot:
            bar = app.query_one(StatusBar)
            await wait_until(pilot, lambda: bar.info.statuses == ["mode: plan"], what="the mode in the footer")
            await pilot.pause()
            footer = screen_text(app).splitlines()[-3:]
            assert footer[-1].strip() == "mode: plan", footer
            assert footer[0].strip() == "~/project" and "(faux) faux-1" in footer[1], footer
            assert bar.size.height == 3
            transcript = "\n".join(screen_text(app).splitlines()[:-3])
            assert "mode: plan" not in transcript

            await type_text(pilot, "/permissions ask")
            await pilot.press("enter")
            await wait_until(pilot, lambda: bar.info.statuses == ["mode: ask"], what="the new mode")
            await type_text(pilot, "/permissions auto")
            await pilot.press("enter")
            await wait_until(pilot, lambda: bar.info.statuses == [], what="auto: no footer item")
            await wait_until(pilot, lambda: bar.size.height == 2, what="the footer back to two lines")
    finally:
        gate.configure(None)


def test_footer_mode_snapshot(snap_compare, make_session, project: Path) -> None:
    """How the footer looks with the mode item (pytest-textual-snapshot)."""
    session, _ = make_session([])
    gate.configure(Policy("accept-edits", RuleSet(), str(project)))
    app = make_app_with_extensions(session, project, ["builtin:permissions"])

    async def run_before(pilot) -> None:
        from pi_coder.tui.widgets.status_bar import StatusBar

        bar = app.query_one(StatusBar)
        await wait_until(pilot, lambda: bar.size.height == 3, what="the footer's mode line")

    try:
        assert snap_compare(app, terminal_size=(100, 20), run_before=run_before)
    finally:
        gate.configure(None)
