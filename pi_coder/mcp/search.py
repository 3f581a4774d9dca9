"""``tool_search`` (docs/mcp.md#tools): finds deferred MCP tools by name and description and declares them.

Active while some enabled server may have ``deferred`` tools (from start-up: a search first
waits for such servers still connecting). A search ranks those tools by
the query's words (a word in the tool's name counts more than one in its description, a whole
phrase match most), declares the best ``limit`` for the model's next call and says which.
Declared tools stay active for the rest of the process (the transcript records the change as a
``toolsAdded`` system message, like any tool change).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentTool

__all__ = ["TOOL_NAME", "rank", "search_tool"]

TOOL_NAME = "tool_search"

DESCRIPTION = (
    "Search the tools that are not declared yet (deferred MCP tools) by name and description. "
    "The matches are declared for your next call; then call them like any tool."
)


class Host(Protocol):
    async def before_search(self) -> None: ...

    def deferred_tools(self) -> list[AgentTool]: ...

    def declare(self, names: list[str]) -> None: ...


class ToolSearchParams(BaseModel):
    query: str = Field(description="Words to look for in tool names and descriptions, e.g. 'create issue'")
    limit: int = Field(default=5, ge=1, le=50, description="At most this many tools (default 5)")


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def rank(tools: list[AgentTool], query: str, limit: int) -> list[AgentTool]:
    """The best ``limit`` of ``tools`` for ``query``; those matching none of its words are left out."""
    words = _words(query)
    phrase = " ".join(words)
    scored: list[tuple[float, str, AgentTool]] = []
    for tool in tools:
        name_words = set(_words(tool.name) + _words(tool.label))
        description = " ".join(_words(tool.description))
        score = 0.0
        for word in words:
            if word in name_words:
                score += 3
            elif any(w.startswith(word) for w in name_words):
                score += 2
            if re.search(rf"\b{re.escape(word)}", description):
                score += 1
        if score and len(words) > 1 and phrase in " ".join(_words(tool.name)) + " " + description:
            score += 2
        if score:
            scored.append((-score, tool.name, tool))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [tool for _, _, tool in scored[:limit]]


def search_tool(host: Host) -> AgentTool:
    """The ``tool_search`` agent tool over ``host``'s deferred tools."""
    from pi_coder.agent.types import AgentTool, AgentToolResult
    from pi_coder.ai.types import TextContent

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        await host.before_search()
        found = rank(host.deferred_tools(), params.query, params.limit)
        if not found:
            text = f'No undeclared tool matches "{params.query}".'
        else:
            host.declare([t.name for t in found])
            lines = [f"- {t.name}: {t.description.splitlines()[0] if t.description else t.label}" for t in found]
            text = "Declared for your next call:\n" + "\n".join(lines)
        return AgentToolResult(content=[TextContent(text=text)], details={"declared": [t.name for t in found]})

    return AgentTool(
        name=TOOL_NAME,
        label="tool search",
        description=DESCRIPTION,
        parameters=ToolSearchParams,
        execute=execute,
    )
