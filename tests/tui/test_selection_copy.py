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


async def test_dragging_over_part_of_an_answer_copies_only_that_part(make_session, monkeypatch) -> None:
    from pi_coder.tui.widgets.markdown_view import StreamingMarkdown

    session, _ = make_session([faux_message("Alpha bravo charlie delta echo\n\nSecond para foxtrot golf hotel")])
    app = make_app(session)
    copied: list[str] = []
    monkeypatch.setattr(type(app), "copy_to_clipboard", lambda self, text: copied.append(text))
    async with app.run_test(size=(80, 24)) as pilot:
        await type_text(pilot, "question about india juliet")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not session.is_streaming and session.last_assistant_text(), what="answer")
        await pilot.pause(0.2)
        lines = screen_text(app).splitlines()

        def at(word: str, end: bool = False) -> tuple[int, int]:
            row = next(i for i, line in enumerate(lines) if word in line)
            # the end cell is inclusive: end on the word's last character
            return lines[row].index(word) + (len(word) - 1 if end else 0), row

        for first, last, expected in [
            ("bravo", "delta", "bravo charlie delta"),
            ("charlie", "foxtrot", "charlie delta echo\n\nSecond para foxtrot"),
            ("about", "india", "about india"),
        ]:
            count = len(copied)
            await pilot.mouse_down(offset=at(first))
            await pilot.hover(offset=at(last, end=True))
            if first == "bravo":  # the selected span is highlighted while dragging
                markdown = app.query_one(StreamingMarkdown)
                selected = app.screen.get_component_rich_style("screen--selection").bgcolor
                row = markdown.render_line(0)
                assert "".join(seg.text for seg in row if seg.style and seg.style.bgcolor == selected).strip() == (
                    "bravo charlie delta"
                )
            await pilot.mouse_up(offset=at(last, end=True))
            await wait_until(pilot, lambda n=count: len(copied) > n, what=f"copy {first}..{last}")
            assert copied[-1] == expected
            await pilot.click(offset=(0, 23))  # clear the selection
            await pilot.pause()


async def test_copy_on_select_off_copies_nothing_on_release_and_ctrl_x_copies_the_selection(
    project, make_session, monkeypatch
) -> None:
    (project.parent / "home" / "settings.toml").write_text("fullscreen_copy_on_select = false\n")
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
        col = lines[row].index("bravo")
        await pilot.mouse_down(offset=(col, row))
        await pilot.hover(offset=(col + 12, row))
        await pilot.mouse_up(offset=(col + 12, row))
        await pilot.pause(0.3)
        assert copied == []  # not on release
        await pilot.press("ctrl+x")
        await wait_until(pilot, lambda: bool(copied), what="Ctrl+X copies the selection")
        assert copied[-1] == "bravo charlie"
