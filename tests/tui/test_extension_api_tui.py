"""Issue 27's extension API in the TUI, with Textual's pilot: argument completions, Ctrl+O on
custom renderers, ``ctx.ui.custom()``, header/footer, theme and tools expansion."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from pi_coder.tui.extension_extras import CustomScreen
from pi_coder.tui.extension_ui import CustomMessageBlock
from pi_coder.tui.widgets.completion_menu import CompletionMenu
from pi_coder.tui.widgets.panels import ExtensionWidgets
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app_with_extensions

EXT = """
from pi_coder.extensions import Completion, CustomMessageSpec

def extension(pi):
    def names(prefix):
        return [Completion(value=n, description="a name") for n in ("Alice", "Bob", "Anna") if n.startswith(prefix)]

    @pi.command("greet", "Greet someone", get_argument_completions=names)
    def greet(args, ctx):
        ctx.ui.notify("hello " + args)

    def draw(message, *, expanded, theme):
        return theme.fg("accent", "NOTE ") + ("long body" if expanded else "short")

    pi.register_message_renderer("note", draw)

    @pi.command("note")
    def note(args, ctx):
        pi.send_message(CustomMessageSpec(custom_type="note", content="x"))

    @pi.command("ask")
    async def ask(args, ctx):
        from textual.widgets import Input

        class Answer(Input):
            def __init__(self, done):
                super().__init__(placeholder="your answer")
                self.done = done

            def on_input_submitted(self, event):
                self.done(event.value)

        def build(done, theme):
            return Answer(done)

        answer = await ctx.ui.custom(build, overlay=True, fallback=lambda: "no tui")
        ctx.ui.set_footer([f"answer: {answer}"])
        ctx.ui.set_header(["HEADER " + str(ctx.ui.theme.name)])
        ctx.ui.set_tools_expanded(True)
"""


async def test_argument_completions_show_a_menu(make_session, project: Path) -> None:
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["ext.py"], {"ext.py": EXT})
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/greet A")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.is_open, what="argument menu")
        assert [item.label for item in menu.items] == ["Alice", "Anna"]
        await pilot.press("tab")
        await wait_until(pilot, lambda: app.editor.text.startswith("/greet Alice"), what="completed argument")


async def test_ctrl_o_redraws_a_message_renderer(make_session, project: Path) -> None:
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["ext.py"], {"ext.py": EXT})
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/note")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.query(CustomMessageBlock)), what="custom block")
        await wait_until(pilot, lambda: "NOTE short" in screen_text(app), what="collapsed drawing")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "NOTE long body" in screen_text(app), what="expanded drawing")


async def test_custom_component_takes_keys_and_returns_a_value(make_session, project: Path) -> None:
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["ext.py"], {"ext.py": EXT})
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/ask")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CustomScreen), what="custom component")
        assert isinstance(app.focused, Input)
        await pilot.press("b", "l", "u", "e", "enter")
        below = app.query_one("#widgets-below", ExtensionWidgets)
        await wait_until(pilot, lambda: "answer: blue" in str(below.render()), what="footer line")
        above = app.query_one("#widgets-above", ExtensionWidgets)
        assert "HEADER dark" in str(above.render())
        assert app.tools_expanded
