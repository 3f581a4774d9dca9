"""System-message transcript helpers and tool reconciliation (spec 1.5 and 3.3).

The system prompt and the model-visible tool set live in ``system`` messages of the
transcript: replaying them in order gives the current prompt and tools. ``ToolLedger`` keeps
one run's replay incremental so reconciliation before every request costs O(new messages).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from pi_coder.agent.types import AgentContext, AgentMessage, AgentTool
from pi_coder.ai.types import SystemMessage, TextContent, Tool, ToolRef

__all__ = [
    "ToolLedger",
    "create_initial_system_message",
    "declare_tool_changes",
    "get_current_system_message",
    "get_current_system_prompt",
    "get_current_tools",
    "get_tool_state_changes",
    "to_tool_declaration",
]

ToolLike = AgentTool | Tool


@functools.cache
def _model_schema(parameters: type[BaseModel]) -> dict[str, Any]:
    return parameters.model_json_schema()


def _schema(tool: ToolLike) -> dict[str, Any]:
    parameters = tool.parameters
    if isinstance(parameters, type) and issubclass(parameters, BaseModel):
        return _model_schema(parameters)
    return parameters  # a Tool's JSON schema, or an AgentTool given a plain schema dict


def _decl_json(tool: ToolLike) -> dict[str, Any]:
    """The comparison form of ``toToolDeclaration(tool)`` (shares the schema; do not mutate)."""
    out = {"name": tool.name, "description": tool.description, "parameters": _schema(tool)}
    if tool.constrained_sampling is not None:
        out["constrainedSampling"] = tool.constrained_sampling
    return out


def to_tool_declaration(tool: ToolLike) -> Tool:
    """``toToolDeclaration``: name, description, a deep copy of the schema, constrained sampling."""
    return Tool(
        name=tool.name,
        description=tool.description,
        parameters=copy.deepcopy(_schema(tool)),
        constrained_sampling=tool.constrained_sampling,
    )


def _replay(state: dict[str, Any], message: AgentMessage, with_tools: bool = True) -> bool:
    """Apply one system message's tool delta to ``state`` (name -> Tool); True if it had one."""
    removed = getattr(message, "tools_removed", None)
    added = getattr(message, "tools_added", None)
    if not with_tools or not (removed or added):
        return False
    for ref in removed or ():
        state.pop(ref.name, None)
    for tool in added or ():
        state[tool.name] = tool
    return True


def get_current_tools(messages: Iterable[AgentMessage]) -> list[Tool]:
    """The tool declarations in effect after replaying every system message in order."""
    state: dict[str, Tool] = {}
    for message in messages:
        if getattr(message, "role", None) == "system":
            _replay(state, message)
    return list(state.values())


def get_tool_state_changes(
    previous: Sequence[ToolLike], current: Sequence[ToolLike]
) -> tuple[list[Tool], list[ToolRef]]:
    """``(toolsAdded, toolsRemoved)`` turning ``previous`` into ``current``.

    A changed definition appears in both lists.
    """
    return _diff({t.name: _decl_json(t) for t in previous}, current)


def _diff(previous: dict[str, dict[str, Any]], current: Sequence[ToolLike]) -> tuple[list[Tool], list[ToolRef]]:
    current_json = {t.name: _decl_json(t) for t in current}
    added = [to_tool_declaration(t) for t in current if previous.get(t.name) != current_json[t.name]]
    removed = [ToolRef(name=name) for name, decl in previous.items() if current_json.get(name) != decl]
    return added, removed


def create_initial_system_message(system_prompt: str | None, tools: Sequence[Tool]) -> SystemMessage | None:
    """The leading system message for a prompt and tool declarations, or None if both are empty."""
    if not system_prompt and not tools:
        return None
    return SystemMessage(content=system_prompt or "", tools_added=list(tools) or None, timestamp=0)


def _text(content: str | list[TextContent]) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content)


def get_current_system_message(messages: Iterable[AgentMessage]) -> SystemMessage | None:
    """Every system message replayed into one (content joined by blank lines, sections patched)."""
    texts: list[str] = []
    sections: dict[str, str] = {}
    tools: dict[str, Tool] = {}
    timestamp: int | None = None
    for message in messages:
        if getattr(message, "role", None) != "system":
            continue
        if timestamp is None:
            timestamp = message.timestamp
        text = _text(message.content)
        if text:
            texts.append(text)
        for name, value in (message.sections or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        _replay(tools, message)
    if timestamp is None:
        return None
    return SystemMessage(
        content="\n\n".join(texts),
        sections=sections or None,
        tools_added=list(tools.values()) or None,
        timestamp=timestamp,
    )


def get_current_system_prompt(messages: Iterable[AgentMessage]) -> str:
    """The rendered system prompt: the replayed content followed by the named sections."""
    message = get_current_system_message(messages)
    if message is None:
        return ""
    parts = [message.content] if message.content else []
    parts.extend((message.sections or {}).values())
    return "\n\n".join(parts)  # type: ignore[arg-type]


class ToolLedger:
    """One run's incremental replay of the transcript's tool declarations.

    It rescans from the start whenever the message list is a different object or was changed
    before the part already scanned, so it stays correct if a hook swaps the context.
    """

    __slots__ = ("_messages", "_scanned", "_last", "_state", "_version", "_tools_json", "_settled")

    def __init__(self) -> None:
        self._messages: list[AgentMessage] | None = None
        self._scanned = 0
        self._last: AgentMessage = None
        self._state: dict[str, Any] = {}
        self._version = 0
        self._tools_json: dict[int, tuple[AgentTool, dict[str, Any]]] = {}
        self._settled: tuple[Any, ...] | None = None

    def transcript_tools(self, messages: list[AgentMessage]) -> dict[str, Any]:
        """name -> Tool declared by ``messages`` (a live view; copy before changing it)."""
        scanned = self._scanned
        if (
            messages is not self._messages
            or len(messages) < scanned
            or (scanned and messages[scanned - 1] is not self._last)
        ):
            self._messages, self._state, scanned = messages, {}, 0
            self._version += 1
        for i in range(scanned, len(messages)):
            message = messages[i]
            if getattr(message, "role", None) == "system" and _replay(self._state, message):
                self._version += 1
        self._scanned = len(messages)
        self._last = messages[-1] if messages else None
        return self._state

    def changes(
        self, context: AgentContext, pending: list[AgentMessage] | None = None
    ) -> tuple[list[Tool], list[ToolRef]]:
        """Tool changes from the transcript (then ``pending``, if given) to ``context.tools``."""
        state = self.transcript_tools(context.messages)
        tools = context.tools or ()
        if pending is not None:
            state = dict(state)
            for message in pending:
                if getattr(message, "role", None) == "system":
                    _replay(state, message)
            return _diff({name: _decl_json(t) for name, t in state.items()}, tools)
        key = (self._version, tuple(tools))
        if key == self._settled:
            return [], []
        added, removed = _diff({name: self._json(t) for name, t in state.items()}, tools)
        if not added and not removed:
            self._settled = key
        return added, removed

    def _json(self, tool: Tool) -> dict[str, Any]:
        entry = self._tools_json.get(id(tool))
        if entry is None or entry[0] is not tool:
            entry = self._tools_json[id(tool)] = (tool, _decl_json(tool))  # type: ignore[assignment]
        return entry[1]


def declare_tool_changes(
    context: AgentContext, pending: list[AgentMessage], ledger: ToolLedger | None = None
) -> list[AgentMessage]:
    """Reconcile ``context.tools`` with the tools the transcript declares (spec 3.3).

    Returns ``pending`` itself when nothing changes. Otherwise the last pending system message
    is replaced by a copy carrying the changes, or, with no pending system message, a new
    ``system`` message carrying them is inserted before the first non-system message.
    """
    ledger = ledger or ToolLedger()
    last = -1
    for i, message in enumerate(pending):
        if getattr(message, "role", None) == "system":
            last = i
    if last < 0:
        added, removed = ledger.changes(context)
        if not added and not removed:
            return pending
        declared = SystemMessage(content="", tools_added=added or None, tools_removed=removed or None)
        at = next((i for i, m in enumerate(pending) if getattr(m, "role", None) != "system"), len(pending))
        return [*pending[:at], declared, *pending[at:]]
    message = pending[last]
    baseline = [*pending[:last], *pending[last + 1 :]]
    added, removed = ledger.changes(context, baseline)
    if not added and not removed and not message.tools_added and not message.tools_removed:
        return pending
    out = list(pending)
    out[last] = message.model_copy(update={"tools_added": added or None, "tools_removed": removed or None})
    return out
