"""Tool declarations and system-message replay helpers.

The system prompt and the model-visible tools live in ``system`` messages of the transcript:
the first one is the base prompt and the initial tools, later ones are deltas. These helpers
replay them. Messages may be pydantic messages or plain dicts in Pi's JSON shape (as loaded
from a session file); any other role is ignored.

Section rendering (Pi leaves it open): the prompt text is the joined ``content`` of every
system message, followed by each current section's text in the order the sections were first
set, all separated by a blank line. A section replaced later keeps its position; a section
set to ``None`` is removed; a removed section that is set again goes to the end. Section
names are not rendered: a section's text carries its own heading if it wants one. A content
given as a list of text blocks counts as its texts joined with a newline.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pi_coder.ai.types import Context, SystemMessage, TextContent, Tool, ToolRef

__all__ = [
    "create_initial_system_message",
    "get_current_system_message",
    "get_current_system_prompt",
    "get_current_tools",
    "get_tool_state_changes",
    "normalize_context",
    "render_system_prompt",
    "to_tool_declaration",
]


def to_tool_declaration(tool: Any) -> Tool:
    """The model-visible declaration of ``tool``: name, description, parameters, constrained_sampling.

    Accepts a ``Tool``, anything with a ``declaration()`` method (an ``AgentTool``), or a dict
    in Pi's JSON shape. Everything else on the tool (label, execute, hooks, extra keys) is
    dropped, and ``parameters`` is a deep copy.

    Args:
        tool: The tool or declaration.

    Returns:
        A new ``Tool``.
    """
    if isinstance(tool, Mapping):
        name, description = tool["name"], tool.get("description", "")
        parameters = tool.get("parameters") or {}
        constrained = tool.get("constrainedSampling", tool.get("constrained_sampling"))
    else:
        if not isinstance(tool, Tool) and callable(getattr(tool, "declaration", None)):
            tool = tool.declaration()
        name, description = tool.name, tool.description
        parameters, constrained = tool.parameters, tool.constrained_sampling
    return Tool(
        name=name,
        description=description,
        parameters=copy.deepcopy(parameters),
        constrained_sampling=constrained,
    )


def _same_declaration(a: Tool, b: Tool) -> bool:
    return a.to_json_dict() == b.to_json_dict()


def _role(message: Any) -> Any:
    if isinstance(message, Mapping):
        return message.get("role")
    return getattr(message, "role", None)


def _field(message: Any, attr: str, key: str) -> Any:
    if isinstance(message, Mapping):
        return message.get(key)
    return getattr(message, attr, None)


def _as_tool(tool: Any) -> Tool:
    return tool if isinstance(tool, Tool) else to_tool_declaration(tool)


def _ref_name(ref: Any) -> str:
    name: str = ref["name"] if isinstance(ref, Mapping) else ref.name
    return name


def _system_messages(messages: Iterable[Any]) -> Iterable[Any]:
    return (m for m in messages if _role(m) == "system")


def get_current_tools(messages: Iterable[Any]) -> list[Tool]:
    """The tools declared by replaying every system message in order.

    Within one message ``tools_removed`` is applied before ``tools_added``. A tool added under
    an existing name keeps that name's position; a name deleted and then added again moves to
    the end. Non-system messages are ignored.

    Args:
        messages: A transcript (any roles).

    Returns:
        The current declarations, in declaration order.
    """
    current: dict[str, Tool] = {}
    for message in _system_messages(messages):
        for ref in _field(message, "tools_removed", "toolsRemoved") or ():
            current.pop(_ref_name(ref), None)
        for tool in _field(message, "tools_added", "toolsAdded") or ():
            decl = _as_tool(tool)
            current[decl.name] = decl
    return list(current.values())


def get_tool_state_changes(previous: Sequence[Any], current: Sequence[Any]) -> tuple[list[Tool], list[ToolRef]]:
    """The declaration changes that turn the ``previous`` tool set into ``current``.

    Args:
        previous: Tools declared so far (declarations or executable tools).
        current: The wanted tools.

    Returns:
        ``(tools_added, tools_removed)``: the tools of ``current`` (in its order) that are new
        or whose declaration differs, and the tools of ``previous`` (in its order) that are
        gone or differ, as ``ToolRef``. A changed definition appears in both lists.
    """
    before = {d.name: d for d in map(to_tool_declaration, previous)}
    after = {d.name: d for d in map(to_tool_declaration, current)}
    added = [d for name, d in after.items() if name not in before or not _same_declaration(before[name], d)]
    removed = [
        ToolRef(name=name)
        for name, d in before.items()
        if name not in after or not _same_declaration(after[name], d)
    ]
    return added, removed


def create_initial_system_message(system_prompt: str | None, tools: Sequence[Any] | None = None) -> SystemMessage | None:
    """The first system message of a transcript, or None when there is no prompt and no tool.

    Args:
        system_prompt: The base prompt.
        tools: Tools to declare (declarations or executable tools).

    Returns:
        ``SystemMessage(content=prompt or "", tools_added=..., timestamp=0)``; ``tools_added``
        is set only when there are tools.
    """
    if not system_prompt and not tools:
        return None
    return SystemMessage(
        content=system_prompt or "",
        tools_added=[to_tool_declaration(t) for t in tools] if tools else None,
        timestamp=0,
    )


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, Mapping):
            parts.append(block.get("text", ""))
        elif isinstance(block, TextContent):
            parts.append(block.text)
    return "\n".join(parts)


def get_current_system_message(messages: Iterable[Any]) -> SystemMessage | None:
    """Replay every system message into one.

    Non-empty contents are joined with a blank line, sections are patched in order (``None``
    removes one), tools come from ``get_current_tools`` and the timestamp is the first system
    message's.

    Args:
        messages: A transcript (any roles).

    Returns:
        The combined message, or None when the transcript has no system message.
    """
    systems = list(_system_messages(messages))
    if not systems:
        return None
    contents = [text for text in (_content_text(_field(m, "content", "content")) for m in systems) if text]
    sections: dict[str, str] = {}
    for message in systems:
        for name, value in (_field(message, "sections", "sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    tools = get_current_tools(systems)
    return SystemMessage(
        content="\n\n".join(contents),
        sections=sections or None,
        tools_added=tools or None,
        timestamp=_field(systems[0], "timestamp", "timestamp") or 0,
    )


def render_system_prompt(message: SystemMessage | None) -> str:
    """The prompt text of a (combined) system message: content, then section texts.

    Args:
        message: Usually the result of ``get_current_system_message``.

    Returns:
        The text, parts separated by a blank line; ``""`` for None.
    """
    if message is None:
        return ""
    parts: list[str | None] = [_content_text(message.content)]
    parts.extend((message.sections or {}).values())
    return "\n\n".join(p for p in parts if p)


def get_current_system_prompt(messages: Iterable[Any]) -> str:
    """The current system prompt text of a transcript (``""`` if it has none).

    Args:
        messages: A transcript (any roles).

    Returns:
        ``render_system_prompt(get_current_system_message(messages))``.
    """
    return render_system_prompt(get_current_system_message(messages))


def normalize_context(
    *,
    system_prompt: str | None = None,
    messages: Sequence[Any] = (),
    tools: Sequence[Any] | None = None,
) -> Context:
    """Turn a direct call's convenience form into a transcript-only ``Context``.

    Args:
        system_prompt: Optional base prompt.
        messages: The transcript.
        tools: Optional tools to declare.

    Returns:
        A context whose messages are ``messages`` with an initial system message prepended
        when a prompt or tools are given; otherwise the very same ``messages`` list (a tuple or
        other sequence is turned into a list).
    """
    initial = create_initial_system_message(system_prompt, tools)
    if initial is not None:
        return Context.model_construct(messages=[initial, *messages])
    return Context.model_construct(messages=messages if isinstance(messages, list) else list(messages))
