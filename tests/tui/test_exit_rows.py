"""The rows quitting prints are the blocks as drawn, padding included (tui/exit_output.py)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from pi_coder.tui.exit_output import transcript_rows

LINE = "x" * 36 + "END"


class _Padded(App[None]):
    CSS = "Static { padding: 0 2; width: 43; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="t"):
            yield Static(LINE)
            yield Static("second block")


async def test_a_padded_block_keeps_its_last_columns() -> None:
    """A block whose text fills its content width keeps the text's end: the block is drawn at its
    full width, padding and all (it was cut by the padding's width before)."""
    app = _Padded()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        rows = [row.plain for row in transcript_rows(app.query_one("#t", VerticalScroll))]
    assert rows[0].rstrip() == "  " + LINE  # (this app paints a background: its padding cells stay)
    assert rows[1].rstrip() == "  second block"
