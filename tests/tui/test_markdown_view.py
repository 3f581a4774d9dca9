"""StreamingMarkdown: chunked streaming renders exactly what rendering the whole answer would."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from pi_coder.tui.widgets.markdown_view import (
    StreamingMarkdown,
    estimate_height,
    pi_markdown,
    split_sealable,
)
from tests.tui.helpers import wait_until

ANSWER = "".join(
    f"## Step {i}\n\nSome **bold** text and `code` in paragraph {i}. " * 3
    + "\n\n"
    + ("```python\nfor x in range(3):\n\n    print(x)  # blank line above stays in the fence\n```\n\n" if i % 3 == 0 else "")
    + ("- item one\n- item two\n\n" if i % 4 == 0 else "")
    for i in range(60)
)


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield StreamingMarkdown()


def test_split_sealable_respects_fences() -> None:
    text = "a" * 2100 + "\n\n```\ncode\n\nmore\n```\n\nafter"
    cut = split_sealable(text)
    assert text[:cut].endswith("\n\n") and "```" not in text[:cut]
    fenced = "```\n" + "x\n\n" * 1200 + "```\n\nafter\n"
    assert fenced[: split_sealable(fenced)].endswith("```\n\n")  # not inside the fence
    assert split_sealable("short\n\ntext") == 0
    assert estimate_height("one\n\n" + "x" * 25, 10) == 5


async def test_streamed_chunks_render_like_the_whole_answer() -> None:
    app = _Host()
    async with app.run_test(size=(90, 30)) as pilot:
        view = app.query_one(StreamingMarkdown)
        for start in range(0, len(ANSWER), 7):
            view.add_text(ANSWER[start : start + 7])
            if start % 700 == 0:
                view.render_pending()
                await pilot.pause()
        view.render_pending()
        view.finish_rendering()
        await wait_until(pilot, lambda: view.fully_rendered, what="idle rendering")
        await pilot.pause()
        assert view.chunk_count > 5  # the answer was sealed into several chunks
        width = view.content_region.width
        streamed = [view.render_line(y).text.rstrip() for y in range(view.virtual_size.height)]
        console = app.console
        options = console.options.update(width=width, height=None, highlight=False)
        whole = [
            "".join(segment.text for segment in line).rstrip()
            for line in console.render_lines(pi_markdown(ANSWER.strip()), options)
        ]
        while streamed and not streamed[-1]:
            streamed.pop()
        assert streamed == whole
        assert view.source == ANSWER


def _section(i: int) -> str:
    return (
        f"## Part {i}\n\nSee the [docs](https://example.com/{i}) for part {i}.\n\n"
        "1. add(a, b)\n2. sub(a, b)\n\n"
        "- loose item one\n\n- loose item two\n\n  continued inside the item\n\n"
        "> a quoted remark\n> on two lines\n\n"
        "| name | value |\n|---|---|\n| x | 1 |\n\n"
        "```python\nprint('hi')\n\nprint('bye')\n```\n\n"
        "---\n\n"
        "    indented code\n\n"
        "Closing words " + "and more " * 20 + "\n\n"
    )


PI_DOC = "".join(_section(i) for i in range(110))


def _rendered(app: App, view: StreamingMarkdown) -> list[str]:
    lines = [view.render_line(y).text.rstrip() for y in range(view.virtual_size.height)]
    while lines and not lines[-1]:
        lines.pop()
    return lines


async def test_spacing_is_the_same_streamed_in_50000_deltas_or_whole() -> None:
    """Chunk boundaries of the streaming renderer add no blank rows (lists, rules, indented blocks)."""
    assert len(PI_DOC) >= 50_000
    app = _Host()
    async with app.run_test(size=(90, 30)) as pilot:
        view = app.query_one(StreamingMarkdown)
        for index, char in enumerate(PI_DOC[:50_000]):
            view.add_text(char)
            if index % 500 == 0:
                view.render_pending()
                await pilot.pause()
        view.add_text(PI_DOC[50_000:])
        view.render_pending()
        view.finish_rendering()
        await wait_until(pilot, lambda: view.fully_rendered, timeout=30, what="idle rendering")
        await pilot.pause()
        assert view.chunk_count > 10
        streamed = _rendered(app, view)
        options = app.console.options.update(width=view.content_region.width, height=None, highlight=False)
        whole = [
            "".join(segment.text for segment in line).rstrip()
            for line in app.console.render_lines(pi_markdown(PI_DOC.strip()), options)
        ]
        assert streamed == whole
        assert "\n\n\n" not in "\n".join(whole)  # never two blank rows in a row


def test_pi_markdown_elements() -> None:
    """Links keep their address, ordered lists their period; quotes have a bar; fences are shown."""
    from rich.console import Console

    console = Console(width=60, color_system=None)
    with console.capture() as capture:
        console.print(
            pi_markdown(
                "A [link](https://example.com) and <https://auto.example>.\n\n1. add(a, b)\n2. sub(a, b)\n\n"
                "> quoted\n\n```python\nx = 1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
            )
        )
    lines = [line.rstrip() for line in capture.get().splitlines()]
    assert lines[0] == "A link (https://example.com) and https://auto.example."
    assert "1. add(a, b)" in lines and "2. sub(a, b)" in lines
    assert "│ quoted" in lines
    assert lines[lines.index("```python") + 1 : lines.index("```python") + 3] == ["  x = 1", "```"]
    assert "│ a │ b │" in lines
    assert "\n\n\n" not in "\n".join(lines)


def _styled_lines(text: str, width: int = 120, **kwargs) -> tuple[list[str], list]:
    """(plain rows, Rich segments) of ``text`` as the TUI draws it with the dark theme's styles."""
    from rich.console import Console
    from rich.theme import Theme as RichTheme

    from pi_coder.resources.themes import load_theme
    from pi_coder.tui.theming import markdown_styles

    console = Console(width=width, color_system="truecolor", theme=RichTheme(markdown_styles(load_theme("dark"))))
    segments = list(console.render(pi_markdown(text, **kwargs), console.options))
    rows = "".join(s.text for s in segments).split("\n")
    return [row.rstrip() for row in rows], segments


def test_markdown_closer_to_pi() -> None:
    """h3 keeps its ``###``; a two-line quote keeps its break; the rule is ─, at most 80 wide; a bare
    URL is a styled link; a [text](url) address has the address style (pi-product: Markdown as Pi)."""
    rows, segments = _styled_lines(
        "## Two\n\n### Three\n\n#### Four\n\n> first line\n> second line\n\n---\n\n"
        "See https://example.org/page, and [docs](https://example.com/d).\n"
    )
    assert "Two" in rows and "### Three" in rows and "#### Four" in rows and "## Two" not in rows
    assert "│ first line" in rows and "│ second line" in rows
    rule = next(row for row in rows if row.startswith("─"))
    assert rule == "─" * 80
    assert "See https://example.org/page, and docs (https://example.com/d)." in rows
    bare = next(s for s in segments if s.text == "https://example.org/page")
    assert bare.style.underline and bare.style.link == "https://example.org/page"
    address = next(s for s in segments if s.text == "https://example.com/d")
    assert not address.style.underline and address.style.link == "https://example.com/d"
    heading = next(s for s in segments if "Three" in s.text)
    assert heading.style.bold and heading.style.color is not None  # the theme's mdHeading
    code_rows, code_segments = _styled_lines("Use `code` here.")
    code = next(s for s in code_segments if s.text == "code")
    assert code.style.bgcolor is None  # inline code paints no background


def test_table_row_separators_are_optional_and_keep_the_alignment() -> None:
    table = "| name | n |\n|---|--:|\n| alpha | 1 |\n| beta | 22 |\n"
    plain, _ = _styled_lines(table)
    lined, _ = _styled_lines(table, table_row_lines=True)
    assert sum(row.startswith("├") for row in plain) == 1  # under the header only
    assert sum(row.startswith("├") for row in lined) == 2  # and between the rows
    assert "│ alpha │  1 │" in plain and "│ alpha │  1 │" in lined  # right-aligned as written
