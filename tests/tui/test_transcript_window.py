"""The windowed transcript: a resumed session mounts only its newest blocks (Textual pilot).

The earlier blocks wait unmounted behind an "↑ N earlier messages" row and are mounted a batch at
a time when the view comes near the top, without moving what the user reads; what walks the
transcript (Ctrl+O, Ctrl+T, quitting) sees them as well.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from pi_coder.session.store import SessionStore
from pi_coder.tui.widgets.assistant_message import ThinkingBlock
from pi_coder.tui.widgets.tool_call import ToolCallBlock
from pi_coder.tui.widgets.transcript import BATCH, WINDOW, EarlierMessages, Transcript, UserMessageBlock
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import FIXED_NOW, SessionWriter, make_app, make_app_with_extensions

TURNS = 150


def _session(cwd: str, turns: int = TURNS, *, thinking: bool = False, marks: int = 0) -> Path:
    """``turns`` rounds of a user message, a ``read`` call and its result (every 10th: 40 lines),
    with a thinking block before the call when ``thinking``: 2 (or 3) blocks a round; a custom
    ``mark`` entry after every ``marks``-th round."""
    w = SessionWriter(cwd, "33333333-4444-5555-6666-777777777777", FIXED_NOW - timedelta(hours=1))
    w.model_change("m0000001")
    for n in range(turns):
        if marks and n % marks == 0:
            w.custom(f"c{n:07d}", "mark", {"n": n})
        w.user(f"u{n:07d}", f"Please look at file_{n}.py")
        call = f"call_{n}"
        content: list[dict[str, object]] = []
        if thinking:
            content.append({"type": "thinking", "thinking": f"pondering file_{n}"})
        content.append({"type": "toolCall", "id": call, "name": "read", "arguments": {"path": f"file_{n}.py"}})
        w.assistant(f"a{n:07d}", "", content=content, stop_reason="toolUse")
        lines = 40 if n % 10 == 0 else 3
        w.tool_result(f"t{n:07d}", call, "read", "\n".join(f"value_{i} = {i}" for i in range(lines)))
    return w.write()


def _history_blocks(app) -> int:
    return len(app.query(UserMessageBlock)) + len(app.query(ToolCallBlock)) + len(app.query(ThinkingBlock))


def _view_rows(app) -> list[str]:
    """The transcript's rows on screen, without the scrollbar's column (the editor and footer below left out)."""
    transcript = app.query_one(Transcript)
    width = transcript.size.width - transcript.scrollbar_size_vertical
    return [row[:width].rstrip() for row in screen_text(app).splitlines()[: transcript.size.height]]


async def _resumed(pilot, app) -> Transcript:
    transcript = app.query_one(Transcript)
    await wait_until(pilot, lambda: len(app.query(ToolCallBlock)) > 0 and not transcript._loading, what="the history")
    await pilot.pause(0.2)
    return transcript


async def test_a_resumed_session_mounts_only_its_newest_blocks(project: Path, make_session) -> None:
    session, _ = make_session([], store=SessionStore.open(_session(str(project))), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = await _resumed(pilot, app)
        mounted = _history_blocks(app)
        assert WINDOW <= mounted < 2 * TURNS
        assert transcript.earlier_count == 2 * TURNS - mounted
        row = app.query_one(EarlierMessages)
        assert row.count == transcript.earlier_count
        assert str(row.render()) == f"↑ {transcript.earlier_count} earlier messages — scroll up to load"
        # the row sits above the oldest mounted block, under what was drawn before the history
        blocks = list(transcript.blocks.children)
        assert isinstance(blocks[blocks.index(row) + 1], UserMessageBlock)
        assert "Please look at file_149.py" in screen_text(app)  # the view follows the live end


async def test_scrolling_up_to_the_top_loads_the_previous_batch(project: Path, make_session) -> None:
    session, _ = make_session([], store=SessionStore.open(_session(str(project))), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = await _resumed(pilot, app)
        waiting = transcript.earlier_count
        for _ in range(40):  # PageUp until the view comes near the top
            await pilot.press("pageup")
            await pilot.pause(0.05)
            if transcript.earlier_count < waiting:
                break
        await wait_until(pilot, lambda: not transcript._loading, what="the batch")
        assert transcript.earlier_count == waiting - BATCH
        assert app.query_one(EarlierMessages).count == waiting - BATCH
        assert transcript.scroll_y > transcript.size.height  # moved down by the batch: not at the top any more
        oldest = TURNS - (2 * TURNS - waiting) // 2  # the oldest round mounted before
        assert f"Please look at file_{oldest - 1}.py" not in screen_text(app)  # the view did not jump up
        transcript.scroll_to(y=transcript.scroll_y - transcript.size.height, animate=False)  # the batch is above it
        await pilot.pause(0.1)
        assert f"Please look at file_{oldest - 1}.py" in screen_text(app)


async def test_a_loaded_batch_keeps_the_view_in_place(project: Path, make_session) -> None:
    session, _ = make_session([], store=SessionStore.open(_session(str(project))), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = await _resumed(pilot, app)
        transcript.scroll_to(y=transcript.size.height + 5, animate=False)  # above the live end, not yet near the top
        await pilot.pause(0.1)
        before, offset = _view_rows(app), transcript.scroll_y
        waiting = transcript.earlier_count
        await transcript.load_earlier()
        await pilot.pause(0.1)
        assert transcript.earlier_count == waiting - BATCH
        assert transcript.scroll_y > offset
        assert _view_rows(app) == before


async def test_the_last_batch_removes_the_row(project: Path, make_session) -> None:
    session, _ = make_session([], store=SessionStore.open(_session(str(project), turns=40)), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = await _resumed(pilot, app)
        assert transcript.earlier_count > 0
        transcript.scroll_to(y=transcript.size.height + 5, animate=False)
        await pilot.pause(0.1)
        before = _view_rows(app)
        while transcript.earlier_count:
            await transcript.load_earlier()
        await pilot.pause(0.1)
        assert not app.query(EarlierMessages)
        assert _history_blocks(app) == 80
        assert _view_rows(app) == before


async def test_blocks_loaded_after_ctrl_o_and_ctrl_t_take_the_current_state(project: Path, make_session) -> None:
    session, _ = make_session([], store=SessionStore.open(_session(str(project), thinking=True)), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = await _resumed(pilot, app)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: app.tools_expanded, what="expanded")
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: app.hide_thinking, what="thinking hidden")
        mounted = set(app.query(ToolCallBlock))
        await transcript.load_earlier()
        await pilot.pause(0.1)
        loaded = [block for block in app.query(ToolCallBlock) if block not in mounted]
        assert loaded
        assert all(block.expanded for block in loaded)
        assert all(block.has_class("-hidden") for block in app.query(ThinkingBlock))
        transcript.scroll_to(y=0, animate=False)
        await pilot.pause(0.1)
        long_read = next(block for block in loaded if block.view.tool_call_id.endswith("0"))
        from rich.syntax import Syntax

        shown = [part.code for part in long_read.content.renderables if isinstance(part, Syntax)]  # type: ignore[union-attr]
        assert "value_39" in "".join(shown)  # the whole 40-line output, not the folded 10


async def test_quitting_prints_the_whole_conversation(project: Path, make_session) -> None:
    session, _ = make_session([], store=SessionStore.open(_session(str(project))), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = await _resumed(pilot, app)
        assert transcript.earlier_count > 0
        await app.quit_app()
    text = "\n".join(row.plain for row in app.exit_transcript)
    for n in range(TURNS):
        assert f"Please look at file_{n}.py" in text
        assert f"read file_{n}.py" in text
    assert "earlier message" not in text
    assert text.index("Please look at file_0.py") < text.index("Please look at file_149.py")


MARKS = """
def extension(pi):
    pi.register_entry_renderer("mark", lambda entry, *, expanded, theme: f"mark set: {entry.data['n']}")
"""


async def test_custom_entries_of_the_earlier_blocks_are_drawn_by_their_renderer(project: Path, make_session) -> None:
    session, _ = make_session([], store=SessionStore.open(_session(str(project), marks=25)), no_session=False)
    app = make_app_with_extensions(session, project, ["marks.py"], {"marks.py": MARKS})
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = await _resumed(pilot, app)
        assert transcript.earlier_count > 0
        await app.quit_app()
    text = "\n".join(row.plain for row in app.exit_transcript)
    places = [text.index(f"mark set: {n}") for n in range(0, TURNS, 25)]
    assert places == sorted(places)
    assert text.index("mark set: 25") < text.index("Please look at file_25.py") < text.index("mark set: 50")


async def test_a_long_live_session_stays_bounded_and_rebuilds_what_it_unmounted(
    make_session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_coder.tui.widgets import transcript as window

    monkeypatch.setattr(window, "WINDOW", 4)
    monkeypatch.setattr(window, "BATCH", 4)
    monkeypatch.setattr(window, "TRIM_AT", 12)
    prompts = 16
    session, _ = make_session([f"answer number {n}" for n in range(prompts)])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        most = 0
        for n in range(prompts):
            await type_text(pilot, f"question number {n}")
            await pilot.press("enter")
            await wait_until(pilot, lambda n=n: f"answer number {n}" in screen_text(app), what=f"answer {n}")
            await wait_until(pilot, lambda: not session.is_streaming and not transcript._loading, what="idle")
            most = max(most, len(transcript.blocks.children))
        await pilot.pause(0.2)
        assert transcript.earlier_count > 0  # the oldest went back to the pool
        assert most <= 12 + 3  # mounted: bounded (a turn's blocks may arrive before the trim)
        assert app.query_one(EarlierMessages).count == transcript.earlier_count
        assert "question number 0" not in [str(block.text) for block in app.query(UserMessageBlock)]
        await app.quit_app()
    rows = [row.plain.strip() for row in app.exit_transcript]
    questions = [rows.index(f"question number {n}") for n in range(prompts)]
    answers = [rows.index(f"answer number {n}") for n in range(prompts)]
    assert questions == sorted(questions) and all(q < a for q, a in zip(questions, answers, strict=True))
    assert not any("earlier message" in row for row in rows)


async def test_a_finished_tool_block_is_rebuilt_as_it_was_drawn(
    make_session, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_coder.ai.providers.faux import faux_message, faux_tool_call
    from pi_coder.tui.widgets import transcript as window

    monkeypatch.setattr(window, "WINDOW", 3)
    monkeypatch.setattr(window, "BATCH", 3)
    monkeypatch.setattr(window, "TRIM_AT", 9)
    (project / "notes.txt").write_text("\n".join(f"note line {n}" for n in range(30)) + "\n")
    prompts = 6
    responses: list[object] = []
    for n in range(prompts):
        responses += [faux_message(faux_tool_call("read", {"path": "notes.txt"}, id=f"call_{n}")), f"done {n}"]
    session, _ = make_session(responses, tool_names=["read"])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        drawn: list[str] = []
        for n in range(prompts):
            await type_text(pilot, f"read it {n}")
            await pilot.press("enter")
            await wait_until(pilot, lambda n=n: f"done {n}" in screen_text(app), what=f"turn {n}")
            await wait_until(pilot, lambda: not session.is_streaming and not transcript._loading, what="idle")
            if n == 0:
                first = app.query(ToolCallBlock).first()
                drawn = _block_rows(first)
        await pilot.pause(0.2)
        assert transcript.earlier_count > 0
        assert "call_0" not in [block.view.tool_call_id for block in app.query(ToolCallBlock)]
        await transcript.load_all()
        await pilot.pause(0.1)
        again = next(block for block in app.query(ToolCallBlock) if block.view.tool_call_id == "call_0")
        assert _block_rows(again) == drawn
        assert any("note line 0" in row for row in drawn)


def _block_rows(block) -> list[str]:
    from textual.geometry import Region

    width, height = block.outer_size  # (rows without their end: a scrollbar may have come since)
    return ["".join(s.text for s in strip).rstrip() for strip in block.render_lines(Region(0, 0, width, height))]
