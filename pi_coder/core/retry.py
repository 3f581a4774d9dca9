"""Automatic retry of transient provider errors, in the open as Pi 1.6 does.

This is the one retry layer for model calls: the providers do not retry by default
(``retry.provider.max_retries = 0``, Pi 1.6's default), so every retry is visible and cancellable.

When a run ends with an assistant ``error`` that :func:`~pi_coder.ai.errors.is_retryable_error`
accepts (overloaded, rate limit, 5xx, connection errors, timeouts; never a context overflow), the
run's ``agent_end`` carries ``willRetry: true``, ``auto_retry_start`` follows, the failed message
is dropped from the in-memory context (it stays in the session file), the session waits
``base_delay_ms * 2 ** (attempt - 1)`` (capped by ``max_delay_ms`` when set) and continues the
agent. The cycle ends with ``auto_retry_end``: at the ``message_end`` of the first good answer
(success), after ``max_retries`` failed attempts, when ``max_total_ms`` has passed since the first
failed attempt began (the series bound), or on ``abort_retry`` / ``abort()`` ("Retry cancelled").

:func:`retry_summary` gives the compaction and branch-summary requests the same policy with
Pi's ``summarization_retry_*`` events.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal, TypeVar

from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.errors import is_retryable_error
from pi_coder.ai.types import AssistantMessage
from pi_coder.core.events import (
    AutoRetryEnd,
    AutoRetryStart,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
)
from pi_coder.core.session_hooks import RunHook
from pi_coder.settings import RetrySettings

if TYPE_CHECKING:
    from pi_coder.core.host import SessionHost

__all__ = ["RETRY_CANCELLED", "AutoRetry", "retry_delay_ms", "retry_summary"]

RETRY_CANCELLED = "Retry cancelled"

T = TypeVar("T")


def retry_delay_ms(attempt: int, base_delay_ms: int, max_delay_ms: int = 0) -> int:
    """The wait before retry ``attempt`` (1-based): doubling from ``base_delay_ms``.

    Args:
        attempt: 1 for the first retry.
        base_delay_ms: The first delay.
        max_delay_ms: Upper bound; 0 means none.
    """
    delay: int = base_delay_ms * 2 ** max(0, attempt - 1)
    return min(delay, max_delay_ms) if max_delay_ms > 0 else delay


def _series_over(settings: RetrySettings, started_s: float, delay_ms: int) -> bool:
    """Whether a retry after ``delay_ms`` would start past the series bound."""
    if settings.max_total_ms <= 0:
        return False
    return time.time() + delay_ms / 1000 - started_s > settings.max_total_ms / 1000


def _bound_text(error: str, settings: RetrySettings, started_s: float) -> str:
    elapsed = time.time() - started_s
    return f"{error} (retries stopped after {elapsed:.0f} s: setting retry.max_total_ms = {settings.max_total_ms})"


class AutoRetry(RunHook):
    """The retry run hook; SessionHost registers one before the compaction hook."""

    def __init__(self) -> None:
        self.is_retrying = False
        self._attempt = 0
        self._series_started = 0.0
        """Wall-clock start (s) of the first failed attempt of the current cycle."""
        self._wake: asyncio.Event | None = None
        self._cancelled = False
        self._ended = asyncio.Event()
        self._ended.set()

    @property
    def attempt(self) -> int:
        """Retries made in the current cycle (0 when none is running)."""
        return self._attempt

    async def before_prompt(self, session: SessionHost) -> None:
        """A new prompt starts with a fresh attempt counter."""
        self._attempt = 0
        self.is_retrying = False
        self._cancelled = False

    def _decide(self, session: SessionHost, message: AssistantMessage | None) -> tuple[bool, str | None]:
        """(retry?, final error when a running cycle must stop) for a run that ended with ``message``."""
        settings = session.settings.retry
        if message is None or message.stop_reason != "error" or not settings.enabled:
            return False, None
        if not is_retryable_error(message):
            return False, None
        error = message.error_message or "Unknown error"
        if self._cancelled:
            return False, RETRY_CANCELLED
        if self._attempt >= settings.max_retries:
            return False, error
        started = self._series_started if self._attempt > 0 else message.timestamp / 1000
        delay = retry_delay_ms(self._attempt + 1, settings.base_delay_ms, settings.max_delay_ms)
        if _series_over(settings, started, delay):
            return False, _bound_text(error, settings, started)
        return True, None

    def will_retry(self, session: SessionHost, message: AssistantMessage | None) -> bool:
        """Whether :meth:`after_run` will retry a run that ended with ``message`` (``agent_end.willRetry``)."""
        return self._decide(session, message)[0]

    async def on_message_end(self, session: SessionHost, message: AssistantMessage) -> None:
        """A good answer during a cycle ends it with success (Pi emits this at ``message_end``)."""
        if self._attempt > 0 and message.stop_reason not in ("error", "aborted"):
            await self._end(session, success=True, final_error=None)

    async def after_run(self, session: SessionHost, message: AssistantMessage | None) -> bool:
        """Retry a transient error after the backoff delay; end the cycle on anything else."""
        retry, final_error = self._decide(session, message)
        if not retry:
            if self._attempt > 0:
                if final_error is None:
                    aborted = message is not None and message.stop_reason == "aborted"
                    failure = message.error_message if message is not None else None
                    final_error = RETRY_CANCELLED if aborted else failure or "Unknown error"
                await self._end(session, success=False, final_error=final_error)
            return False
        assert message is not None
        settings = session.settings.retry
        if self._attempt == 0:
            self._series_started = message.timestamp / 1000
        self._attempt += 1
        delay = retry_delay_ms(self._attempt, settings.base_delay_ms, settings.max_delay_ms)
        self.is_retrying = True
        self._ended.clear()
        wake = self._wake = asyncio.Event()
        try:
            await session.emit(
                AutoRetryStart(
                    attempt=self._attempt,
                    max_attempts=settings.max_retries,
                    delay_ms=delay,
                    error_message=message.error_message or "Unknown error",
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

    async def _end(self, session: SessionHost, *, success: bool, final_error: str | None) -> None:
        attempt = self._attempt
        self._attempt = 0
        self.is_retrying = False
        self._cancelled = False
        try:
            await session.emit(AutoRetryEnd(success=success, attempt=attempt, final_error=final_error))
        finally:
            self._ended.set()

    def abort(self) -> None:
        """Stop a pending wait and any further retry; the cycle ends with ``Retry cancelled``."""
        if self._attempt > 0 or self._wake is not None:
            self._cancelled = True
        if self._wake is not None:
            self._wake.set()

    async def abort_retry(self, timeout_s: float = 5.0) -> None:
        """:meth:`abort`, then wait (bounded) until the cycle's ``auto_retry_end`` was emitted.

        A retry attempt that is already streaming finishes; its result ends the cycle.
        """
        waiting = self._wake is not None
        self.abort()
        if waiting:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ended.wait(), timeout_s)


async def retry_summary(
    session: SessionHost,
    call: Callable[[], Awaitable[T]],
    *,
    source: Literal["compaction", "branchSummary"],
    reason: str | None,
    signal: AbortSignal | None,
    is_transient: Callable[[BaseException], str | None],
) -> T:
    """Run a summary request with the session's retry policy and Pi's summarisation events.

    Args:
        session: Supplies ``settings.retry`` and ``emit``.
        call: Makes one attempt.
        source: ``compaction`` or ``branchSummary`` (for ``summarization_retry_attempt_start``).
        reason: The compaction reason (``manual``, ``threshold``, ``overflow``); None for branches.
        signal: Aborting it ends a wait at once (the error of the last attempt is raised).
        is_transient: The error text when a failure is worth retrying, else None.

    Returns:
        The first successful attempt's result.
    """
    settings = session.settings.retry
    attempt = 0
    started = time.time()
    try:
        while True:
            try:
                return await call()
            except Exception as exc:
                error = is_transient(exc)
                if error is None or not settings.enabled or attempt >= settings.max_retries:
                    raise
                if signal is not None and signal.aborted:
                    raise
                delay = retry_delay_ms(attempt + 1, settings.base_delay_ms, settings.max_delay_ms)
                if _series_over(settings, started, delay):
                    raise
                attempt += 1
                await session.emit(
                    SummarizationRetryScheduled(
                        attempt=attempt, max_attempts=settings.max_retries, delay_ms=delay, error_message=error
                    )
                )
                if signal is None:
                    await asyncio.sleep(delay / 1000)
                else:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(signal.wait(), delay / 1000)
                    if signal.aborted:
                        raise
                await session.emit(SummarizationRetryAttemptStart(source=source, reason=reason))
    finally:
        if attempt:
            await session.emit(SummarizationRetryFinished())
