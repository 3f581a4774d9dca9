"""Automatic and manual compaction, and branch summaries, for SessionHost.

:class:`AutoCompaction` is a run hook (see :mod:`pi_coder.core.session_hooks`):

- **threshold**: before each prompt and after each run, when the context passes
  ``window - reserve_tokens``, the session is compacted (no retry; queued messages still go);
- **overflow**: a run that failed with a context overflow of the current model is compacted and
  continued once, without the failed message; a second overflow for the same request stops with
  :data:`OVERFLOW_RECOVERY_FAILED`;
- **manual**: ``session.compact(instructions)``.

Guarantees on top of Pi: ``compaction.enabled = false`` stops every automatic path (overflow
included); at most one automatic compaction per user request (the prompt, or a queued
steering/follow-up message), so compaction can never loop; a compaction that fails or is
cancelled appends nothing and leaves the context as it was; a threshold check that finds only
recent history (nothing to summarise) is skipped without events. Summaries use the session's model
through the agent's stream function.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pi_coder.ai.abort import AbortController
from pi_coder.ai.errors import is_context_overflow, is_retryable_text
from pi_coder.ai.types import AssistantMessage
from pi_coder.core.events import AutoCompactionEnd, AutoCompactionStart, Notice
from pi_coder.core.retry import retry_summary
from pi_coder.core.session_hooks import BranchSummaryRequest, BranchSummaryResult, RunHook
from pi_coder.session.branch_summary import collect_branch_entries, generate_branch_summary
from pi_coder.session.compaction import (
    CompactionCancelled,
    CompactionError,
    CompactionPreparation,
    CompactionResult,
    compact,
    nothing_to_compact_reason,
    prepare_compaction,
)
from pi_coder.session.entries import CompactionEntry, CustomMessageEntry, MessageEntry
from pi_coder.session.tokens import estimate_context_tokens, should_compact, usage_context_tokens

if TYPE_CHECKING:
    from pi_coder.core.host import SessionHost

__all__ = ["OVERFLOW_DISABLED", "OVERFLOW_RECOVERY_FAILED", "AutoCompaction"]

OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
OVERFLOW_DISABLED = (
    "The conversation no longer fits the model's context window and auto-compaction is disabled. "
    "Use /compact, start a new session, or switch to a larger-context model."
)


def _transient(exc: BaseException) -> str | None:
    """The provider error inside a failed summary when it is worth retrying (same classifier as turns)."""
    if isinstance(exc, CompactionCancelled) or not isinstance(exc, CompactionError):
        return None
    text = str(exc).removeprefix("Summarization failed: ")
    return text if is_retryable_text(text) else None


def _reasoning(session: SessionHost) -> str | None:
    level = session.thinking_level
    return None if not level or level == "off" else level


def _after_latest_compaction(session: SessionHost, message: Any) -> bool:
    """Whether ``message`` was recorded after the branch's latest compaction (or there is none).

    Compared by entry order, not timestamps: kept messages are older than the compaction
    entry, and a reply can share its millisecond with the compaction.
    """
    for entry in reversed(session.store.get_branch()):
        kind = type(entry)
        if kind is CompactionEntry:
            return False
        if kind is MessageEntry and entry.role == "assistant" and entry.message is message:  # type: ignore[union-attr]
            return True
    return True


class AutoCompaction(RunHook):
    """The compaction run hook, with ``compact`` (``/compact``) and ``summarize_branch`` (``/tree``)."""

    def __init__(self) -> None:
        self._controller: AbortController | None = None
        self._auto_done = False
        """An automatic compaction already ran for the current request."""
        self._expect_prompt = False

    @property
    def is_compacting(self) -> bool:  # type: ignore[override]
        return self._controller is not None

    # ------------------------------------------------------------------ run hook

    def on_event(self, event: Any) -> None:
        """Session listener: a queued user message delivered mid-run is a new request."""
        if event.type != "message_start" or event.message.role != "user":
            return
        if self._expect_prompt:
            self._expect_prompt = False
        else:
            self._auto_done = False

    async def before_prompt(self, session: SessionHost) -> None:
        """New request: compact first when the context is already past the threshold."""
        self._auto_done = False
        self._expect_prompt = True
        last = next((m for m in reversed(session.messages) if isinstance(m, AssistantMessage)), None)
        if last is not None:
            await self._check(session, last, before_prompt=True)

    async def after_run(self, session: SessionHost, message: AssistantMessage | None) -> bool:
        """Compact on overflow (then continue) or past the threshold (then stop)."""
        if message is None:
            return False
        return await self._check(session, message, before_prompt=False)

    def abort(self) -> None:
        """Cancel a running compaction; nothing is appended."""
        if self._controller is not None:
            self._controller.abort()

    async def _check(self, session: SessionHost, message: AssistantMessage, *, before_prompt: bool) -> bool:
        model = session.model
        settings = session.settings.compaction
        if model is None or (message.stop_reason == "aborted" and not before_prompt):
            return False
        if not _after_latest_compaction(session, message):
            return False
        same_model = message.provider == model.provider and message.model == model.id
        if same_model and is_context_overflow(message, model.context_window):
            if not settings.enabled:
                if not before_prompt:
                    await session.emit(Notice(level="warning", text=OVERFLOW_DISABLED))
                return False
            if self._auto_done:
                await session.emit(Notice(level="error", text=OVERFLOW_RECOVERY_FAILED))
                return False
            self._auto_done = True
            # A silent overflow (a reply whose usage exceeds the window) has nothing to retry.
            retry = not before_prompt and message.stop_reason == "error"
            if not await self._run_auto(session, "overflow", will_retry=retry) or not retry:
                return False
            messages = session.messages
            if messages and isinstance(messages[-1], AssistantMessage) and messages[-1].stop_reason == "error":
                session.drop_last_assistant()
            return True
        if not settings.enabled or self._auto_done:
            return False
        if message.stop_reason in ("error", "aborted"):
            estimate = estimate_context_tokens(session.messages)
            if estimate.last_usage_index is None:
                return False
            tokens = estimate.tokens
        else:
            tokens = usage_context_tokens(message.usage)
        if should_compact(tokens, model.context_window, settings.reserve_tokens):
            self._auto_done = True
            await self._run_auto(session, "threshold", will_retry=False)
        return False

    async def _run_auto(self, session: SessionHost, reason: str, *, will_retry: bool) -> bool:
        if session.model is None or self._controller is not None:
            return False
        preparation = self._prepare(session)
        if preparation is None and reason == "threshold":
            return False  # only recent history left: nothing to do, and nothing worth reporting
        await session.emit(AutoCompactionStart(reason=reason))  # type: ignore[arg-type]
        try:
            result = await self._compact(session, None, preparation, reason=reason)
        except CompactionCancelled:
            await session.emit(AutoCompactionEnd(aborted=True))
            return False
        except CompactionError as exc:
            prefix = "Context overflow recovery failed" if reason == "overflow" else "Auto-compaction failed"
            await session.emit(AutoCompactionEnd(error_message=f"{prefix}: {exc}"))
            return False
        await session.emit(AutoCompactionEnd(result=result, will_retry=will_retry))
        return True

    # ------------------------------------------------------------------ compaction

    async def compact(self, session: SessionHost, instructions: str | None = None) -> CompactionResult:
        """Compact now (``/compact [instructions]``), whatever ``compaction.enabled`` says.

        Emits ``auto_compaction_start``/``end`` with reason ``manual``.

        Raises:
            CompactionCancelled: Aborted.
            CompactionError: Nothing to compact, already compacted, the summary failed or
                would not make the context smaller.
        """
        await session.emit(AutoCompactionStart(reason="manual"))
        try:
            result = await self._compact(session, instructions, reason="manual")
        except CompactionCancelled:
            await session.emit(AutoCompactionEnd(aborted=True))
            raise
        except CompactionError as exc:
            await session.emit(AutoCompactionEnd(error_message=str(exc)))
            raise
        await session.emit(AutoCompactionEnd(result=result))
        return result

    @staticmethod
    def _prepare(session: SessionHost) -> CompactionPreparation | None:
        keep = session.settings.compaction.keep_recent_tokens
        return prepare_compaction(session.store.get_branch(), keep_recent_tokens=keep)

    async def _compact(
        self,
        session: SessionHost,
        instructions: str | None,
        preparation: CompactionPreparation | None = None,
        *,
        reason: str = "manual",
    ) -> CompactionResult:
        model = session.model
        if model is None:
            raise CompactionError("No model available to write the summary")
        if self._controller is not None:
            raise CompactionError("A compaction is already running")
        store = session.store
        settings = session.settings.compaction
        if preparation is None:
            preparation = self._prepare(session)
            if preparation is None:
                raise CompactionError(nothing_to_compact_reason(store.get_branch()))
        controller = self._controller = AbortController()
        leaf = store.leaf_id
        ready = preparation
        hooks: Any = getattr(session, "extensions", None)
        if hooks is not None:  # session_before_compact: cancel, or a summary of the extension's own
            try:
                decision = await hooks.before_compact(ready, instructions, reason, controller.signal)
            finally:
                self._controller = None
            if decision == "cancel":
                await hooks.compact_failed(reason, None, aborted=True, from_extension=True)
                raise CompactionCancelled("Compaction cancelled by an extension")
            if decision is not None:
                result = CompactionResult(
                    summary=str(decision.summary),
                    first_kept_entry_id=decision.first_kept_entry_id or ready.first_kept_entry_id,
                    tokens_before=decision.tokens_before if decision.tokens_before is not None else ready.tokens_before,
                    details=decision.details if decision.details is not None else {},
                )
                entry_id = store.append_compaction(
                    result.summary,
                    result.first_kept_entry_id,
                    result.tokens_before,
                    decision.details,
                    from_hook=True,
                    usage=_usage_json(decision.usage),
                )
                session.reload_context()
                await hooks.compacted(store.get_entry(entry_id), reason, from_extension=True)
                return result
            controller = self._controller = AbortController()
        try:
            signal = controller.signal

            def retried(call: Callable[[], Awaitable[str]]) -> Awaitable[str]:
                # Each summary request retries on its own (Pi's summarization_retry_* per request).
                return retry_summary(
                    session, call, source="compaction", reason=reason, signal=signal, is_transient=_transient
                )

            result = await compact(
                ready,
                model=model,
                stream_fn=session.agent.stream_fn,
                reserve_tokens=settings.reserve_tokens,
                custom_instructions=instructions,
                signal=signal,
                reasoning=_reasoning(session),
                retry=retried,
            )
        except CompactionError as exc:
            if hooks is not None:
                await hooks.compact_failed(reason, str(exc), aborted=False, from_extension=False)
            raise
        finally:
            self._controller = None
        if controller.signal.aborted:
            if hooks is not None:
                await hooks.compact_failed(reason, None, aborted=True, from_extension=False)
            raise CompactionCancelled("Compaction cancelled")
        if session.store is not store or store.leaf_id != leaf:
            raise CompactionError("The session changed while the summary was written; nothing was changed")
        entry_id = store.append_compaction(result.summary, result.first_kept_entry_id, result.tokens_before, result.details)
        session.reload_context()
        if hooks is not None:
            await hooks.compacted(store.get_entry(entry_id), reason, from_extension=False)
        return result

    # ------------------------------------------------------------------ branch summaries

    async def summarize_branch(self, session: SessionHost, request: BranchSummaryRequest) -> BranchSummaryResult | None:
        """Summarise the branch left by ``/tree`` navigation (a ``BranchSummarizer``).

        Returns:
            The summary; an empty one when the branch holds no messages (navigation then
            appends no entry); None when cancelled.

        Raises:
            CompactionError: No model, or the summary request failed.
        """
        model = session.model
        if model is None:
            raise CompactionError("No model available to summarize the branch")
        store = session.store
        target = store.get_entry(request.target_id)
        if target is None:
            raise KeyError(f"Entry {request.target_id} not found")
        user_like = isinstance(target, CustomMessageEntry) or (
            isinstance(target, MessageEntry) and target.role == "user"
        )
        new_leaf = target.parent_id if user_like else target.id
        branch = collect_branch_entries(store, request.old_leaf_id, new_leaf)
        try:
            summary = await retry_summary(
                session,
                lambda: generate_branch_summary(
                    branch.entries,
                    model=model,
                    stream_fn=session.agent.stream_fn,
                    reserve_tokens=session.settings.branch_summary.reserve_tokens,
                    custom_instructions=request.instructions,
                    replace_instructions=request.replace_instructions,
                    signal=request.signal,
                    reasoning=_reasoning(session),
                ),
                source="branchSummary",
                reason=None,
                signal=request.signal,
                is_transient=_transient,
            )
        except CompactionCancelled:
            return None
        if summary.details is None:
            return BranchSummaryResult(summary="")
        return BranchSummaryResult(summary=summary.summary, details=summary.details)


def _usage_json(usage: Any) -> dict[str, Any] | None:
    """An extension's ``CompactionResult.usage`` (a ``Usage`` or its JSON dict) as stored JSON."""
    if usage is None:
        return None
    if isinstance(usage, dict):
        return dict(usage)
    from pi_coder.ai.types import Usage

    return usage.to_json_dict() if isinstance(usage, Usage) else None
