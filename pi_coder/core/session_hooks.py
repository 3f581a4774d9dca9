"""Extension points of AgentSession for auto-retry, auto-compaction and branch summaries.

A :class:`RunHook` is registered with ``AgentSession.add_run_hook(hook)``. For every
``prompt()`` (and ``continue_()``) the session:

1. awaits ``hook.before_prompt(session)`` for each hook (the agent is idle; a compaction check
   may replace the context here);
2. runs the agent;
3. after the run has settled, awaits ``hook.after_run(session, last_assistant)`` for each hook
   in order. A hook returning True asks the session to continue the agent
   (``agent.continue_()``) and the after-run round starts again; the remaining hooks are not
   called for that round. Typical use (auto-retry): emit ``AutoRetryStart``, call
   ``session.drop_last_assistant()``, sleep (abortable), return True.

``session.compact(instructions)`` (``/compact``) aborts the run and awaits
``hook.compact(session, instructions)`` of the first hook that has such a method.

``abort()`` on the session calls ``hook.abort()`` on every hook, so a hook must make a pending
sleep or summary request return promptly. ``is_retrying``/``is_compacting`` of the session are
true while any hook reports so.

Hooks see the session as a :class:`~pi_coder.core.host.SessionHost`: ``emit(event)``,
``drop_last_assistant()``, ``reload_context()`` (after appending a compaction entry to
``session.store``), ``agent``, ``store``, ``settings``, ``model``, ``models``, ``messages``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.types import AssistantMessage

if TYPE_CHECKING:
    from pi_coder.core.host import SessionHost

__all__ = ["BranchSummarizer", "BranchSummaryRequest", "BranchSummaryResult", "RunHook"]


class RunHook(Protocol):
    """What a run hook offers; subclasses inherit a no-op for every method.

    A Protocol, so a hook from a package below the core (``pi_coder.checkpoints``) can match it by
    shape without importing it.
    """

    is_retrying: bool = False
    is_compacting: bool = False

    async def before_prompt(self, session: SessionHost) -> None:
        """Called before each user prompt starts a run (not before continuations)."""
        return None

    async def after_run(self, session: SessionHost, message: AssistantMessage | None) -> bool:
        """Called after each run settles with the run's last assistant message.

        Returns:
            True to continue the agent (``agent.continue_()``) right away.
        """
        return False

    def abort(self) -> None:
        """The user aborted: stop waiting, cancel requests, do not ask to continue."""
        return None


@dataclass(slots=True, kw_only=True)
class BranchSummaryRequest:
    """What ``navigate_tree(..., summarize=True)`` asks the branch summarizer for."""

    old_leaf_id: str | None
    """The leaf being left (the summarised branch ends here)."""
    target_id: str
    """The entry the user selected."""
    instructions: str | None
    """Custom instructions ("Summarize with custom prompt"), if any."""
    signal: AbortSignal
    """Aborted by ``session.abort()`` (Esc while summarising)."""
    replace_instructions: bool = False
    """``instructions`` replace the default summary prompt instead of adding to it."""


@dataclass(slots=True, kw_only=True)
class BranchSummaryResult:
    summary: str
    details: Any = None
    """Stored in the ``branch_summary`` entry (``{"readFiles": [...], "modifiedFiles": [...]}``)."""
    from_hook: bool | None = None


BranchSummarizer: TypeAlias = Callable[
    ["SessionHost", BranchSummaryRequest], Awaitable[BranchSummaryResult | None]
]
"""Returns the summary, or None when cancelled (then navigation does not happen); an empty
summary (nothing to summarise) navigates without a ``branch_summary`` entry. Raising aborts
navigation with that error; the session is left unchanged."""
