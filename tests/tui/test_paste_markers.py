"""Large pastes collapse to ``[paste #N +L lines]`` in the editor and are sent in full."""

from __future__ import annotations

from textual import events

from pi_coder.ai.providers.faux import faux_message
from pi_coder.tui.widgets.paste_markers import PasteMarkers
from tests.tui.helpers import type_text, user_texts, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


async def test_large_paste_shows_a_marker_and_is_sent_expanded(make_session) -> None:
    session, faux = make_session([faux_message("got it")])
    app = make_app(session)
    big = "\n".join(f"line {i}\twith a tab" for i in range(1, 24))
    async with app.run_test(size=(80, 24)) as pilot:
        await type_text(pilot, "look: ")
        app.post_message(events.Paste(big))
        await wait_until(pilot, lambda: "[paste #1 +23 lines]" in app.editor.text, what="marker")
        app.post_message(events.Paste("small paste"))
        await wait_until(pilot, lambda: "small paste" in app.editor.text, what="small paste inline")
        assert app.editor.text == "look: [paste #1 +23 lines]small paste"
        assert "[paste #1 +23 lines]" in screen_text(app) and "line 5" not in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: faux.state.call_count == 1 and not session.is_streaming, what="answer")
        sent = user_texts(faux.state.contexts[0])[0]
        assert sent == "look: " + big.replace("\t", "    ") + "small paste"
        assert app.editor.text == ""
        app.post_message(events.Paste("x" * 1500))
        await wait_until(pilot, lambda: app.editor.text == "[paste #1 1500 chars]", what="numbering restarts")
        await pilot.press("backspace")
        assert app.editor.text == ""  # the marker goes as one piece


def test_markers_expand_only_known_numbers() -> None:
    pastes = PasteMarkers()
    marker = pastes.add("a\n" * 12)
    assert marker == "[paste #1 +13 lines]"
    assert pastes.expand(f"x {marker} [paste #7 +3 lines]") == "x " + "a\n" * 12 + " [paste #7 +3 lines]"
    assert not PasteMarkers.is_large("a\n" * 9) and PasteMarkers.is_large("a\n" * 10)
    assert PasteMarkers.is_large("a\r" * 10)  # tmux and most terminals paste line ends as CR
    assert pastes.add("a\rb\r" * 6) == "[paste #2 +13 lines]"
