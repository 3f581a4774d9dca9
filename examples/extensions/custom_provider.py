"""A provider with its own stream function (the idea of Pi's custom-provider examples): the
``echo`` provider answers by echoing the last user message, with no HTTP at all. A real one
would call its service in ``stream`` and yield the text as it arrives."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pi_coder.extensions import ExtensionAPI, text_stream


def _last_user_text(context: Any) -> str:
    for message in reversed(context.messages):
        if getattr(message, "role", None) == "user":
            content = message.content
            if isinstance(content, str):
                return content
            return " ".join(getattr(block, "text", "") for block in content)
    return ""


def extension(pi: ExtensionAPI) -> None:
    def stream(model: Any, context: Any, options: Any) -> Any:
        said = _last_user_text(context)

        async def chunks() -> AsyncIterator[str]:
            yield "echo: "
            for word in said.split(" "):
                yield word + " "

        return text_stream(model, chunks(), signal=getattr(options, "signal", None))

    pi.register_provider(
        "echo",
        api="echo-stream",
        models=[{"id": "echo-1", "name": "Echo", "context_window": 8192, "max_tokens": 1024}],
        stream_simple=stream,
    )
