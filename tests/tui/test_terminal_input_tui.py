"""``ctx.ui.on_terminal_input`` in the TUI (pilot): a handler sees keys first and may swallow them."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.tui.helpers import wait_until
from tests.tui.screens_support import make_app_with_extensions

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
    app = make_app_with_extensions(session, project, ["ext.py"])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(app.terminal_input_handlers), what="handler registered")
        await pilot.press("a", "x", "b")
        await wait_until(pilot, lambda: app.editor.text == "ab", what="x swallowed")
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: not app.terminal_input_handlers, what="unsubscribed")
        await pilot.press("x")
        await wait_until(pilot, lambda: app.editor.text == "abx", what="x typed once unsubscribed")
    assert (project / "keys.txt").read_text() == "a x b ctrl+y"
