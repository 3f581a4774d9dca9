"""Shared helpers for the AgentSession tests: a tmp PI_CODER_HOME, faux models, a held stream."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pi_coder.ai.models import Models, create_models
from pi_coder.ai.providers.faux import FauxProvider, faux_message, faux_provider
from pi_coder.ai.types import AssistantMessage, Usage
from pi_coder.core import AgentSession, create_agent_session
from pi_coder.settings import load_settings


def make_models(*providers: FauxProvider) -> Models:
    models = create_models(include_builtin=False, env={}, models_toml=Path("/nonexistent/models.toml"))
    for provider in providers:
        models.set_provider(provider)
    return models


def make_session(cwd: Path, models: Models, **kwargs: Any) -> AgentSession:
    kwargs.setdefault("tools", [])
    return create_agent_session(cwd, settings=load_settings(cwd), models=models, **kwargs)


def read_lines(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def texts(messages: list[Any]) -> list[tuple[str, str]]:
    """``(role, text)`` of the non-system messages (user text blocks joined)."""
    out = []
    for m in messages:
        role = m.role
        if role == "system":
            continue
        if role == "assistant":
            out.append((role, m.text()))
        elif role == "user":
            content = m.content
            out.append((role, content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)))
        elif role == "bashExecution":
            out.append((role, m.command))
        else:
            out.append((role, ""))
    return out


class Gate:
    """A faux response that holds its stream open until released (or aborted)."""

    def __init__(self, reply: str | AssistantMessage) -> None:
        self.reply = reply
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, context: Any, options: Any, state: Any, model: Any) -> Any:
        self.started.set()
        waiters = [asyncio.ensure_future(self.release.wait())]
        if options is not None and options.signal is not None:
            waiters.append(asyncio.ensure_future(options.signal.wait()))
        try:
            await asyncio.wait(waiters, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        return self.reply


def usage(input: int, output: int, cache_read: int = 0, cache_write: int = 0) -> Usage:
    return Usage(
        input=input,
        output=output,
        cache_read=cache_read,
        cache_write=cache_write,
        total_tokens=input + output + cache_read + cache_write,
    )


__all__ = [
    "Gate",
    "faux_message",
    "faux_provider",
    "make_models",
    "make_session",
    "read_lines",
    "texts",
    "usage",
]
