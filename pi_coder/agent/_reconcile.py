"""System-message tool reconciliation.

Before every request the loop compares the executable tools (``context.tools``) with the tools
the transcript's system messages declare, and announces any difference in a system message.
``ToolLedger`` keeps one run's replay incremental, so this costs O(new messages) per turn
instead of a replay of the whole transcript.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_coder.agent.types import AgentContext, AgentMessage, AgentTool, parameters_schema
from pi_coder.ai.context import to_tool_declaration
from pi_coder.ai.types import SystemMessage, Tool, ToolRef
from pi_coder.json_types import JsonObject

__all__ = ["ToolLedger", "declare_tool_changes"]


def _decl_json(tool: AgentTool | Tool) -> JsonObject:
    """The comparison form of a tool's declaration (shares the schema: do not mutate)."""
    parameters = tool.parameters
    out: JsonObject = {
        "name": tool.name,
        "description": tool.description,
        "parameters": parameters if isinstance(parameters, dict) else parameters_schema(parameters),
    }
    if tool.constrained_sampling is not None:
        out["constrainedSampling"] = tool.constrained_sampling
    return out


def _replay(state: dict[str, Tool], message: SystemMessage) -> bool:
    """Apply one system message's tool delta to ``state``; True if it had one."""
    removed = message.tools_removed
    added = message.tools_added
    if not (removed or added):
        return False
    for ref in removed or ():
        state.pop(ref.name, None)
    for tool in added or ():
        state[tool.name] = tool
    return True


def _diff(
    previous: dict[str, JsonObject], current: Sequence[AgentTool]
) -> tuple[list[Tool], list[ToolRef]]:
    current_json = {t.name: _decl_json(t) for t in current}
    added = [to_tool_declaration(t) for t in current if previous.get(t.name) != current_json[t.name]]
    removed = [ToolRef(name=name) for name, decl in previous.items() if current_json.get(name) != decl]
    return added, removed


class ToolLedger:
    """One run's incremental replay of the tools its transcript declares.

    It starts over whenever the message list is another object or was changed before the part
    already read, so it stays right when a hook swaps the context.
    """

    __slots__ = ("_messages", "_scanned", "_last", "_state", "_json", "_version", "_settled")

    def __init__(self) -> None:
        self._messages: list[AgentMessage] | None = None
        self._scanned = 0
        self._last: AgentMessage | None = None
        self._state: dict[str, Tool] = {}
        self._json: dict[str, JsonObject] = {}
        self._version = 0
        self._settled: tuple[int, tuple[AgentTool, ...]] | None = None

    def _read(self, messages: list[AgentMessage]) -> None:
        scanned = self._scanned
        if (
            messages is not self._messages
            or len(messages) < scanned
            or (scanned and messages[scanned - 1] is not self._last)
        ):
            self._messages, self._state, scanned = messages, {}, 0
            self._version += 1
        changed = False
        for i in range(scanned, len(messages)):
            message = messages[i]
            if isinstance(message, SystemMessage) and _replay(self._state, message):
                changed = True
        if changed:
            self._version += 1
        if changed or not scanned:
            self._json = {name: _decl_json(tool) for name, tool in self._state.items()}
        self._scanned = len(messages)
        self._last = messages[-1] if messages else None

    def changes(
        self, context: AgentContext, pending: list[AgentMessage] | None = None
    ) -> tuple[list[Tool], list[ToolRef]]:
        """Changes from the declared tools (transcript, then ``pending`` if given) to ``context.tools``."""
        self._read(context.messages)
        tools = context.tools or ()
        if pending is not None:
            state = dict(self._state)
            for message in pending:
                if isinstance(message, SystemMessage):
                    _replay(state, message)
            return _diff({name: _decl_json(t) for name, t in state.items()}, tools)
        key = (self._version, tuple(tools))
        if key == self._settled:
            return [], []
        added, removed = _diff(self._json, tools)
        if not added and not removed:
            self._settled = key
        return added, removed


def declare_tool_changes(
    context: AgentContext, pending: list[AgentMessage], ledger: ToolLedger | None = None
) -> list[AgentMessage]:
    """Reconcile ``context.tools`` with the tools the transcript declares.

    Returns ``pending`` itself when nothing changes. Otherwise the last pending system message
    is replaced by a copy carrying the changes, or, with no pending system message, a new
    ``system`` message carrying them is inserted before the first non-system message.
    """
    ledger = ledger or ToolLedger()
    last = -1
    for i, message in enumerate(pending):
        if isinstance(message, SystemMessage):
            last = i
    if last < 0:
        added, removed = ledger.changes(context)
        if not added and not removed:
            return pending
        declared = SystemMessage(content="", tools_added=added or None, tools_removed=removed or None)
        at = next((i for i, m in enumerate(pending) if m.role != "system"), len(pending))
        return [*pending[:at], declared, *pending[at:]]
    message = pending[last]
    assert isinstance(message, SystemMessage)
    added, removed = ledger.changes(context, [*pending[:last], *pending[last + 1 :]])
    if not added and not removed and not message.tools_added and not message.tools_removed:
        return pending
    out = list(pending)
    out[last] = message.model_copy(update={"tools_added": added or None, "tools_removed": removed or None})
    return out
