"""Transcript behaviour: scrolling control, thinking blocks, edit preview, compaction, retry, model keys."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pi_coder.agent.types import AgentTool, AgentToolResult
from pi_coder.ai.models import create_models
from pi_coder.ai.providers.faux import faux_message, faux_provider, faux_thinking, faux_tool_call
from pi_coder.ai.types import TextContent
from pi_coder.core import create_agent_session
from pi_coder.settings import load_settings
from pi_coder.tui.widgets.assistant_message import ThinkingBlock
from pi_coder.tui.widgets.bash_block import SummaryBlock
from pi_coder.tui.widgets.panels import StatusLine
from pi_coder.tui.widgets.tool_call import ToolCallBlock
from pi_coder.tui.widgets.transcript import JumpMarker, Transcript
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


async def _send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_scrolled_up_view_stays_put_while_streaming_and_end_jumps_back(make_session) -> None:
    long_answer = "\n\n".join(f"Paragraph {i}: " + "words " * 30 for i in range(120))
    session, faux = make_session([long_answer], faux_options={"chunk_delay": 0.002})
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "write a lot")
        transcript = app.query_one(Transcript)
        await wait_until(pilot, lambda: transcript.max_scroll_y > 40, what="content overflows")
        transcript.scroll_to(y=5, animate=False)
        await pilot.pause(0.05)
        held = transcript.scroll_y
        await wait_until(pilot, lambda: app.query_one(JumpMarker).has_class("-visible"), what="jump marker")
        await wait_until(pilot, lambda: not session.is_streaming, what="stream end", timeout=90)
        await pilot.pause(0.1)
        assert transcript.scroll_y == held  # the stream did not move the view
        assert transcript.max_scroll_y > held + 50
        assert "New output below" in screen_text(app)
        await pilot.press("end")
        await pilot.pause(0.1)
        assert transcript.scroll_y >= transcript.max_scroll_y - 1
        assert not app.query_one(JumpMarker).has_class("-visible")
        assert "Paragraph 119" in screen_text(app)


async def test_ctrl_t_hides_and_shows_thinking(make_session) -> None:
    session, _ = make_session([faux_message(faux_thinking("secret pondering"), "the answer")])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "think")
        await wait_until(pilot, lambda: not session.is_streaming and "the answer" in screen_text(app), what="reply")
        assert "secret pondering" in screen_text(app)
        await pilot.press("ctrl+t")
        await pilot.pause(0.05)
        text = screen_text(app)
        assert "secret pondering" not in text and "Thinking..." in text
        assert app.query_one(ThinkingBlock).has_class("-hidden")
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: "secret pondering" in screen_text(app), what="'secret pondering' in screen_text(app)")


class _EditParams(BaseModel):
    path: str
    oldText: str = ""  # noqa: N815  (the tool's wire names)
    newText: str = ""  # noqa: N815


async def test_edit_preview_is_shown_before_the_edit_runs(make_session, project: Path) -> None:
    """The diff appears while the (here: held) edit call is still running."""
    (project / "app.py").write_text("x = 1\ny = 2\n")
    release = asyncio.Event()

    async def held_edit(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        await asyncio.wait_for(release.wait(), 20)
        return AgentToolResult(content=[TextContent(text="Successfully replaced text in app.py.")])

    tool = AgentTool(name="edit", label="Edit", description="edit", parameters=_EditParams, execute=held_edit)
    session, _ = make_session(
        [faux_message(faux_tool_call("edit", {"path": "app.py", "oldText": "y = 2", "newText": "y = 3"})), "ok"],
        tools=[tool],
    )
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "change y")
        await wait_until(pilot, lambda: bool(app.query(ToolCallBlock)), what="block")
        block = app.query_one(ToolCallBlock)
        await wait_until(pilot, lambda: block.view.preview is not None, what="preview")
        assert block.view.status in ("pending", "running")
        await wait_until(
            pilot, lambda: "-2 y = 2" in (text := screen_text(app)) and "+2 y = 3" in text, what="diff on screen"
        )
        release.set()
        await wait_until(pilot, lambda: not session.is_streaming, what="done")


async def test_edit_preview_reports_a_failing_edit(make_session, project: Path) -> None:
    from pi_coder.tui.edit_preview import preview_edit

    (project / "a.txt").write_text("alpha\n")
    diff, error = preview_edit({"path": "a.txt", "oldText": "alpha", "newText": "beta"}, str(project))
    assert error is None and "-1 alpha" in diff and "+1 beta" in diff
    diff, error = preview_edit({"path": "a.txt", "oldText": "gamma", "newText": "x"}, str(project))
    assert diff is None and "Could not find" in error
    assert preview_edit({"path": "missing.txt", "oldText": "a", "newText": "b"}, str(project))[1]


async def test_failed_compaction_is_reported_once(make_session) -> None:
    session, _ = make_session(["first answer"])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "hello")
        await wait_until(pilot, lambda: "first answer" in screen_text(app) and not session.is_streaming, what="reply")
        await _send(pilot, "/compact")
        await wait_until(pilot, lambda: "Nothing to compact" in screen_text(app), what="error")
        await pilot.pause(0.1)
        assert screen_text(app).count("Nothing to compact") == 1


async def test_compact_command_shows_the_summary_block(make_session, project: Path) -> None:
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.toml").write_text("[compaction]\nkeep_recent_tokens = 1\n")
    summary = "The conversation so far: greeting."
    session, _ = make_session(["first answer", "second answer", summary, summary, summary])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "hello " * 50)
        await wait_until(pilot, lambda: "first answer" in screen_text(app) and not session.is_streaming, what="reply")
        await _send(pilot, "more " * 50)
        await wait_until(pilot, lambda: "second answer" in screen_text(app) and not session.is_streaming, what="reply 2")
        await _send(pilot, "/compact keep it short")
        await wait_until(pilot, lambda: bool(app.query(SummaryBlock)), what="summary block")
        await wait_until(pilot, lambda: "[compaction]" in screen_text(app), what="'[compaction]' in screen_text(app)")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "The conversation so far: greeting." in screen_text(app), what="'The conversation so far: greeting.' in screen_text(app)")


async def test_retry_countdown_in_status_line_and_escape_cancels(make_session, project: Path) -> None:
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.toml").write_text("[retry]\nbase_delay_ms = 600000\n")  # open until Esc, whatever the load
    session, _ = make_session(
        [faux_message("", stop_reason="error", error_message="529 overloaded_error: Overloaded"), "never"]
    )
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "hello")
        status = app.query_one(StatusLine)
        await wait_until(pilot, lambda: "Retrying (1/" in screen_text(app), what="retry status")
        assert status.has_class("-warning")
        assert "(Esc to cancel)" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not session.is_streaming, what="cancelled")
        await pilot.pause(0.1)
        assert "Retrying" not in screen_text(app).splitlines()[-6]


def _two_model_session(project: Path):
    first = faux_provider(["from A"], name="alpha", model_id="model-a", reasoning=True)
    second = faux_provider(["from B"], name="beta", model_id="model-b")
    models = create_models(include_builtin=False, env={}, models_toml=Path("/nonexistent/models.toml"))
    models.set_provider(first)
    models.set_provider(second)
    session = create_agent_session(
        str(project), settings=load_settings(str(project)), models=models, model=first.model,
        thinking_level="low", no_session=True, tools=[],
    )
    return session


async def test_shift_tab_cycles_thinking_and_ctrl_p_cycles_models(project: Path) -> None:
    session = _two_model_session(project)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await wait_until(pilot, lambda: screen_text(app).rstrip().endswith("model-a • low"), what="screen_text(app).rstrip().endswith('model-a • low')")
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: session.thinking_level == "medium", what="session.thinking_level == 'medium'")
        await wait_until(pilot, lambda: "Thinking level: medium" in screen_text(app), what="the note")
        assert screen_text(app).rstrip().endswith("model-a • medium")
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: session.model.id == "model-b", what="session.model.id == 'model-b'")
        await wait_until(pilot, lambda: "Switched to model-b" in screen_text(app), what="the note")
        text = screen_text(app)
        assert "Switched to model-b" in text and text.rstrip().endswith("model-b")
        await pilot.press("shift+tab")
        await pilot.pause(0.05)
        assert "Current model does not support thinking" in screen_text(app)


async def test_page_keys_scroll_the_transcript(make_session) -> None:
    session, _ = make_session(["\n\n".join(f"Line {i}" for i in range(80))])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "long")
        transcript = app.query_one(Transcript)
        await wait_until(pilot, lambda: not session.is_streaming and transcript.max_scroll_y > 30, what="reply")
        await pilot.pause(0.1)
        bottom = transcript.scroll_y
        await pilot.press("pageup")
        await pilot.pause(0.05)
        assert transcript.scroll_y < bottom
        await pilot.press("pagedown")
        await pilot.pause(0.05)
        assert transcript.scroll_y >= transcript.max_scroll_y - 1
        await type_text(pilot, "two\nlines")
        before = transcript.scroll_y
        await pilot.press("pageup")  # the editor keeps the key when the draft has several lines
        await pilot.pause(0.05)
        assert transcript.scroll_y == before
