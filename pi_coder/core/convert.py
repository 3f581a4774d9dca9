"""``convert_to_llm`` for the agent: the session layer's conversion plus the image block filter.

``pi_coder.session.messages.convert_to_llm`` maps coding messages (``bashExecution``,
``custom``, summaries) to LLM messages. When ``images.block_images`` is on,
every image block of a user or tool-result message is replaced by the text
``Image reading is disabled.`` (consecutive placeholders collapsed into one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pi_coder.ai.types import ImageContent, Message, TextContent, ToolResultMessage, UserMessage
from pi_coder.session.messages import convert_to_llm as _session_convert_to_llm

__all__ = ["IMAGE_BLOCKED_TEXT", "block_images", "convert_to_llm", "make_convert_to_llm"]

IMAGE_BLOCKED_TEXT = "Image reading is disabled."


def _filter_blocks(blocks: list[Any]) -> list[Any]:
    out: list[Any] = []
    for block in blocks:
        if isinstance(block, ImageContent):
            if out and isinstance(out[-1], TextContent) and out[-1].text == IMAGE_BLOCKED_TEXT:
                continue
            out.append(TextContent(text=IMAGE_BLOCKED_TEXT))
        else:
            out.append(block)
    return out


def block_images(messages: Iterable[Message]) -> list[Message]:
    """Replace image blocks of user and tool-result messages by a placeholder text.

    Messages without images are returned as the same objects; the others are copies (the
    transcript is never modified).
    """
    out: list[Message] = []
    for message in messages:
        if isinstance(message, UserMessage | ToolResultMessage) and not isinstance(message.content, str):
            if any(isinstance(b, ImageContent) for b in message.content):
                message = message.model_copy(update={"content": _filter_blocks(list(message.content))})
        out.append(message)
    return out


def convert_to_llm(messages: Iterable[Any], *, block_images_enabled: bool = False) -> list[Message]:
    """Agent messages to LLM messages, optionally with images blocked."""
    converted = _session_convert_to_llm(messages)
    return block_images(converted) if block_images_enabled else converted


def make_convert_to_llm(is_blocked: Callable[[], bool]) -> Callable[[list[Any]], list[Message]]:
    """A ``convert_to_llm`` hook for the Agent that reads the block-images setting at each call."""

    def convert(messages: list[Any]) -> list[Message]:
        return convert_to_llm(messages, block_images_enabled=is_blocked())

    return convert
