"""``ctx.ui.set_working_indicator`` / ``set_working_visible`` in the TUI, with Textual's pilot."""

from __future__ import annotations

from pathlib import Path

from pi_coder.tui.app import PiApp
from tests.tui.helpers import type_text, wait_until
from tests.tui.screens_support import make_app_with_extensions

EXT = """
def extension(pi):
    @pi.command("dot")
    def dot(args, ctx):
        if args == "default":
            ctx.ui.set_working_indicator()
        elif args == "none":
            ctx.ui.set_working_indicator([])
        elif args == "hide":
            ctx.ui.set_working_visible(False)
        else:
            ctx.ui.set_working_indicator([ctx.ui.theme.fg("accent", "●")], interval_ms=120)
"""


async def _run(pilot, command: str) -> None:
    await type_text(pilot, command)
    await pilot.press("enter")


def _line(app: PiApp) -> str:
    return str(app.status_line.render())


async def test_working_indicator_frames_and_visibility(make_session, project: Path) -> None:
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["ext.py"], {"ext.py": EXT})
    async with app.run_test(size=(100, 30)) as pilot:
        line = app.status_line
        line.animations = True  # the test app turns the spinner off; the indicator is the spinner
        await _run(pilot, "/dot")
        await wait_until(pilot, lambda: len(line.frames) == 1 and "●" in line.frames[0], what="frames")
        assert line.interval == 0.12
        line.start("Working...")
        await pilot.pause()
        assert _line(app).startswith("● Working...")
        await _run(pilot, "/dot none")
        await wait_until(pilot, lambda: list(line.frames) == [], what="no frames")
        assert _line(app).startswith("Working...")
        await _run(pilot, "/dot default")
        await wait_until(pilot, lambda: len(line.frames) == 10, what="default spinner")
        assert _line(app)[0] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
        await _run(pilot, "/dot hide")
        await wait_until(pilot, lambda: not line.display, what="hidden line")
        line.stop()
