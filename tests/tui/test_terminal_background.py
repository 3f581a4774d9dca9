"""The terminal's answer to ``OSC 11 ; ?`` (its background): taken out of the input, however the
reads split it, and a ``light/dark`` theme pair follows it (tui/driver.py, tui/theming.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.resources.themes import set_terminal_appearance
from pi_coder.tui.driver import TerminalBackground, take_background_replies
from tests.tui.screens_support import make_app


@pytest.fixture(autouse=True)
def _no_report():
    set_terminal_appearance(None)
    yield
    set_terminal_appearance(None)


def test_answers_are_taken_out_of_the_input_whole_or_split() -> None:
    assert take_background_replies("ab\x1b]11;rgb:ffff/ffff/ffff\x07cd") == ("abcd", [(255, 255, 255)], "")
    assert take_background_replies("\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\x") == ("x", [(30, 30, 30)], "")
    assert take_background_replies("\x1b]11;rgb:80/80/80\x07") == ("", [(128, 128, 128)], "")
    data, colours, pending = take_background_replies("typed\x1b]11;rgb:ffff/ff")
    assert (data, colours) == ("typed", []) and pending == "\x1b]11;rgb:ffff/ff"
    assert take_background_replies(pending + "ff/ffff\x07more") == ("more", [(255, 255, 255)], "")
    assert take_background_replies("plain \x1b[A keys") == ("plain \x1b[A keys", [], "")
    assert TerminalBackground((250, 250, 250)).light and not TerminalBackground((16, 16, 16)).light


async def test_a_light_dark_pair_switches_when_the_terminal_reports_its_background(
    project: Path, make_session, monkeypatch
) -> None:
    monkeypatch.delenv("COLORFGBG", raising=False)
    (project.parent / "home" / "settings.toml").write_text('theme = "light/dark"\n')
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "pi-dark"  # nothing reported yet: dark
        app.post_message(TerminalBackground((255, 255, 255)))
        await pilot.pause()
        assert app.theme == "pi-light" and app.themes.name == "light/dark"
        app.post_message(TerminalBackground((0, 0, 0)))
        await pilot.pause()
        assert app.theme == "pi-dark"


async def test_a_fixed_theme_ignores_the_report(project: Path, make_session) -> None:
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        app.post_message(TerminalBackground((255, 255, 255)))
        await pilot.pause()
        assert app.theme == "pi-dark"
