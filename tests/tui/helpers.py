"""Helpers for TUI tests: waiting on conditions, a tool that blocks until released."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from textual.pilot import Pilot

from pi_coder.agent.types import AgentTool, AgentToolResult
from pi_coder.ai.types import TextContent


async def wait_until(pilot: Pilot, condition: Callable[[], bool], timeout: float = 30.0, what: str = "") -> None:
    """Let the app run until ``condition()`` holds; it returns as soon as it does, so the timeout is
    generous (the suite runs on a loaded 2-core machine)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.02)


async def wait_for_dialog(pilot: Pilot, kind: type, what: str = "the dialog") -> Any:
    """Wait until a dialog of ``kind`` is on screen *and drawn*: a dialog ignores keys sent before
    its first frame (pi_coder/tui/key_guard.py), as a user could not have seen it yet."""
    app = pilot.app
    await wait_until(
        pilot,
        lambda: isinstance(app.screen, kind) and getattr(app.screen, "drawn_at", 0) is not None,
        what=what,
    )
    return app.screen


async def type_text(pilot: Pilot, text: str) -> None:
    """Insert ``text`` at the editor's cursor as typing would (one edit instead of a key per character)."""
    from pi_coder.tui.widgets.prompt_editor import PromptEditor

    pilot.app.query_one(PromptEditor).insert(text)
    await pilot.pause()


class _WaitParams(BaseModel):
    label: str = ""


class BlockingTool:
    """An AgentTool named ``wait`` whose calls block until :meth:`release`."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self._release = asyncio.Event()
        self.calls = 0

    def release(self) -> None:
        self._release.set()

    async def _execute(self, tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        self.calls += 1
        self.started.set()
        waiters = [asyncio.ensure_future(self._release.wait())]
        if signal is not None:
            waiters.append(asyncio.ensure_future(signal.wait()))
        try:
            await asyncio.wait(waiters, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        if signal is not None and signal.aborted:
            raise RuntimeError("Operation aborted")
        return AgentToolResult(content=[TextContent(text=f"waited {params.label}")])

    @property
    def tool(self) -> AgentTool:
        return AgentTool(
            name="wait",
            label="Wait",
            description="Wait until released",
            parameters=_WaitParams,
            execute=self._execute,
        )


def user_texts(context: Any) -> list[str]:
    """Texts of the user messages in a provider context, in order."""
    out = []
    for message in context.messages:
        if getattr(message, "role", None) != "user":
            continue
        content = message.content
        out.append(content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content))
    return out


def roles(context: Any) -> list[str]:
    return [getattr(m, "role", "?") for m in context.messages if getattr(m, "role", None) != "system"]
