"""The selected row of pickers, dialogs and the completion menu carries Pi's "→ " marker."""

from __future__ import annotations

from pathlib import Path

from pi_coder.tui.screens.model_picker import ModelPicker
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import faux_models, keyless_provider, make_app, session_for


def _session(project: Path):
    models, _ = faux_models(("alpha", "alpha-fast", False), ("beta", "beta-smart", True))
    models.set_provider(keyless_provider())
    return session_for(project, models, models.get_model("alpha", "alpha-fast"))


def _marked(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "→ " in line]


async def test_picker_marks_the_highlighted_row_and_the_mark_moves(project: Path) -> None:
    app = make_app(_session(project))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        await pilot.pause()
        marked = _marked(screen_text(app))
        assert len(marked) == 1 and "alpha-fast" in marked[0]
        await pilot.press("down")
        await pilot.pause()
        marked = _marked(screen_text(app))
        assert len(marked) == 1 and "beta-smart" in marked[0]


async def test_completion_menu_marks_the_highlighted_command(project: Path) -> None:
    app = make_app(_session(project))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/")
        await wait_until(pilot, lambda: app.query_one("CompletionMenu").is_open, what="menu")
        await pilot.pause()
        first = _marked(screen_text(app))
        assert len(first) == 1
        await pilot.press("down")
        await pilot.pause()
        second = _marked(screen_text(app))
        assert len(second) == 1 and second != first


async def test_completion_descriptions_line_up_in_a_column(project: Path) -> None:
    app = make_app(_session(project))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/")
        await wait_until(pilot, lambda: app.query_one("CompletionMenu").is_open, what="menu")
        await pilot.pause()
        menu = app.query_one("CompletionMenu")
        starts = set()
        for item in menu.items[:5]:
            line = next(line for line in screen_text(app).splitlines() if f" {item.label} " in line + " ")
            if item.description:
                starts.add(line.index(item.description))
        assert len(starts) == 1
