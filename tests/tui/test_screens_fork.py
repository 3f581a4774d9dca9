"""/fork: pick one of this branch's user messages; a new session file holds the history before it."""

from __future__ import annotations

import json
from pathlib import Path

from pi_coder.session.store import SessionStore
from pi_coder.tui.screens.fork_picker import ForkPicker
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import branchy_session, make_app


def _lines(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


async def _open_fork(app, pilot) -> ForkPicker:
    app.editor.insert("/fork")
    await pilot.pause()
    await pilot.press("enter")
    if app.editor.text:
        await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, ForkPicker), what="fork picker")
    await pilot.pause()
    return app.screen


async def test_fork_writes_a_new_session_and_puts_the_message_in_the_editor(project: Path, make_session) -> None:
    original = branchy_session(str(project))
    before = original.read_text()
    session, _ = make_session([], store=SessionStore.open(original), model=None)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        picker = await _open_fork(app, pilot)
        # Only this branch's user messages, the latest highlighted.
        assert [entry.value for entry in picker.shown] == ["e0000002", "e0000008"]
        assert picker.highlighted_entry().value == "e0000008"
        assert "try plan A" not in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.session_file != str(original), what="forked")
        await wait_until(pilot, lambda: app.editor.text == "try plan B", what="editor")
        await wait_until(pilot, lambda: "Branched to new session" in screen_text(app), what="status")
        assert [m.role for m in session.messages if m.role != "system"] == ["user", "assistant"]
        header, *entries = _lines(session.session_file)
        assert header["parentSession"] == str(original)
        ids = [entry["id"] for entry in entries]
        assert "e0000003" in ids and "e0000008" not in ids and "e0000004" not in ids
    assert original.read_text() == before


async def test_fork_search_and_cancel(project: Path, make_session) -> None:
    original = branchy_session(str(project))
    session, _ = make_session([], store=SessionStore.open(original), model=None)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        picker = await _open_fork(app, pilot)
        await pilot.press(*"hello")
        await pilot.pause()
        assert [entry.value for entry in picker.shown] == ["e0000002"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ForkPicker), what="closed")
        assert session.session_file == str(original)
        assert app.editor.text == ""


async def test_fork_without_messages_says_so(make_session) -> None:
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        app.editor.insert("/fork")
        await pilot.pause()
        await pilot.press("enter")
        if app.editor.text:
            await pilot.press("enter")
        await wait_until(pilot, lambda: "No messages to fork from" in screen_text(app), what="notice")
        assert not isinstance(app.screen, ForkPicker)
