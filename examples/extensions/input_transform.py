"""The ``input`` event (port of Pi's input-transform.ts): ``?quick <question>`` is rewritten,
``ping`` and ``time`` are answered without the model."""

from __future__ import annotations

import time
from typing import Any

from pi_coder.extensions import ExtensionAPI, InputResult


def extension(pi: ExtensionAPI) -> None:
    @pi.on("input")
    def transform(event: Any, ctx: Any) -> InputResult:
        if event.source == "extension":  # leave what extensions send alone
            return InputResult()
        if event.text.startswith("?quick "):
            query = event.text[len("?quick ") :].strip()
            if not query:
                ctx.ui.notify("Usage: ?quick <question>", "warning")
                return InputResult(action="handled")
            return InputResult(action="transform", text=f"Respond briefly in 1-2 sentences: {query}")
        if event.text.lower() == "ping":
            ctx.ui.notify("pong")
            return InputResult(action="handled")
        if event.text.lower() == "time":
            ctx.ui.notify(time.strftime("%Y-%m-%d %H:%M:%S"))
            return InputResult(action="handled")
        return InputResult()
