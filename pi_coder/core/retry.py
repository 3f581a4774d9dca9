"""Automatic retry of transient provider errors (pi-product 8.6).

When a run ends with an assistant ``error`` that :func:`~pi_coder.ai.errors.is_retryable_error`
accepts (overloaded, rate limit, 5xx, connection reset; never a context overflow), the failed
message is dropped from the in-memory context (it stays in the session file), the session waits
``base_delay_ms * 2 ** (attempt - 1)`` (capped by ``max_delay_ms`` when set) and continues the
agent. After ``max_retries`` failed attempts it gives up. ``abort()`` ends the wait at once.
Events: ``auto_retry_start`` before each wait, ``auto_retry_end`` when the cycle ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from pi_coder.ai.errors import is_retryable_error
from pi_coder.ai.types import AssistantMessage
from pi_coder.core.events import AutoRetryEnd, AutoRetryStart
from pi_coder.core.session_hooks import RunHook

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession

__all__ = ["RETRY_CANCELLED", "AutoRetry", "retry_delay_ms"]

RETRY_CANCELLED = "Retry cancelled"


def retry_delay_ms(attempt: int, base_delay_ms: int, max_delay_ms: int = 0) -> int:
    """The wait before retry ``attempt`` (1-based): doubling from ``base_delay_ms``.

    Args:
        attempt: 1 for the first retry.
        base_delay_ms: The first delay.
        max_delay_ms: Upper bound; 0 means none.
    """
    delay = base_delay_ms * 2 ** max(0, attempt - 1)
    return min(delay, max_delay_ms) if max_delay_ms > 0 else delay


class AutoRetry(RunHook):
    """The retry run hook; AgentSession registers one before the compaction hook."""

    def __init__(self) -> None:
        self.is_retrying = False
        self._attempt = 0
        self._wake: asyncio.Event | None = None
        self._cancelled = False

    @property
    def attempt(self) -> int:
        """Retries made in the current cycle (0 when none is running)."""
        return self._attempt

    async def before_prompt(self, session: AgentSession) -> None:
        """A new prompt starts with a fresh attempt counter."""
        self._attempt = 0
        self.is_retrying = False

    async def after_run(self, session: AgentSession, message: AssistantMessage | None) -> bool:
        """Retry a transient error after the backoff delay; end the cycle on anything else."""
        settings = session.settings.retry
        if (
            message is not None
            and message.stop_reason == "error"
            and settings.enabled
            and is_retryable_error(message)
        ):
            error = message.error_message or "Unknown error"
            if self._attempt >= settings.max_retries:
                if self._attempt > 0:
                    await self._end(session, success=False, final_error=error)
                return False
            self._attempt += 1
            delay = retry_delay_ms(self._attempt, settings.base_delay_ms, settings.max_delay_ms)
            self.is_retrying = True
            self._cancelled = False
            wake = self._wake = asyncio.Event()
            try:
                await session.emit(
                    AutoRetryStart(
                        attempt=self._attempt,
                        max_attempts=settings.max_retries,
                        delay_ms=delay,
                        error_message=error,
                    )
                )
                if session.messages and session.messages[-1] is message:
                    session.drop_last_assistant()
                if not self._cancelled:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(wake.wait(), delay / 1000)
            finally:
                self._wake = None
            if self._cancelled:
                await self._end(session, success=False, final_error=RETRY_CANCELLED)
                return False
            return True
        if self._attempt > 0:
            if message is not None and message.stop_reason not in ("error", "aborted"):
                await self._end(session, success=True, final_error=None)
            elif message is not None and message.stop_reason == "aborted":
                await self._end(session, success=False, final_error=RETRY_CANCELLED)
            else:
                failure = message.error_message if message is not None else None
                await self._end(session, success=False, final_error=failure or "Unknown error")
        return False

    async def _end(self, session: AgentSession, *, success: bool, final_error: str | None) -> None:
        attempt = self._attempt
        self._attempt = 0
        self.is_retrying = False
        await session.emit(AutoRetryEnd(success=success, attempt=attempt, final_error=final_error))

    def abort(self) -> None:
        """Stop a pending wait; the cycle ends with ``Retry cancelled``."""
        if self._wake is not None:
            self._cancelled = True
            self._wake.set()
