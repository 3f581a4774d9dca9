"""What quitting leaves in the terminal: the conversation as it was drawn, then the resume hint.

The TUI runs on the terminal's alternate screen, which is gone once it quits. As Pi does, the
transcript is then printed to the normal screen (and so into the scrollback): every block of
the transcript, top to bottom, drawn at the width it had, with its styles. The setting
``fullscreen_exit_output = "resume-hint"`` prints only the hint.

:func:`transcript_rows` renders while the app still runs (``PiApp.quit_app``); ``run_tui`` prints
the rows after the screen is restored (through Rich, which honours ``NO_COLOR``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich.segment import Segment
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["transcript_rows", "write_exit_output"]


def _drawn(widget: Widget) -> bool:
    return bool(widget.display) and widget.visible and widget.size.height > 0


def _leaves(widget: Widget, indent: int = 0) -> Iterator[Strip]:
    """The rows of ``widget``: its own lines when it draws itself, else its children's, each
    shifted right by its margin and its parent's padding and border."""
    children = [child for child in widget.children if isinstance(child, Widget) and _drawn(child)]
    if not children:
        width, height = widget.outer_size  # its padding and border are drawn too (size is the content area)
        pad = [Segment(" " * indent)] if indent else []
        for strip in widget.render_lines(Region(0, 0, width, height)):
            yield Strip([*pad, *strip], strip.cell_length + indent) if pad else strip
        return
    inner = indent + widget.styles.gutter.left
    for child in children:
        yield from _blank_rows(child.styles.margin.top, widget.size.width)
        yield from _leaves(child, inner + child.styles.margin.left)
        yield from _blank_rows(child.styles.margin.bottom, widget.size.width)


def _blank_rows(count: int, width: int) -> Iterator[Strip]:
    for _ in range(count):
        yield Strip([Segment(" " * width)], width)


def _trimmed(strip: Strip) -> list[Segment]:
    """``strip`` without its trailing blank cells that carry no background colour."""
    segments = list(strip)
    while segments:
        text, style, control = segments[-1]
        if control or text.strip() or (style is not None and style.bgcolor is not None and not style.bgcolor.is_default):
            break
        segments.pop()
    if segments:
        text, style, control = segments[-1]
        if not control and (style is None or style.bgcolor is None or style.bgcolor.is_default):
            segments[-1] = Segment(text.rstrip(), style, control)
    return segments


def transcript_rows(transcript: Widget) -> list[Text]:
    """The transcript's blocks as styled rows, blank rows at either end left out."""
    rows: list[Text] = []
    for strip in _leaves(transcript):
        row = Text(no_wrap=True, end="")
        for text, style, _control in _trimmed(strip):
            row.append(text, style)
        rows.append(row)
    while rows and not rows[0].plain.strip():
        del rows[0]
    while rows and not rows[-1].plain.strip():
        rows.pop()
    return rows


def write_exit_output(rows: Sequence[Text], hint: str) -> None:
    """Print the transcript rows (if any), then the resume hint (if any), to stdout."""
    if rows:
        from rich.console import Console

        console = Console(soft_wrap=True, highlight=False, emoji=False, markup=False)
        for row in rows:
            console.print(row, crop=False, overflow="ignore")
        if hint:
            print()
    if hint:
        print(hint)
