"""Extension dialogs and commands in the TUI (extensions §4.2; §9 scenario 32), with Textual's pilot."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pi_coder.tui.extension_ui import ConfirmScreen, SelectScreen
from pi_coder.tui.widgets.panels import ExtensionWidgets
from pi_coder.tui.widgets.status_bar import StatusBar
from tests.tui.helpers import type_text, wait_for_dialog, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app_with_extensions

EXT = """
def extension(pi):
    @pi.command("hello", description="Pick a greeting")
    async def hello(args, ctx):
        choice = await ctx.ui.select("Greeting", ["hi there", "good morning"])
        if choice:
            ctx.ui.set_editor_text(choice)

    @pi.command("deco")
    def deco(args, ctx):
        if args == "off":
            ctx.ui.set_widget("todo", None)
            ctx.ui.set_widget("foot", None)
            ctx.ui.set_status("mode", None)
            ctx.ui.set_working_message(None)
            return
        ctx.ui.set_widget("todo", ["[ ] one", "[x] two"])
        ctx.ui.set_widget("foot", ["below the editor"], placement="below_editor")
        ctx.ui.set_status("mode", "PLAN MODE")
        ctx.ui.set_title("pi - planning")
        ctx.ui.set_working_message("Thinking deeply...")

    @pi.command("sure")
    async def sure(args, ctx):
        ok = await ctx.ui.confirm("Sure?", "really")
        ctx.ui.set_status("k", f"on {ok}")
"""


async def test_hello_select_puts_text_in_editor(make_session, project: Path) -> None:
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["ext.py"], {"ext.py": EXT})
    async with app.run_test(size=(100, 30)) as pilot:
        assert "hello" in {c.name for c in app.commands}
        await type_text(pilot, "/hello")
        await pilot.press("enter")
        await wait_for_dialog(pilot, SelectScreen, what="select dialog")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: app.editor.text == "good morning", what="editor text")


async def test_confirm_escape_is_false_and_status_shows(make_session, project: Path) -> None:
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["ext.py"], {"ext.py": EXT})
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/sure")
        await pilot.press("enter")
        await wait_for_dialog(pilot, ConfirmScreen, what="confirm dialog")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.screen_stack[0], what="dialog closed")
        ui = session.extensions.ui
        await wait_until(pilot, lambda: ui.statuses.get("k") == "on False", what="status")
        await pilot.pause()
        await wait_until(pilot, lambda: "on False" in screen_text(app).splitlines()[-1], what="'on False' in screen_text(app).splitlines()[-1]")  # the footer's last line


async def test_widgets_status_title_and_working_message(make_session, project: Path) -> None:
    from pi_coder.agent.events import AgentStart

    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["ext.py"], {"ext.py": EXT})
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/deco")
        await pilot.press("enter")
        above = app.query_one("#widgets-above", ExtensionWidgets)
        below = app.query_one("#widgets-below", ExtensionWidgets)
        await wait_until(pilot, lambda: above.display and below.display, what="widgets shown")
        await pilot.pause()
        text = screen_text(app)
        assert "[ ] one" in text and "[x] two" in text and "below the editor" in text
        lines = text.splitlines()
        editor_top = app.editor.region.y
        assert above.region.y + above.region.height <= editor_top < below.region.y  # above / below the editor
        assert any("[ ] one" in line for line in lines[:editor_top])
        assert app.query_one(StatusBar).info.statuses == ["PLAN MODE"]
        assert "PLAN MODE" in lines[-1]  # the footer's third line
        assert app.title == "pi - planning"
        # While a run is active the spinner shows the working message instead of "Working...".
        await app._dispatch(AgentStart(), app.controller)
        assert app.status_line.label == "Thinking deeply..."
        await type_text(pilot, "/deco off")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not above.display and not below.display, what="widgets gone")
        assert app.status_line.label == "Working..."
        assert app.query_one(StatusBar).info.statuses == []
        await pilot.pause()
        assert "PLAN MODE" not in screen_text(app)


RENDERER = """
from rich.text import Text
from pi_coder.extensions import CustomMessageSpec

def extension(pi):
    def draw(message, *, expanded, theme):
        return Text(f"** {message.content.upper()} **")

    def broken(message, *, expanded, theme):
        raise ValueError("cannot draw")

    pi.register_message_renderer("shout", draw)
    pi.register_message_renderer("oops", broken)
    pi.register_entry_renderer("mark", lambda entry, *, expanded, theme: f"mark set: {entry.data['n']}")

    @pi.command("shout")
    def shout(args, ctx):
        pi.send_message(CustomMessageSpec(custom_type="shout", content=args))
        pi.send_message(CustomMessageSpec(custom_type="oops", content="plain " + args))
        pi.append_entry("mark", {"n": 7})
        pi.append_entry("hidden", {"n": 8})
"""


async def test_message_renderer_live_and_resumed(make_session, project: Path) -> None:
    from pi_coder.session.store import SessionStore
    from pi_coder.tui.extension_ui import CustomMessageBlock

    store = SessionStore.create(str(project), str(project / "sessions"))
    session, _ = make_session([], store=store, no_session=False)
    app = make_app_with_extensions(session, project, ["draw.py"], {"draw.py": RENDERER})
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/shout hey")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "** HEY **" in screen_text(app), what="rendered custom message")
        await wait_until(pilot, lambda: "[oops] plain hey" in screen_text(app), what="default after a failure")
        await wait_until(pilot, lambda: "mark set: 7" in screen_text(app), what="entry renderer")
        assert "hidden" not in screen_text(app)  # custom entries without a renderer stay invisible
        assert len(app.query(CustomMessageBlock)) == 2  # the "shout" message and the "mark" entry
    path = session.session_file
    assert path is not None
    # Resumed: the stored custom_message entries are drawn by the renderer again.
    resumed, _ = make_session([], store=SessionStore.open(path), no_session=False)
    app = make_app_with_extensions(resumed, project, ["draw.py"], {"draw.py": RENDERER})
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "** HEY **" in screen_text(app), what="resumed rendering")
        text = screen_text(app)
        assert "[oops] plain hey" in text
        # ... and so is the custom entry, by its entry renderer, where it was appended.
        assert "mark set: 7" in text
        assert text.index("** HEY **") < text.index("[oops] plain hey") < text.index("mark set: 7")
        assert "hidden" not in text
        assert len(app.query(CustomMessageBlock)) == 2


TOOL_RENDERER = """
import asyncio
from pathlib import Path

from pydantic import BaseModel
from rich.text import Text
from pi_coder.extensions import AgentToolResult, TextContent, ToolDefinition

class Label(BaseModel):
    label: str

def extension(pi):
    async def run(tool_call_id, params, signal, on_update, ctx):
        if params.label == "hello":
            on_update(AgentToolResult(content=[TextContent(text="half")], details={"n": 0}))
            while not Path(ctx.cwd, "go").exists():  # the test lets it finish
                await asyncio.sleep(0.02)
        return AgentToolResult(content=[TextContent(text="raw output")], details={"n": len(params.label)})

    def call(args, *, expanded, theme):
        return Text(f"STAMP <{args.get('label', '')}>")

    def result(result, *, expanded, partial, theme):
        if partial:
            return "stamping..."
        return f"stamped {result.details['n']} chars" + (" in full" if expanded else "")

    def bad_call(args, *, expanded, theme):
        raise ValueError("no header today")

    pi.register_tool(ToolDefinition(name="stamp", label="Stamp", description="Stamp a label",
                                    parameters=Label, execute=run, render_call=call, render_result=result))
    pi.register_tool(ToolDefinition(name="plain", label="Plain", description="Plain", parameters=Label,
                                    execute=run, render_call=bad_call,
                                    render_result=lambda result, *, expanded, partial, theme: None))
"""


async def test_tool_render_call_and_result_live_and_resumed(make_session, project: Path) -> None:
    """An extension tool's ``render_call`` draws the block's header, ``render_result`` its body
    (``partial`` while it runs, ``expanded`` with Ctrl+O); a raising or None renderer keeps the
    default slot, the failure reported once; a resumed session draws the stored calls the same way."""
    from pi_coder.ai.providers.faux import faux_message, faux_tool_call
    from pi_coder.session.store import SessionStore
    from pi_coder.tui.widgets.tool_call import ToolCallBlock

    store = SessionStore.create(str(project), str(project / "sessions"))
    script = [
        faux_message(faux_tool_call("stamp", {"label": "hello"}), faux_tool_call("plain", {"label": "xy"})),
        faux_message("stamped"),
    ]
    session, _ = make_session(script, store=store, no_session=False)
    app = make_app_with_extensions(session, project, ["stamp.py"], {"stamp.py": TOOL_RENDERER})
    async with app.run_test(size=(100, 40)) as pilot:
        await type_text(pilot, "stamp it")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "stamping..." in screen_text(app), what="partial result drawn")
        assert "STAMP <hello>" in screen_text(app)
        assert "half" not in screen_text(app)  # the renderer's body replaces the default one
        (project / "go").write_text("")
        await wait_until(pilot, lambda: "stamped 5 chars" in screen_text(app), what="final result drawn")
        await wait_until(pilot, lambda: not session.is_streaming, what="run over")
        text = screen_text(app)
        # The failing render_call and the None render_result fall back to the defaults.
        assert 'plain {"label": "xy"}' in text and "raw output" in text
        assert text.count("Extension stamp failed in renderer:plain: no header today") == 1
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "stamped 5 chars in full" in screen_text(app), what="expanded")
        assert [b.view.status for b in app.query(ToolCallBlock)] == ["success", "success"]
    path = session.session_file
    assert path is not None
    resumed, _ = make_session([], store=SessionStore.open(path), no_session=False)
    app = make_app_with_extensions(resumed, project, ["stamp.py"], {"stamp.py": TOOL_RENDERER})
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_until(pilot, lambda: "STAMP <hello>" in screen_text(app), what="resumed header")
        text = screen_text(app)
        assert "stamped 5 chars" in text and "raw output" in text
        assert 'plain {"label": "xy"}' in text


DOCS = Path(__file__).resolve().parents[2] / "docs" / "extensions.md"


def _docs_example(heading: str) -> str:
    """The first python block after ``heading`` in docs/extensions.md."""
    section = DOCS.read_text(encoding="utf-8").split(heading, 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


async def test_docs_tool_rendering_example_draws_in_the_tui(make_session, project: Path) -> None:
    """The docs' ``render_call``/``render_result`` example, drawn by the TUI (the docs test runs
    it in print mode, where renderers are not called)."""
    import re

    from pi_coder.ai.providers.faux import faux_message, faux_tool_call

    (project / "dice.py").write_text(_docs_example("### Custom tool rendering"))
    script = [faux_message(faux_tool_call("roll_dice", {"sides": 6, "count": 3})), faux_message("done")]
    session, _ = make_session(script)
    app = make_app_with_extensions(session, project, ["dice.py"])
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "roll")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "total" in screen_text(app) and not session.is_streaming, what="dice drawn")
        text = screen_text(app)
        assert "dice 3d6" in text
        assert re.search(r"\[[1-6]\] \[[1-6]\] \[[1-6]\]  total \d+", text), text
        assert "Rolled [" not in text  # the body is the renderer's, not the result text
        assert "failed in" not in text


DISCOVER_THEMES = """
from pathlib import Path

def extension(pi):
    @pi.on("resources_discover")
    def themes(event, ctx):
        listed = Path(event.cwd, "theme-dirs.txt").read_text().split()
        return {"theme_paths": listed}
"""


async def test_resources_discover_theme_paths_join_the_theme_list(make_session, project: Path) -> None:
    """Themes from ``resources_discover`` are read at start (the ``theme`` setting may name one,
    without a warning) and again on ``/reload`` (extensions §2.3, §1.6)."""
    import json

    from pi_coder.resources.themes import builtin_themes_dir

    def theme(folder: Path, name: str) -> None:
        data = json.loads((builtin_themes_dir() / "dark.json").read_text())
        data["name"] = name
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.json").write_text(json.dumps(data))

    theme(project / "ext-themes", "ocean")
    theme(project / "later-themes", "forest")
    (project / "theme-dirs.txt").write_text("ext-themes\n")  # relative: against the project folder
    (project.parent / "home" / "settings.toml").write_text('theme = "ocean"\n')
    (project / "themes_ext.py").write_text(textwrap.dedent(DISCOVER_THEMES))
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["themes_ext.py"])
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.themes.theme is not None and app.themes.theme.name == "ocean"
        assert app.theme == "pi-ocean"
        names = {t.name for t in app.themes.available()}
        assert "ocean" in names and "forest" not in names
        assert "ocean" not in screen_text(app)  # no "unknown theme" warning from before discovery
        (project / "theme-dirs.txt").write_text("ext-themes\nlater-themes\n")
        await type_text(pilot, "/reload")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Reloaded extensions" in screen_text(app), what="reload")
        assert {"ocean", "forest"} <= {t.name for t in app.themes.available()}
        assert app.themes.theme.name == "ocean"


async def test_reload_with_extensions_shows_the_reload_warnings(make_session, project: Path) -> None:
    """Regression: with extensions loaded, ``/reload`` read its warnings from the session, which
    has none of its own (the extension runner's reload keeps them), so none was ever shown."""
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["quiet.py"], {"quiet.py": "def extension(pi):\n    pass\n"})
    session.reload_hooks.append(lambda: ["MCP server docs: cannot start"])
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/reload")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Reloaded extensions" in screen_text(app), what="reload")
        assert "MCP server docs: cannot start" in screen_text(app)
