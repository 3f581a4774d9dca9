"""Run budgets: turn and USD limits checked between turns, never inside a tool (``docs/subagents.md``).

A :class:`Budget` counts the turns and the cost of one agent; a child's budget has its parent's
as ``parent``, so every child turn also counts for the parent and the whole run. ``watch`` wraps
an agent's ``finish_turn`` hook: after each turn the turn is counted, and when a limit is reached
while the agent would go on, the run ends there (the tool results are already in the session, so
it stays valid) and ``Budget.stopped`` says which limit and how much was spent. Costs are the
provider's ``usage.cost`` (the model's prices, as ``--list-models`` shows them).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.agent import Agent
    from pi_coder.core.agent_session import AgentSession

__all__ = ["Budget", "Spend", "limit_stop", "run_budget", "set_run_budget", "watch"]


@dataclass(slots=True)
class Spend:
    """Turns, tokens and USD spent so far."""

    turns: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def add(self, message: Any) -> None:
        self.turns += 1
        usage = getattr(message, "usage", None)
        if usage is None:
            return
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.cost += usage.cost.total

    def to_json(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "totalTokens": self.tokens,
            "cost": round(self.cost, 6),
        }


@dataclass(slots=True)
class Budget:
    """Limits of one agent (None: no limit); ``label`` names them in the stop message."""

    label: str
    max_turns: int | None = None
    max_usd: float | None = None
    turn_flag: str = "max_turns"
    usd_flag: str = "max_budget_usd"
    parent: Budget | None = None
    spent: Spend = field(default_factory=Spend)
    stopped: str | None = None
    """Set when a limit (this one's or an ancestor's) ended the run: the one-line reason."""

    def child(self, label: str, max_turns: int | None, max_usd: float | None) -> Budget:
        return Budget(label, max_turns, max_usd, parent=self)

    def count(self, message: Any) -> None:
        budget: Budget | None = self
        while budget is not None:
            budget.spent.add(message)
            budget = budget.parent

    def exceeded(self) -> str | None:
        """The first limit reached, here or above, as a sentence; None while every one holds."""
        budget: Budget | None = self
        while budget is not None:
            spent = budget.spent
            if budget.max_turns is not None and spent.turns >= budget.max_turns:
                return (
                    f"{budget.label}: turn limit reached ({budget.turn_flag} {budget.max_turns}; "
                    f"{spent.turns} turns, ${spent.cost:.4f} spent)"
                )
            if budget.max_usd is not None and spent.cost >= budget.max_usd:
                return (
                    f"{budget.label}: budget reached ({budget.usd_flag} {budget.max_usd:g}; "
                    f"${spent.cost:.4f} spent in {spent.turns} turns)"
                )
            budget = budget.parent
        return None


def watch(agent: Agent, budget: Budget, on_stop: Callable[[str], Any] | None = None) -> None:
    """Count ``agent``'s turns into ``budget`` and end its run when a limit is reached.

    Keeps a ``finish_turn`` hook already set (it runs first; its "end" wins).
    """
    inner = agent.finish_turn

    async def finish_turn(turn: Any, signal: Any) -> Any:
        decision = None
        if inner is not None:
            decision = inner(turn, signal)
            if inspect.isawaitable(decision):
                decision = await decision
        budget.count(turn.message)
        if decision == "end" or not turn.tool_results:
            return decision  # the run ends here anyway: not a limit's doing
        reason = budget.exceeded()
        if reason is None:
            return decision
        budget.stopped = reason
        if on_stop is not None:
            result = on_stop(reason)
            if inspect.isawaitable(result):
                await result
        return "end"

    agent.finish_turn = finish_turn


_RUN: weakref.WeakKeyDictionary[AgentSession, Budget] = weakref.WeakKeyDictionary()


def set_run_budget(session: AgentSession, max_turns: int | None, max_usd: float | None) -> Budget:
    """The run-wide budget of ``session`` (``--max-turns``, ``--max-budget-usd``), watched from now on."""
    from pi_coder.core.events import Notice

    budget = Budget("the run", max_turns, max_usd, turn_flag="--max-turns", usd_flag="--max-budget-usd")
    _RUN[session] = budget

    def stop(reason: str) -> Any:
        return session.emit(Notice(level="error", text=f"Stopped: {reason}"))

    watch(session.agent, budget, stop)
    return budget


def run_budget(session: AgentSession) -> Budget:
    """The run-wide budget of ``session``; an unlimited one (that still counts) if none was set."""
    budget = _RUN.get(session)
    if budget is None:
        budget = set_run_budget(session, None, None)
    return budget


def limit_stop(session: AgentSession) -> str | None:
    """Why a run limit stopped ``session`` (None: it did not)."""
    budget = _RUN.get(session)
    return None if budget is None else budget.stopped
