"""``pi.register_markdown_transformer`` in the TUI (pilot): display only, chained in load order."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pi_coder.extensions.loader import discover, load_extensions
from pi_coder.extensions.runner import ExtensionRunner
from pi_coder.tui.app import PiApp
from pi_coder.tui.widgets.markdown_view import set_markdown_transform
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text

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
    runner = ExtensionRunner(str(project), models=session.models)
    sources, problems = discover(cli_specs=["first.py", "second.py"], cwd=str(project), config_dir=project / "none")
    assert not problems
    load_extensions(runner, sources)
    runner.bind(session)
    app = PiApp(session, version="0.0.0", cwd_display="~/project", branch="", animate=False)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await type_text(pilot, "go")
            await pilot.press("enter")
            await wait_until(pilot, lambda: "from A [assistant] B" in screen_text(app), what="transformed answer")
        answer = session.agent.state.messages[-1]
        assert answer.content[0].text == "from A --> B"  # the message itself is unchanged
    finally:
        set_markdown_transform(None)
