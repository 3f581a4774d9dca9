"""Tool declarations and system-message replay helpers.

The system prompt and the model-visible tools live in ``system`` messages of the transcript:
the first one is the base prompt and the initial tools, later ones are deltas. These helpers
replay them. Messages are parsed objects (JSON is parsed where it enters,
docs/architecture.md#types); anything that is not a ``SystemMessage`` is ignored.

Section rendering (Pi leaves it open): the prompt text is the joined ``content`` of every
system message, followed by each current section's text in the order the sections were first
set, all separated by a blank line. A section replaced later keeps its position; a section
set to ``None`` is removed; a removed section that is set again goes to the end. Section
names are not rendered: a section's text carries its own heading if it wants one. A content
given as a list of text blocks counts as its texts joined with a newline.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeAlias

from pi_coder.ai.types import Context, Message, SystemMessage, TextContent, Tool, ToolRef

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


class Declares(Protocol):
    """An executable tool (an ``AgentTool``): it knows its model-visible declaration."""

    def declaration(self) -> Tool: ...


ToolLike: TypeAlias = Tool | Declares
"""A declaration, or an executable tool that has one."""


def to_tool_declaration(tool: ToolLike) -> Tool:
    """The model-visible declaration of ``tool``: name, description, parameters, constrained_sampling.

    Accepts a ``Tool`` or an executable tool with a ``declaration()`` method (an ``AgentTool``).
    Everything else on the tool (label, execute, hooks, extra keys) is dropped, and
    ``parameters`` is a deep copy.

    Args:
        tool: The tool or declaration.

    Returns:
        A new ``Tool``.
    """
    decl = tool if isinstance(tool, Tool) else tool.declaration()
    return Tool(
        name=decl.name,
        description=decl.description,
        parameters=copy.deepcopy(decl.parameters),
        constrained_sampling=decl.constrained_sampling,
    )


def _same_declaration(a: Tool, b: Tool) -> bool:
    return a.to_json_dict() == b.to_json_dict()


def _system_messages(messages: Iterable[object]) -> list[SystemMessage]:
    return [m for m in messages if isinstance(m, SystemMessage)]


def get_current_tools(messages: Iterable[object]) -> list[Tool]:
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
        for ref in message.tools_removed or ():
            current.pop(ref.name, None)
        for tool in message.tools_added or ():
            current[tool.name] = tool
    return list(current.values())


def get_tool_state_changes(
    previous: Sequence[ToolLike], current: Sequence[ToolLike]
) -> tuple[list[Tool], list[ToolRef]]:
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


def create_initial_system_message(
    system_prompt: str | None, tools: Sequence[ToolLike] | None = None
) -> SystemMessage | None:
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


def _content_text(content: str | list[TextContent]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block.text for block in content)


def get_current_system_message(messages: Iterable[object]) -> SystemMessage | None:
    """Replay every system message into one.

    Non-empty contents are joined with a blank line, sections are patched in order (``None``
    removes one), tools come from ``get_current_tools`` and the timestamp is the first system
    message's.

    Args:
        messages: A transcript (any roles).

    Returns:
        The combined message, or None when the transcript has no system message.
    """
    systems = _system_messages(messages)
    if not systems:
        return None
    contents = [text for text in (_content_text(m.content) for m in systems) if text]
    sections: dict[str, str] = {}
    for message in systems:
        for name, value in (message.sections or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    tools = get_current_tools(systems)
    return SystemMessage(
        content="\n\n".join(contents),
        sections=sections or None,
        tools_added=tools or None,
        timestamp=systems[0].timestamp or 0,
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


def get_current_system_prompt(messages: Iterable[object]) -> str:
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
    messages: Sequence[Message] = (),
    tools: Sequence[ToolLike] | None = None,
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
