"""The start-up key hints wrap between items: at 80 columns no key is split from its label."""

from __future__ import annotations

from pathlib import Path

from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


async def test_hint_lines_break_only_between_items(make_session, project: Path) -> None:
    session, _ = make_session()
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "pi v0.0.0" in screen_text(app), what="header")
        lines = screen_text(app).splitlines()
        hints = [(keys, what) for keys, what in app._header_hints()]
        for keys, what in hints:
            assert any(f"{keys} {what}" in line for line in lines), f"{keys} {what!r} split across lines"
        start = next(i for i, line in enumerate(lines) if "pi v0.0.0" in line)
        hint_lines = [line for line in lines[start + 1 : start + 6] if "·" in line]
        assert len(hint_lines) <= 4
        for line in hint_lines:
            assert not line.rstrip().endswith("·") and not line.lstrip().startswith("·")


async def test_quiet_startup_hides_the_header_and_hints(make_session, project: Path) -> None:
    session, _ = make_session()
    session.settings.quiet_startup = True
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "pi v0.0.0" not in text
        assert not any(f"{keys} {what}" in text for keys, what in app._header_hints())
        assert "faux-1" in text  # the footer is still there
