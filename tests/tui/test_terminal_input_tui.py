"""``ctx.ui.on_terminal_input`` in the TUI (pilot): a handler sees keys first and may swallow them."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pi_coder.extensions.loader import discover, load_extensions
from pi_coder.extensions.runner import ExtensionRunner
from pi_coder.tui.app import PiApp
from tests.tui.helpers import wait_until

EXT = """
from pathlib import Path

def extension(pi):
    @pi.on("session_start")
    def start(event, ctx):
        seen = []

        def keys(key, character):
            seen.append(key)
            Path(ctx.cwd, "keys.txt").write_text(" ".join(seen))
            if key == "x":
                return True
            if key == "ctrl+y":
                unsubscribe()
                return {"consume": True}
            return None

        unsubscribe = ctx.ui.on_terminal_input(keys)
"""


async def test_terminal_input_sees_and_consumes_keys(make_session, project: Path) -> None:
    session, _ = make_session([])
    (project / "ext.py").write_text(textwrap.dedent(EXT))
    runner = ExtensionRunner(str(project), models=session.models)
    sources, problems = discover(cli_specs=["ext.py"], cwd=str(project), config_dir=project / "none")
    assert not problems
    load_extensions(runner, sources)
    runner.bind(session)
    app = PiApp(session, version="0.0.0", cwd_display="~/project", branch="", animate=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(app.terminal_input_handlers), what="handler registered")
        await pilot.press("a", "x", "b")
        await wait_until(pilot, lambda: app.editor.text == "ab", what="x swallowed")
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: not app.terminal_input_handlers, what="unsubscribed")
        await pilot.press("x")
        await wait_until(pilot, lambda: app.editor.text == "abx", what="x typed once unsubscribed")
    assert (project / "keys.txt").read_text() == "a x b ctrl+y"
