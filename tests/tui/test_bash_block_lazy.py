"""A long ``!`` output is drawn row by row, exactly as the whole render draws it (Textual pilot)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Region

from pi_coder.session.messages import BashExecutionMessage
from pi_coder.tui.widgets.bash_block import LAZY_LINES, BashBlock

# short lines, a line wider than the block (wraps at words), a long word, tabs, wide characters,
# an empty line, a control character
LINES = [
    *(f"line {n}" for n in range(LAZY_LINES)),
    "word " * 40,
    "x" * 130,
    "a\tb\tc",
    "漢字かな交じり文 " * 8,
    "",
    "bell\x07here",
    *(f"tail {n}" for n in range(30)),
]


class _Host(App[None]):
    def __init__(self, block: BashBlock) -> None:
        super().__init__()
        self.block = block

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.block


def _finished(expanded: bool) -> BashBlock:
    block = BashBlock("seq", expanded=expanded)
    block.finish(BashExecutionMessage(command="seq", output="\n".join(LINES) + "\n", exit_code=0))
    return block


async def _rows(block: BashBlock) -> tuple[int, list[str]]:
    """The block's height and every row it draws (borders and padding included)."""
    width, height = block.outer_size
    rows = ["".join(segment.text for segment in strip) for strip in block.render_lines(Region(0, 0, width, height))]
    return height, rows


async def test_a_long_expanded_output_draws_the_rows_of_the_whole_render() -> None:
    block = _finished(expanded=True)
    app = _Host(block)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        assert block._lazy is not None
        lazy = await _rows(block)
        block._lazy = None  # the same content drawn by the Static, whole
        block.refresh(layout=True)
        await pilot.pause()
        whole = await _rows(block)
    assert lazy[0] == whole[0] > len(LINES)  # the wide lines wrap
    assert lazy[1] == whole[1]
    assert any("tail 29" in row for row in lazy[1])


async def test_a_collapsed_output_and_a_short_one_are_drawn_whole() -> None:
    block = _finished(expanded=False)
    app = _Host(block)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        assert block._lazy is None
        block.set_expanded(True)
        await pilot.pause()
        assert block._lazy is not None
        block.set_expanded(False)
        await pilot.pause()
        assert block._lazy is None
        _height, rows = await _rows(block)
        assert any("earlier lines, Ctrl+O to expand" in row for row in rows)
