"""The texts of queued steering and follow-up messages, for display and for restoring on abort.

The agent holds the queued messages themselves; this keeps their texts in the same order so a UI
can list them, and drops each one when its user message actually starts (``message_start``).
"""

from __future__ import annotations

from typing import Any, Literal

from pi_coder.ai.types import TextContent

QueueKind = Literal["steer", "follow_up"]


def user_text(message: Any) -> str:
    """The text of a user message (text blocks joined), or ``""``."""
    if message.role != "user":
        return ""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


class QueuedTexts:
    """Steering and follow-up texts in queue order."""

    __slots__ = ("steering", "follow_up")

    def __init__(self) -> None:
        self.steering: list[str] = []
        self.follow_up: list[str] = []

    def add(self, kind: QueueKind, text: str) -> None:
        (self.steering if kind == "steer" else self.follow_up).append(text)

    def delivered(self, text: str) -> bool:
        """Forget the first queued copy of ``text`` (steering first); True if one was found."""
        for queue in (self.steering, self.follow_up):
            if text in queue:
                queue.remove(text)
                return True
        return False

    def take_all(self) -> list[str]:
        """Remove and return every text: steering first, then follow-up."""
        texts = [*self.steering, *self.follow_up]
        self.steering.clear()
        self.follow_up.clear()
        return texts

    def items(self) -> list[tuple[QueueKind, str]]:
        return [*(("steer", t) for t in self.steering), *(("follow_up", t) for t in self.follow_up)]

    def __len__(self) -> int:
        return len(self.steering) + len(self.follow_up)
