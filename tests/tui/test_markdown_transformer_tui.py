"""``pi.register_markdown_transformer`` in the TUI (pilot): display only, chained in load order."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pi_coder.tui.widgets.markdown_view import set_markdown_transform
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app_with_extensions

FIRST = """
def extension(pi):
    def arrows(markdown, ctx):
        return markdown.replace("-->", "ARROW")

    pi.register_markdown_transformer(arrows)
"""

SECOND = """
def extension(pi):
    def upper(markdown, ctx):
        return markdown.replace("ARROW", "[" + ctx.message_type + "]")

    pi.register_markdown_transformer(upper, message_types=["assistant"])
"""


async def test_markdown_transformers_change_only_the_display(make_session, project: Path) -> None:
    session, _ = make_session(["from A --> B"])
    (project / "first.py").write_text(textwrap.dedent(FIRST))
    (project / "second.py").write_text(textwrap.dedent(SECOND))
    app = make_app_with_extensions(session, project, ["first.py", "second.py"])
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await type_text(pilot, "go")
            await pilot.press("enter")
            await wait_until(pilot, lambda: "from A [assistant] B" in screen_text(app), what="transformed answer")
        answer = session.agent.state.messages[-1]
        assert answer.content[0].text == "from A --> B"  # the message itself is unchanged
    finally:
        set_markdown_transform(None)
