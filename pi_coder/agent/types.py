"""Agent-core types: tools, tool results, contexts and loop configuration (spec 1.7-1.9)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel

from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.types import ImageContent, TextContent, Tool, Usage

__all__ = [
    "AgentTool",
    "AgentToolResult",
    "ToolExecutionMode",
    "ToolUpdateCallback",
]

ToolExecutionMode: TypeAlias = Literal["sequential", "parallel"]


@dataclass(slots=True, kw_only=True)
class AgentToolResult:
    """What a tool's ``execute`` returns (and what ``on_update`` receives while it runs)."""

    content: list[TextContent | ImageContent] = field(default_factory=list)
    details: Any = None
    usage: Usage | None = None
    terminate: bool | None = None
    """Ask the loop to skip the automatic follow-up request (batch-wide "every" rule)."""


ToolUpdateCallback: TypeAlias = Callable[[AgentToolResult], Any]
ToolExecute: TypeAlias = Callable[
    [str, Any, AbortSignal | None, ToolUpdateCallback | None], Awaitable[AgentToolResult]
]


@dataclass(slots=True, kw_only=True)
class AgentTool:
    """An executable tool: a model-visible declaration plus ``execute``.

    ``parameters`` is a pydantic model class; its JSON schema is what the model sees and it
    validates (with coercion) the model's arguments before ``execute`` runs. ``execute``
    raises on failure; the loop turns the exception message into an error result.
    """

    name: str
    label: str
    description: str
    parameters: type[BaseModel]
    execute: ToolExecute
    execution_mode: ToolExecutionMode | None = None
    prepare_arguments: Callable[[Any], Any] | None = None
    constrained_sampling: bool | None = None

    def json_schema(self) -> dict[str, Any]:
        return self.parameters.model_json_schema()

    def declaration(self) -> Tool:
        """The model-visible declaration (``toToolDeclaration``): no label, execute or hooks."""
        return Tool(
            name=self.name,
            description=self.description,
            parameters=self.json_schema(),
            constrained_sampling=self.constrained_sampling,
        )
