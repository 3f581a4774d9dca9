"""``text_stream``: an assistant event stream from text chunks, for ``register_provider(stream_simple=)``.

A provider's stream function is ``stream_simple(model, context, options) ->
AssistantMessageEventStream`` (docs/extensions.md, "Custom providers"). Most custom providers
produce text; ``text_stream`` turns an iterable or async iterable of chunks into the ``start``,
``text_*`` and ``done`` events (``error`` when the chunks raise, ``aborted`` when the signal fires).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.ai.events import AssistantMessageEventStream
    from pi_coder.ai.types import Model, Usage

__all__ = ["text_stream"]

_tasks: set[asyncio.Task[None]] = set()


def text_stream(
    model: Model,
    chunks: Iterable[str] | AsyncIterable[str],
    *,
    signal: Any = None,
    usage: Usage | None = None,
) -> AssistantMessageEventStream:
    """Stream ``chunks`` as one text block of an assistant message of ``model``."""
    from pi_coder.ai.events import (
        AssistantMessageEventStream,
        DoneEvent,
        ErrorEvent,
        StartEvent,
        TextDeltaEvent,
        TextEndEvent,
        TextStartEvent,
    )
    from pi_coder.ai.types import AssistantMessage, TextContent

    out = AssistantMessageEventStream()
    message = AssistantMessage(content=[], api=model.api, provider=model.provider, model=model.id, stop_reason="stop")
    if usage is not None:
        message.usage = usage

    def snapshot(text: str) -> AssistantMessage:
        return message.model_copy(update={"content": [TextContent(text=text)]})

    async def iterate() -> AsyncIterable[str]:
        if isinstance(chunks, AsyncIterable):
            async for chunk in chunks:
                yield chunk
        else:
            for chunk in chunks:
                yield chunk
                await asyncio.sleep(0)

    async def run() -> None:
        text = ""
        out.push(StartEvent(partial=message.model_copy()))
        out.push(TextStartEvent(content_index=0, partial=snapshot("")))
        try:
            async for chunk in iterate():
                if signal is not None and signal.aborted:
                    failed = snapshot(text).model_copy(update={"stop_reason": "aborted", "error_message": "Request was aborted"})
                    out.push(ErrorEvent(reason="aborted", error=failed))
                    return
                text += chunk
                out.push(TextDeltaEvent(content_index=0, delta=chunk, partial=snapshot(text)))
        except Exception as exc:  # a stream must not raise: the error becomes the final event
            failed = snapshot(text).model_copy(update={"stop_reason": "error", "error_message": str(exc) or type(exc).__name__})
            out.push(ErrorEvent(reason="error", error=failed))
            return
        out.push(TextEndEvent(content_index=0, content=text, partial=snapshot(text)))
        out.push(DoneEvent(reason="stop", message=snapshot(text)))

    task = asyncio.ensure_future(run())
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return out
