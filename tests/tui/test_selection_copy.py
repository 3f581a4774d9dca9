"""Dragging over the transcript copies the selected text (clean: no margins or borders) on release."""

from __future__ import annotations

from pi_coder.ai.providers.faux import faux_message
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


async def test_drag_selection_copies_clean_text_on_release(make_session, monkeypatch) -> None:
    session, _ = make_session([faux_message("Alpha bravo charlie delta echo")])
    app = make_app(session)
    copied: list[str] = []
    monkeypatch.setattr(type(app), "copy_to_clipboard", lambda self, text: copied.append(text))
    async with app.run_test(size=(80, 24)) as pilot:
        await type_text(pilot, "question")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not session.is_streaming and session.last_assistant_text(), what="answer")
        await pilot.pause(0.2)
        lines = screen_text(app).splitlines()
        row = next(i for i, line in enumerate(lines) if "Alpha bravo" in line)
        col = lines[row].index("Alpha")
        await pilot.mouse_down(offset=(col, row))
        await pilot.hover(offset=(col + 40, row + 1))
        await pilot.mouse_up(offset=(col + 40, row + 1))
        await wait_until(pilot, lambda: bool(copied), what="copy on release")
        assert copied[-1] == "Alpha bravo charlie delta echo"  # no margin, no widget name
