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
    fenced = "```\n" + "x\n\n" * 1200 + "```\n\nafter"
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
