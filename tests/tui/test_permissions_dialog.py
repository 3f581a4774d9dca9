"""The "ask" dialog in the TUI, driven with Textual's pilot: the model's write waits for the user."""

from __future__ import annotations

from pathlib import Path

from pi_coder.ai import faux_message, faux_tool_call
from pi_coder.permissions import gate
from pi_coder.permissions.policy import Policy
from pi_coder.permissions.rules import RuleSet
from pi_coder.tui.extension_ui import SelectScreen, TextScreen
from tests.tui.helpers import type_text, wait_for_dialog, wait_until
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
            await wait_for_dialog(pilot, SelectScreen, what="the ask dialog")
            assert app.screen._options[0] == "Allow once"
            await pilot.press("enter")  # Allow once
            await wait_until(pilot, lambda: (project / "yes.txt").exists(), what="the allowed write")
            await wait_for_dialog(pilot, SelectScreen, what="the second ask dialog")
            await pilot.press("down", "down", "down", "enter")  # Deny
            await wait_for_dialog(pilot, TextScreen, what="the reason prompt")
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


async def test_keys_sent_before_the_dialog_was_drawn_choose_nothing(make_session, project: Path) -> None:
    """Down, Enter typed just as the question pops up (a burst) must not approve `rm -rf build`."""
    from textual import events

    (project / "build").mkdir()
    (project / "build" / "keep.txt").write_text("x")
    session, _ = make_session(
        [faux_message(faux_tool_call("bash", {"command": "rm -rf build"})), faux_message("Done.")],
        tool_names=["bash"],
    )
    gate.configure(Policy("ask", RuleSet(), str(project)))
    app = make_app_with_extensions(session, project, ["builtin:permissions"])
    try:
        async with app.run_test(size=(110, 32)) as pilot:
            await type_text(pilot, "clean up")
            # The burst: keys already on their way when the dialog opens.
            burst = [events.Key("down", None), events.Key("enter", None)]
            await pilot.press("enter")
            await wait_for_dialog(pilot, SelectScreen, what="the ask dialog")
            dialog = app.screen
            for key in burst:
                key.set_sender(app)
                app.post_message(key)
            await pilot.pause()
            await pilot.pause()
            assert app.screen is dialog, "a key sent before the dialog was drawn answered it"
            assert dialog.option_list.highlighted == 0
            assert (project / "build" / "keep.txt").exists()
            await pilot.press("down", "down", "down", "enter")  # keys pressed now count: Deny
            await wait_for_dialog(pilot, TextScreen, what="the reason prompt")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not session.is_streaming, what="the run's end")
    finally:
        gate.configure(None)
    assert (project / "build" / "keep.txt").exists()
    results = [m for m in session.messages if getattr(m, "role", None) == "toolResult"]
    assert "The user denied this tool call." in results[-1].content[0].text


async def test_a_multi_line_command_shows_whole_in_the_dialog(make_session, project: Path) -> None:
    from tests.tui.screen_text import screen_text

    command = "set -e\n" + "\n".join(f"echo step-{i}" for i in range(1, 6)) + "\nrm -rf build"
    session, _ = make_session(
        [faux_message(faux_tool_call("bash", {"command": command})), faux_message("Done.")], tool_names=["bash"]
    )
    gate.configure(Policy("ask", RuleSet(), str(project)))
    app = make_app_with_extensions(session, project, ["builtin:permissions"])
    try:
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "run it")
            await pilot.press("enter")
            await wait_for_dialog(pilot, SelectScreen, what="the ask dialog")
            dialog = await wait_for_dialog(pilot, SelectScreen, what="the ask dialog")

            def panel_text() -> str:  # the dialog's panel only (the transcript shows the call too)
                region = dialog.query_one("#picker").region
                rows = screen_text(app).splitlines()[region.y : region.y + region.height]
                return "\n".join(row[region.x : region.x + region.width] for row in rows)

            await wait_until(pilot, lambda: "rm -rf build" in panel_text(), what="the whole command")
            text = panel_text()
            assert all(f"echo step-{i}" in text for i in range(1, 6)), text
            await pilot.press("escape")
            await wait_until(pilot, lambda: not session.is_streaming, what="the run's end")
    finally:
        gate.configure(None)


async def test_a_long_command_scrolls_inside_the_dialog(make_session, project: Path) -> None:
    """40 lines do not fit: the title area scrolls, the options stay on screen."""
    from textual.containers import VerticalScroll

    command = "\n".join(f"touch line-{i:02d}" for i in range(40))
    session, _ = make_session(
        [faux_message(faux_tool_call("bash", {"command": command})), faux_message("Done.")], tool_names=["bash"]
    )
    gate.configure(Policy("ask", RuleSet(), str(project)))
    app = make_app_with_extensions(session, project, ["builtin:permissions"])
    try:
        async with app.run_test(size=(110, 40)) as pilot:
            await type_text(pilot, "run it")
            await pilot.press("enter")
            dialog = await wait_for_dialog(pilot, SelectScreen, what="the ask dialog")
            header = dialog.query_one("#select-title", VerticalScroll)
            await wait_until(pilot, lambda: header.max_scroll_y > 0, what="a scrollable title")
            assert dialog.option_list.region.bottom <= 40
            header.scroll_end(animate=False)
            await wait_until(pilot, lambda: header.scroll_y == header.max_scroll_y, what="the end of the title")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not session.is_streaming, what="the run's end")
    finally:
        gate.configure(None)
