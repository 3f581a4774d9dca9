"""Steering, follow-up and abort through the editor keys, on a real AgentSession."""

from __future__ import annotations

from pi_coder.ai.providers.faux import faux_message, faux_tool_call
from pi_coder.tui.widgets.panels import PendingMessages
from tests.tui.helpers import BlockingTool, roles, type_text, user_texts, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


async def test_enter_while_working_steers_after_the_tool_batch(make_session) -> None:
    """Enter during a tool run queues a steering message, shown as pending, delivered before the next request."""
    blocker = BlockingTool()
    session, faux = make_session(
        [
            faux_message(faux_tool_call("wait", {"label": "one"})),
            faux_message("steered reply"),
        ],
        tools=[blocker.tool],
    )
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "start")
        await pilot.press("enter")
        await wait_until(pilot, blocker.started.is_set, what="tool started")
        await type_text(pilot, "use tabs")
        await pilot.press("enter")
        pending = app.query_one(PendingMessages)
        await wait_until(pilot, lambda: pending.steering == ["use tabs"], what="steering shown")
        assert "Steering: use tabs" in screen_text(app)
        assert app.editor.text == ""
        assert session.queued_messages() == [("steer", "use tabs")]
        blocker.release()
        await wait_until(pilot, lambda: faux.state.call_count == 2 and not session.is_streaming, what="run end")
        await wait_until(
            pilot, lambda: "steered reply" in screen_text(app) and not pending.has_class("-visible"), what="the reply shown"
        )
        # Delivered after the tool result, before the second request.
        assert user_texts(faux.state.contexts[1]) == ["start", "use tabs"]
        assert roles(faux.state.contexts[1]) == ["user", "assistant", "toolResult", "user"]
        assert pending.steering == [] and not pending.has_class("-visible")
        text = screen_text(app)
        assert "steered reply" in text and "Steering:" not in text


async def test_alt_enter_queues_a_follow_up_delivered_at_the_end(make_session) -> None:
    """Alt+Enter during a run queues a follow-up that is sent only once the agent would stop."""
    blocker = BlockingTool()
    session, faux = make_session(
        [
            faux_message(faux_tool_call("wait", {"label": "one"})),
            faux_message("first answer"),
            faux_message("follow-up answer"),
        ],
        tools=[blocker.tool],
    )
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "start")
        await pilot.press("enter")
        await wait_until(pilot, blocker.started.is_set, what="tool started")
        await type_text(pilot, "then test it")
        await pilot.press("alt+enter")
        pending = app.query_one(PendingMessages)
        await wait_until(pilot, lambda: pending.follow_up == ["then test it"], what="follow-up shown")
        assert "Follow-up: then test it" in screen_text(app)
        blocker.release()
        await wait_until(pilot, lambda: faux.state.call_count == 3 and not session.is_streaming, what="run end")
        await wait_until(pilot, lambda: "follow-up answer" in screen_text(app), what="the follow-up answer shown")
        assert user_texts(faux.state.contexts[1]) == ["start"]
        assert roles(faux.state.contexts[2]) == ["user", "assistant", "toolResult", "assistant", "user"]
        assert user_texts(faux.state.contexts[2]) == ["start", "then test it"]
        assert "follow-up answer" in screen_text(app)


async def test_escape_aborts_and_restores_both_queues_into_the_editor(make_session) -> None:
    """Esc aborts the run; queued steering and follow-up texts return to the editor above the draft."""
    blocker = BlockingTool()
    session, faux = make_session(
        [faux_message(faux_tool_call("wait", {"label": "one"})), faux_message("never")],
        tools=[blocker.tool],
    )
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "start")
        await pilot.press("enter")
        await wait_until(pilot, blocker.started.is_set, what="tool started")
        await type_text(pilot, "steer me")
        await pilot.press("enter")
        await type_text(pilot, "follow me")
        await pilot.press("alt+enter")
        pending = app.query_one(PendingMessages)
        await wait_until(
            pilot, lambda: pending.follow_up == ["follow me"] and len(session.queued_messages()) == 2, what="queued"
        )
        await type_text(pilot, "draft")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not session.is_streaming, what="aborted")
        await wait_until(pilot, lambda: "Operation aborted" in screen_text(app), what="the abort shown")
        assert app.editor.text == "steer me\nfollow me\ndraft"
        assert session.queued_messages() == []
        assert not pending.has_class("-visible")
        text = screen_text(app)
        assert "Operation aborted" in text
        assert "never" not in text


async def test_alt_up_pulls_queued_messages_back_without_aborting(make_session) -> None:
    blocker = BlockingTool()
    session, faux = make_session(
        [faux_message(faux_tool_call("wait", {})), faux_message("done")],
        tools=[blocker.tool],
    )
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "start")
        await pilot.press("enter")
        await wait_until(pilot, blocker.started.is_set, what="tool started")
        await type_text(pilot, "one")
        await pilot.press("enter")
        await type_text(pilot, "two")
        await pilot.press("alt+enter")
        await wait_until(pilot, lambda: len(session.queued_messages()) == 2, what="queued")
        await pilot.press("alt+up")
        await wait_until(pilot, lambda: app.editor.text == "one\ntwo", what="messages restored")
        assert session.is_streaming
        await wait_until(pilot, lambda: "Restored 2 queued messages" in screen_text(app), what="notice")
        assert "to editor" not in screen_text(app)
        blocker.release()
        await wait_until(pilot, lambda: not session.is_streaming, what="run end")
        assert user_texts(faux.state.contexts[-1]) == ["start"]
