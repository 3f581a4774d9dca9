"""Replay transformation applied by provider adapters before serialising a transcript."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias

from pi_coder.ai.types import (
    AssistantMessage,
    Model,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["NO_RESULT_TEXT", "is_same_model", "transform_messages"]

NO_RESULT_TEXT = "No result provided"

LlmMessage: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage
_Block: TypeAlias = TextContent | ThinkingContent | ToolCall

NormalizeToolCallId = Callable[[str, Model, AssistantMessage], str]


def is_same_model(message: AssistantMessage, model: Model) -> bool:
    """Whether ``message`` was produced by ``model`` (same provider, api and model id)."""
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def transform_messages(
    messages: Sequence[LlmMessage],
    model: Model,
    normalize_tool_call_id: NormalizeToolCallId | None = None,
) -> list[LlmMessage]:
    """Make a transcript safe to replay to ``model``.

    1. Assistant messages from another model: non-empty thinking becomes text, empty and
       redacted thinking is dropped, text and tool-call signatures are stripped, and tool-call
       ids may be rewritten by ``normalize_tool_call_id`` (the matching ``toolResult`` ids
       follow). Same-model messages keep their blocks (thinking with signatures byte for
       byte); only empty, unsigned thinking is dropped, since it carries nothing.
    2. Assistant messages whose stopReason is ``error`` or ``aborted`` are dropped.
    3. Tool calls with no result before the next assistant or user message get a synthetic
       error ``toolResult`` with the text "No result provided".

    Messages that need no change are returned as the same objects; changed ones are shallow
    copies. The input list is not modified.

    Args:
        messages: LLM messages (system, user, assistant, toolResult).
        model: The model the transcript is about to be sent to.
        normalize_tool_call_id: Optional ``(id, model, source_message) -> id`` for providers
            with stricter tool-call id rules; applied to other models' messages only.

    Returns:
        A new list of messages.
    """
    id_map: dict[str, str] = {}
    converted: list[LlmMessage] = []
    for message in messages:
        if message.role == "assistant":
            converted.append(_convert_assistant(message, model, normalize_tool_call_id, id_map))
        elif message.role == "toolResult" and id_map.get(message.tool_call_id, message.tool_call_id) != message.tool_call_id:
            converted.append(message.model_copy(update={"tool_call_id": id_map[message.tool_call_id]}))
        else:
            converted.append(message)
    return _fill_missing_results(converted)


def _convert_assistant(
    message: AssistantMessage,
    model: Model,
    normalize: NormalizeToolCallId | None,
    id_map: dict[str, str],
) -> AssistantMessage:
    same = is_same_model(message, model)
    changed = False
    blocks: list[_Block] = []
    for block in message.content:
        new = _convert_block(block, same, model, message, normalize, id_map)
        if new is not block:
            changed = True
        if new is not None:
            blocks.append(new)
    if not changed:
        return message
    return message.model_copy(update={"content": blocks})


def _convert_block(
    block: _Block,
    same: bool,
    model: Model,
    message: AssistantMessage,
    normalize: NormalizeToolCallId | None,
    id_map: dict[str, str],
) -> _Block | None:
    if isinstance(block, ThinkingContent):
        if block.redacted:
            return block if same else None
        if same and block.thinking_signature:
            return block
        if not block.thinking.strip():
            return None
        return block if same else TextContent(text=block.thinking)
    if same:
        return block
    if isinstance(block, TextContent):
        return block if block.text_signature is None else TextContent(text=block.text)
    if isinstance(block, ToolCall):
        update: dict[str, str | None] = {}
        if block.thought_signature is not None:
            update["thought_signature"] = None
        if normalize is not None:
            new_id = normalize(block.id, model, message)
            if new_id != block.id:
                id_map[block.id] = new_id
                update["id"] = new_id
        return block.model_copy(update=update) if update else block
    return block


def _fill_missing_results(messages: list[LlmMessage]) -> list[LlmMessage]:
    out: list[LlmMessage] = []
    pending: list[ToolCall] = []
    answered: set[str] = set()

    def flush() -> None:
        for call in pending:
            if call.id not in answered:
                out.append(
                    ToolResultMessage(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=[TextContent(text=NO_RESULT_TEXT)],
                        is_error=True,
                    )
                )
        pending.clear()
        answered.clear()

    for message in messages:
        if message.role == "assistant":
            flush()
            if message.stop_reason in ("error", "aborted"):
                continue
            pending.extend(b for b in message.content if isinstance(b, ToolCall))
        elif message.role == "user":
            flush()
        elif message.role == "toolResult":
            answered.add(message.tool_call_id)
        out.append(message)
    return out
