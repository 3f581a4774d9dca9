"""The extension author's API (extensions §0.2): ``from pi_coder.extensions import ExtensionAPI``.

An extension is a module or package defining ``extension(pi: ExtensionAPI) -> None``. See
``docs/extensions.md``; ``pi_coder.extensions.builtin`` holds the first-party ones
(``-e builtin:<name>``). Names are imported on first use, so an extension pays only for what it
imports (start-up budget, §1.4).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentTool, AgentToolResult
    from pi_coder.ai.types import ImageContent, TextContent
    from pi_coder.core.extensions.api import ExtensionAPI
    from pi_coder.core.extensions.context import ExtensionCommandContext, ExtensionContext, UIProtocol
    from pi_coder.core.extensions.events import (
        BeforeAgentStartResult,
        CancelResult,
        CompactionResult,
        ContextResult,
        CustomMessageSpec,
        InputResult,
        MessageEndResult,
        ShellOutcome,
        ToolCallResult,
        ToolResultPatch,
        UserBashResult,
    )
    from pi_coder.core.extensions.exec import ExecResult
    from pi_coder.core.extensions.streams import text_stream
    from pi_coder.core.extensions.types import Completion, StaleContextError, ToolDefinition, ToolInfo

_WHERE = {
    "AgentTool": "pi_coder.agent.types",
    "AgentToolResult": "pi_coder.agent.types",
    "ImageContent": "pi_coder.ai.types",
    "TextContent": "pi_coder.ai.types",
    "ExtensionAPI": "pi_coder.core.extensions.api",
    "ExtensionCommandContext": "pi_coder.core.extensions.context",
    "ExtensionContext": "pi_coder.core.extensions.context",
    "UIProtocol": "pi_coder.core.extensions.context",
    "ExecResult": "pi_coder.core.extensions.exec",
    "text_stream": "pi_coder.core.extensions.streams",
    "Completion": "pi_coder.core.extensions.types",
    "StaleContextError": "pi_coder.core.extensions.types",
    "ToolDefinition": "pi_coder.core.extensions.types",
    "ToolInfo": "pi_coder.core.extensions.types",
    **{
        name: "pi_coder.core.extensions.events"
        for name in (
            "BeforeAgentStartResult",
            "CancelResult",
            "CompactionResult",
            "ContextResult",
            "CustomMessageSpec",
            "InputResult",
            "MessageEndResult",
            "ShellOutcome",
            "ToolCallResult",
            "ToolResultPatch",
            "UserBashResult",
        )
    },
}

__all__ = [
    "AgentTool",
    "AgentToolResult",
    "BeforeAgentStartResult",
    "CancelResult",
    "CompactionResult",
    "Completion",
    "ContextResult",
    "CustomMessageSpec",
    "ExecResult",
    "ExtensionAPI",
    "ExtensionCommandContext",
    "ExtensionContext",
    "ImageContent",
    "InputResult",
    "MessageEndResult",
    "ShellOutcome",
    "StaleContextError",
    "TextContent",
    "ToolCallResult",
    "ToolDefinition",
    "ToolInfo",
    "ToolResultPatch",
    "UIProtocol",
    "UserBashResult",
    "text_stream",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_coder.extensions' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
