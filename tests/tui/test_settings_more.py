"""/settings: the whole list with type-to-search; each change is written to settings.toml and takes effect."""

from __future__ import annotations

import base64
import io
import tomllib
from pathlib import Path

from PIL import Image

from pi_coder.ai.providers.faux import faux_message
from pi_coder.ai.types import ImageContent
from pi_coder.core.convert import IMAGE_BLOCKED_TEXT
from pi_coder.tui.screens.settings_screen import SettingsScreen
from pi_coder.tui.widgets.completion_menu import CompletionMenu
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app

SETTINGS = "# mine\ntheme = \"dark\"  # keep\n"


def _path(project: Path) -> Path:
    return project.parent / "home" / "settings.toml"


async def _open(app, pilot) -> SettingsScreen:  # type: ignore[no-untyped-def]
    await type_text(pilot, "/settings")
    await pilot.press("enter")
    if app.editor.text:
        await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), what="settings")
    await pilot.pause()
    return app.screen


def _png(width: int, height: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (9, 9, 9)).save(buf, format="PNG")
    return buf.getvalue()


async def keys(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    """Type into the dialog key by key (a space is a space key)."""
    await pilot.press(*["space" if c == " " else c for c in text])


def _keys(screen: SettingsScreen) -> list[str]:
    return [item.key for item in screen.items]


async def test_the_list_has_pis_runtime_settings_and_typing_filters_it(project: Path, make_session) -> None:
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await _open(app, pilot)
        everything = _keys(screen)
        assert len(everything) >= 17
        for key in ("auto_compaction", "steering_mode", "follow_up_mode", "thinking_level", "theme",
                    "hide_thinking_block", "double_escape_action", "tree_filter_mode", "images.auto_resize",
                    "images.block_images", "retry.enabled", "enable_skill_commands", "quiet_startup",
                    "editor_padding_x", "autocomplete_max_visible", "branch_summary.skip_prompt"):  # fmt: skip
            assert key in everything
        await keys(pilot, "image")
        assert _keys(screen) == ["images.auto_resize", "images.block_images"]
        text = screen_text(app)
        assert "Search: image" in text and "(1/2)" in text and "Auto-compact" not in text
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace")
        assert _keys(screen) == everything
        await keys(pilot, "padding")
        assert _keys(screen) == ["editor_padding_x", "output_pad"]
        await pilot.press(*["backspace"] * 7)
        await keys(pilot, "mode")  # names first: not every description with "model" in it
        assert _keys(screen) == ["steering_mode", "follow_up_mode", "tree_filter_mode", "model_thinking_levels"]
        await pilot.press(*["backspace"] * 4)
        await keys(pilot, "reasoning")  # no name has it: the description of thinking level does
        assert _keys(screen) == ["thinking_level"]
        await pilot.press(*["backspace"] * 9)
        await keys(pilot, "zzz")
        assert _keys(screen) == [] and "No matching settings" in screen_text(app)
        await pilot.press("escape")  # clears the search, keeps the dialog
        assert screen.search == "" and _keys(screen) == everything and app.screen is screen
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), what="closed")


async def test_the_count_is_among_the_matches_and_ctrl_u_clears_the_search(project: Path, make_session) -> None:
    _path(project).write_text(SETTINGS)
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await _open(app, pilot)
        everything = _keys(screen)
        assert f"(1/{len(everything)})" in screen_text(app)
        await keys(pilot, "autocomplete")
        assert _keys(screen) == ["autocomplete_max_visible"]
        text = screen_text(app)
        assert "(1/1)" in text and f"/{len(everything)})" not in text  # one match: one of one
        await pilot.press("ctrl+u")
        await pilot.pause()
        assert screen.search == "" and _keys(screen) == everything and app.screen is screen
        assert "Search: type to filter" in screen_text(app)
        await pilot.press("down", "down")
        await pilot.pause()
        await wait_until(pilot, lambda: f"(3/{len(everything)})" in screen_text(app), what="f'(3/{len(everything)})' in screen_text(app)")


async def test_block_images_is_saved_and_stops_images_reaching_the_model(project: Path, make_session) -> None:
    _path(project).write_text(SETTINGS)
    session, faux = make_session([faux_message("seen"), faux_message("blocked")])
    app = make_app(session)
    picture = ImageContent(data=base64.b64encode(_png(4, 4)).decode(), mime_type="image/png")
    async with app.run_test(size=(100, 40)) as pilot:
        await session.prompt("look", [picture])
        assert any(isinstance(b, ImageContent) for b in faux.state.contexts[-1].messages[-1].content)
        screen = await _open(app, pilot)
        await keys(pilot, "block im")
        assert _keys(screen) == ["images.block_images"]
        await pilot.press("enter")
        await pilot.pause()
        await wait_until(pilot, lambda: "on" in screen_text(app).split("Block images", 1)[1].splitlines()[0], what="'on' in screen_text(app).split('Block images', 1)[1].spli...")
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), what="closed")
        await session.prompt("again", [picture])
    last = faux.state.contexts[-1].messages
    assert not any(isinstance(b, ImageContent) for m in last if m.role == "user" for b in m.content)
    assert IMAGE_BLOCKED_TEXT in "".join(getattr(b, "text", "") for m in last if m.role == "user" for b in m.content)
    written = _path(project).read_text()
    assert written.startswith("# mine\n") and "# keep" in written
    assert tomllib.loads(written)["images"] == {"block_images": True}


async def test_auto_resize_off_sends_the_original_pixels(project: Path, make_session) -> None:
    (project / "wide.png").write_bytes(_png(2500, 20))
    session, faux = make_session([faux_message("ok")])
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await _open(app, pilot)
        await keys(pilot, "resize")
        assert _keys(screen) == ["images.auto_resize"]
        await pilot.press("space")  # joins the search ("resize "), changes nothing
        assert screen.search == "resize " and session.settings.images.auto_resize is True
        await pilot.press("enter")
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), what="closed")
        assert session.settings.images.auto_resize is False
        await type_text(pilot, "size? @wide.png")
        app.editor.close_menu()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(faux.state.contexts) == 1, what="request")
    (image,) = [b for b in faux.state.contexts[0].messages[-1].content if isinstance(b, ImageContent)]
    with Image.open(io.BytesIO(base64.b64decode(image.data))) as shown:
        assert shown.size == (2500, 20)
    assert tomllib.loads(_path(project).read_text())["images"] == {"auto_resize": False}


async def test_editor_padding_and_autocomplete_rows_apply_at_once(project: Path, make_session) -> None:
    for name in range(12):
        (project / f"file{name:02}.txt").write_text("x")
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        before = app.editor.content_region.width
        screen = await _open(app, pilot)
        await keys(pilot, "editor padding")
        await pilot.press("right", "right")
        assert app.editor.styles.padding.left == 3
        await pilot.press("escape")
        await keys(pilot, "autocomplete")
        assert _keys(screen) == ["autocomplete_max_visible"]
        await pilot.press("right", "right")  # 5 -> 6 -> 7
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), what="closed")
        await pilot.pause()
        assert app.editor.content_region.width == before - 4
        await type_text(pilot, "@file")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.is_open, what="menu")
        await pilot.pause()
        assert menu.size.height == 7 and menu.outer_size.height == 8  # 7 rows + the (k/N) count
    data = tomllib.loads(_path(project).read_text())
    assert data["editor_padding_x"] == 2 and data["autocomplete_max_visible"] == 7


async def test_skill_commands_off_hides_them_from_completion(project: Path, make_session) -> None:
    from pi_coder.resources.skills import Skill

    skill_file = project / "SKILL.md"
    skill_file.write_text("---\nname: tidy\ndescription: Tidy the code\n---\nAlways tidy.\n")
    session, faux = make_session([faux_message("one"), faux_message("two")])
    session.skills = [Skill("tidy", "Tidy the code", str(skill_file), str(project), "project")]
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await session.prompt("/skill:tidy now")
        assert "Always tidy." in "".join(getattr(b, "text", "") for b in faux.state.contexts[-1].messages[-1].content)
        await type_text(pilot, "/ski")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: any("skill:tidy" in item.label for item in menu.items), what="skill offered")
        app.editor.set_text("")
        await pilot.pause()
        screen = await _open(app, pilot)
        await keys(pilot, "skill")
        assert _keys(screen) == ["enable_skill_commands"]
        await pilot.press("enter", "escape", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), what="closed")
        await type_text(pilot, "/ski")
        await pilot.pause()
        assert not any("skill:tidy" in item.label for item in menu.items)
        await session.prompt("/skill:tidy now")  # typed in full it still expands (as in Pi)
    last = "".join(getattr(b, "text", "") for b in faux.state.contexts[-1].messages[-1].content)
    assert "Always tidy." in last
    assert tomllib.loads(_path(project).read_text())["enable_skill_commands"] is False


async def test_http_idle_timeout_and_default_project_trust_are_saved(project: Path, make_session) -> None:
    _path(project).write_text(SETTINGS)
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await _open(app, pilot)
        await keys(pilot, "idle")
        assert _keys(screen) == ["http_idle_timeout_ms"] and "5 min" in screen_text(app)
        await pilot.press("right")
        await pilot.pause()
        await wait_until(pilot, lambda: session.settings.http_idle_timeout_ms == 600_000, what="session.settings.http_idle_timeout_ms == 600_000")
        await pilot.press("ctrl+u")
        await keys(pilot, "project trust")
        assert _keys(screen) == ["default_project_trust"]
        await pilot.press("right")
        await pilot.pause()
    saved = tomllib.loads(_path(project).read_text())
    assert saved["http_idle_timeout_ms"] == 600_000 and saved["default_project_trust"] == "always"


async def test_output_padding_hardware_cursor_and_terminal_progress_apply_and_are_saved(
    project: Path, make_session
) -> None:
    from pi_coder.tui.widgets.transcript import UserMessageBlock

    _path(project).write_text(SETTINGS)
    session, _ = make_session([faux_message("an answer")])
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "an answer" in screen_text(app), what="answer")
        block = app.query_one(UserMessageBlock)
        assert block.styles.padding.left == 1 and block.content_region.x - block.region.x == 1
        app.editor.insert("draft")
        await pilot.pause()
        caret = app.editor.cursor_screen_offset
        assert app.screen.get_style_at(*caret).reverse  # the drawn cursor
        app.editor.set_text("")

        screen = await _open(app, pilot)
        await keys(pilot, "output padding")
        assert _keys(screen) == ["output_pad"]
        await pilot.press("left")  # 1 -> 0
        await pilot.pause()
        assert app.has_class("-output-pad-0") and block.styles.padding.left == 0
        await pilot.press("escape")
        await keys(pilot, "hardware")
        assert _keys(screen) == ["show_hardware_cursor"]
        await pilot.press("enter")
        await pilot.press("escape")
        await keys(pilot, "progress")
        assert _keys(screen) == ["terminal.show_terminal_progress"]
        await pilot.press("enter")
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), what="closed")
        await pilot.pause()
        assert block.content_region.x == block.region.x  # no padding column left
        assert app.terminal_display.hardware_cursor and app.terminal_display.progress
        app.editor.insert("draft")
        await pilot.pause()
        assert not app.screen.get_style_at(*app.editor.cursor_screen_offset).reverse  # the terminal's cursor instead
    data = tomllib.loads(_path(project).read_text())
    assert data["output_pad"] == 0 and data["show_hardware_cursor"] is True
    assert data["terminal"] == {"show_terminal_progress": True}
    assert data["theme"] == "dark"


async def test_output_pad_zero_at_start(project: Path, make_session) -> None:
    from pi_coder.tui.widgets.transcript import UserMessageBlock

    _path(project).write_text("output_pad = 0\n")
    session, _ = make_session([faux_message("an answer")])
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "an answer" in screen_text(app), what="answer")
        block = app.query_one(UserMessageBlock)
        assert app.has_class("-output-pad-0") and block.content_region.x == block.region.x


async def test_transcript_scrollbar_always_hidden_and_auto(project: Path, make_session) -> None:
    _path(project).write_text('fullscreen_scrollbar = "always"\n')
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        transcript = app.transcript
        assert transcript.max_scroll_y == 0 and transcript.show_vertical_scrollbar  # shown with nothing to scroll
        screen = await _open(app, pilot)
        await keys(pilot, "scrollbar")
        assert _keys(screen) == ["fullscreen_scrollbar"]
        await pilot.press("right")  # always -> hidden
        await pilot.pause()
        assert transcript.styles.scrollbar_size_vertical == 0
        await pilot.press("right")  # hidden -> auto
        await pilot.pause()
        assert not transcript.show_vertical_scrollbar and transcript.styles.scrollbar_size_vertical == 1
    assert tomllib.loads(_path(project).read_text())["fullscreen_scrollbar"] == "auto"
