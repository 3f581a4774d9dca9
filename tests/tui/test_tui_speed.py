"""What keeps dialogs, /hotkeys and Ctrl+O quick on a long transcript (Textual pilot).

These check the causes of the slowness that ``bench/tui_dialogs.py`` measured (no timings here):
a dialog's style sheet read on its first push restyled the whole app; every layout measured each
transcript block again; Ctrl+O drew again blocks that have nothing folded; /hotkeys built
Textual's Markdown widget tree.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget

from pi_coder.session.store import SessionStore
from pi_coder.tui.screens.model_picker import ModelPicker
from pi_coder.tui.screens.session_picker import SessionPicker
from pi_coder.tui.screens.settings_screen import SettingsScreen
from pi_coder.tui.screens.tree_view import TreeScreen
from pi_coder.tui.widgets.tool_call import ToolCallBlock
from tests.tui.helpers import wait_for_dialog, wait_until
from tests.tui.screens_support import FIXED_NOW, SessionWriter, make_app
from tests.tui.test_model_commands import run_command


def _long_session(cwd: str, turns: int = 30, long_output_every: int = 10) -> Path:
    """``turns`` user/assistant/read rounds; every ``long_output_every``-th read returns 40 lines."""
    w = SessionWriter(cwd, "22222222-3333-4444-5555-666666666666", FIXED_NOW - timedelta(hours=1))
    w.model_change("m0000001")
    for n in range(turns):
        w.user(f"u{n:07d}", f"Please look at file_{n}.py")
        call = f"call_{n}"
        w.assistant(
            f"a{n:07d}",
            "",
            content=[{"type": "toolCall", "id": call, "name": "read", "arguments": {"path": f"file_{n}.py"}}],
            stop_reason="toolUse",
        )
        lines = 40 if n % long_output_every == 0 else 3
        w.tool_result(f"t{n:07d}", call, "read", "\n".join(f"value_{i} = {i}" for i in range(lines)))
    return w.write()


async def _all_mounted(pilot: Any, app: Any) -> None:
    """Wait for the resumed history, then mount the blocks its window left unmounted: the tests
    here are about a long transcript of mounted blocks."""
    await wait_until(pilot, lambda: len(app.query(ToolCallBlock)) > 0, what="the transcript")
    await app.transcript.load_all()
    await wait_until(pilot, lambda: len(app.query(ToolCallBlock)) == 30, what="the whole transcript")


async def test_opening_each_dialog_reads_no_style_sheet(project: Path, make_session) -> None:
    session, _ = make_session([], store=SessionStore.open(_long_session(str(project))), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _all_mounted(pilot, app)
        # A widget's DEFAULT_CSS is added without restyling the app; a sheet of the app's own is not.
        def sheets() -> set[tuple[str, str]]:
            return {key for key, source in app.stylesheet.source.items() if not source.is_defaults}

        sources = sheets()
        for command, kind in (
            ("/settings", SettingsScreen),
            ("/tree", TreeScreen),
            ("/resume", SessionPicker),
            ("/model", ModelPicker),
        ):
            await run_command(app, pilot, command)
            await wait_for_dialog(pilot, kind, command)
            await pilot.press("escape")
            await wait_until(pilot, lambda kind=kind: not isinstance(app.screen, kind), what=f"{command} closed")
        assert sheets() == sources


async def test_a_layout_does_not_measure_the_transcript_blocks_again(
    project: Path, make_session, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, _ = make_session([], store=SessionStore.open(_long_session(str(project))), no_session=False)
    app = make_app(session)
    measured: list[Widget] = []
    original = Widget.get_content_height

    def counting(self: Widget, container: Any, viewport: Any, width: int) -> int:
        if isinstance(self, ToolCallBlock):
            measured.append(self)
        return original(self, container, viewport, width)

    monkeypatch.setattr(Widget, "get_content_height", counting)
    async with app.run_test(size=(100, 30)) as pilot:
        await _all_mounted(pilot, app)
        await pilot.pause(0.2)
        height = app.transcript.size.height
        measured.clear()
        app.editor.insert("/")  # the completion menu opens: the transcript gets shorter
        await wait_until(pilot, lambda: app.transcript.size.height < height, what="a shorter transcript")
        await pilot.press("escape", "ctrl+u")
        await wait_until(pilot, lambda: app.transcript.size.height == height, what="the transcript back")
        await pilot.pause(0.1)
        assert measured == []


async def test_ctrl_o_draws_again_only_the_blocks_with_folded_output(project: Path, make_session) -> None:
    session, _ = make_session([], store=SessionStore.open(_long_session(str(project))), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _all_mounted(pilot, app)
        blocks = list(app.query(ToolCallBlock))
        before = [block.content for block in blocks]
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: app.tools_expanded, what="expanded")
        await pilot.pause()
        changed = [index for index, block in enumerate(blocks) if block.content is not before[index]]
        assert changed == [0, 10, 20]  # the 40-line reads; the 3-line ones have nothing folded
        from rich.syntax import Syntax

        shown = [part.code for part in blocks[0].content.renderables if isinstance(part, Syntax)]  # type: ignore[union-attr]
        assert "value_39" in "".join(shown)  # the whole output now


async def test_hotkeys_is_one_markdown_widget(project: Path, make_session) -> None:
    from textual.widgets import Markdown

    from pi_coder.tui.widgets.markdown_view import StreamingMarkdown

    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_command(app, pilot, "/hotkeys")
        await wait_until(
            pilot, lambda: any(w.has_class("info-block") for w in app.query(StreamingMarkdown)), what="the key table"
        )
        assert not app.query(Markdown)
        block = next(w for w in app.query(StreamingMarkdown) if w.has_class("info-block"))
        assert "app.tools.expand" in block.source and "/hotkeys" in block.source


@pytest.mark.parametrize("painted", [False, True])
async def test_a_dialog_draws_the_screen_below_as_textual_does(project: Path, make_session, painted: bool) -> None:
    """A dialog's backdrop is made from the lines the screen below already has (screens/modal.py):
    the same cells and styles as Textual's translucent-screen rendering, dimmed on a painted page."""
    from textual._context import visible_screen_stack
    from textual.screen import Screen
    from textual.visual import Visual, visualize

    if painted:
        (project.parent / "home" / "settings.toml").write_text("paint_background = true\n")
    session, _ = make_session([], store=SessionStore.open(_long_session(str(project), turns=3)), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: len(app.query(ToolCallBlock)) == 3, what="the transcript")
        await run_command(app, pilot, "/settings")
        screen = await wait_for_dialog(pilot, SettingsScreen, "/settings")
        below = app.screen_stack[-2]
        tint = screen.styles.background
        assert (tint.a > 0) == painted and tint.a < 1
        ours = screen._make_backdrop(below, tint)
        visible_screen_stack.set([below])
        theirs = Visual.to_strips(
            screen, visualize(screen, Screen.render(screen)), *screen.outer_size, screen.visual_style
        )
        assert len(ours) == len(theirs) == 30
        for mine, textual in zip(ours, theirs, strict=True):
            assert [(s.text, s.style) for s in mine] == [(s.text, s.style) for s in textual]
        assert "file_2.py" in "".join(s.text for line in ours for s in line)


async def test_opening_a_dialog_lays_out_the_screen_below_only_on_a_real_resize(
    project: Path, make_session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual lays a pushed screen out a second time, and every screen below with it, on the
    resize event of its own first layout; a dialog skips that, yet follows a terminal resize."""
    from textual.screen import Screen

    resized: list[tuple[str, int]] = []
    original = Screen._screen_resized

    def counting(self: Screen[Any], size: Any) -> None:
        resized.append((type(self).__name__, size.width))
        original(self, size)

    monkeypatch.setattr(Screen, "_screen_resized", counting)
    session, _ = make_session([], store=SessionStore.open(_long_session(str(project), turns=3)), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: len(app.query(ToolCallBlock)) == 3, what="the transcript")
        resized.clear()
        await run_command(app, pilot, "/settings")
        screen = await wait_for_dialog(pilot, SettingsScreen, "/settings")
        await pilot.pause(0.1)
        assert resized == []
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: screen.outer_size.width == 80, what="the dialog at the new size")
        await wait_until(pilot, lambda: app.screen_stack[0].outer_size.width == 80, what="the screen below too")
        assert ("SettingsScreen", 80) in resized


async def test_the_hotkeys_table_is_laid_out_at_its_true_height_at_once(
    project: Path, make_session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An estimated height would be corrected when the table is painted: one more layout of the
    whole transcript."""
    from pi_coder.tui.widgets.markdown_view import StreamingMarkdown

    heights: list[int] = []
    original = StreamingMarkdown._size_updated

    def recording(self: StreamingMarkdown, size: Any, *args: Any, **kwargs: Any) -> bool:
        if self.has_class("info-block") and size.height:
            heights.append(size.height)
        return original(self, size, *args, **kwargs)

    monkeypatch.setattr(StreamingMarkdown, "_size_updated", recording)
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_command(app, pilot, "/hotkeys")
        await wait_until(pilot, lambda: bool(heights), what="the key table laid out")
        await pilot.pause(0.2)
        block = next(w for w in app.query(StreamingMarkdown) if w.has_class("info-block"))
        assert block.size.height > 40
        assert set(heights) == {block.size.height}
