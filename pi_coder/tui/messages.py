"""App-level Textual messages."""

from __future__ import annotations

from textual.message import Message

__all__ = ["SessionEventsPosted"]


class SessionEventsPosted(Message):
    """Session events are waiting in the app's queue.

    The AgentSession subscriber appends each event to a queue and posts this message only when
    the queue was empty, so a burst of deltas costs one message and is handled in one pass, in
    order, in the app's message pump.
    """
