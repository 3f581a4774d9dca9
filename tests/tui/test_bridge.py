"""The session bridge stops session events before the screen is torn down."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_coder.agent.events import AgentEnd, AgentStart
from pi_coder.tui.bridge import SessionBridge, SessionEventsPosted
from tests.tui.helpers import wait_until
from tests.tui.screens_support import make_app


class _Source:
    def __init__(self) -> None:
        self.listeners: list[Any] = []

    def subscribe(self, listener: Any) -> Any:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def emit(self, event: Any) -> None:
        for listener in list(self.listeners):
            listener(event)


class _Target:
    def __init__(self) -> None:
        self.posted: list[Any] = []

    def post_message(self, message: Any) -> bool:
        self.posted.append(message)
        return True


def test_a_closed_bridge_unsubscribes_and_posts_nothing() -> None:
    source, target = _Source(), _Target()
    bridge = SessionBridge(source, target)
    source.emit(AgentStart())
    assert len(target.posted) == 1 and isinstance(target.posted[0], SessionEventsPosted)
    bridge.close()
    assert source.listeners == [] and not bridge.pending and bridge.drain() == []
    bridge.close()  # idempotent


async def test_an_event_emitted_while_the_screen_is_torn_down_reaches_no_widget(make_session) -> None:
    """Regression: an ``agent_end`` dispatched after the screens were pruned looked up StatusLine
    (``NoMatches``). Textual prunes the screens before the app's Unmount; the event is emitted
    right after the pruning, while the app's message pump still runs."""
    session, _ = make_session(["hi"])
    app = make_app(session)
    errors: list[BaseException] = []
    prune = app._close_all

    async def close_all_then_emit() -> None:
        await prune()
        session.emit_nowait(AgentEnd(messages=[]))
        for _ in range(10):  # give the app's pump turns to handle whatever was posted
            await asyncio.sleep(0.01)

    app._close_all = close_all_then_emit  # type: ignore[method-assign]
    original = app._handle_exception

    def record(error: Exception) -> None:
        errors.append(error)
        original(error)

    app._handle_exception = record  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.controller is not None, what="mounted")
    assert errors == []
    assert app.return_code in (0, None)


async def test_a_wake_up_posted_before_the_bridge_closed_touches_no_widget(make_session) -> None:
    """Regression (seen once under load at the end of a test): a ``SessionEventsPosted`` already in
    the app's queue when the bridge closed was handled after the screens were pruned; it drained
    nothing, then looked up the Transcript (``NoMatches``) and the app ended with that error."""
    session, _ = make_session(["hi"])
    app = make_app(session)
    errors: list[BaseException] = []
    prune = app._close_all

    async def close_all_with_a_wake_up_queued() -> None:
        await prune()
        app.post_message(SessionEventsPosted())  # in the queue from before the close
        for _ in range(10):  # give the app's pump turns to handle it
            await asyncio.sleep(0.01)

    app._close_all = close_all_with_a_wake_up_queued  # type: ignore[method-assign]
    original = app._handle_exception

    def record(error: Exception) -> None:
        errors.append(error)
        original(error)

    app._handle_exception = record  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.controller is not None, what="mounted")
    assert errors == []
    assert app.return_code in (0, None)
