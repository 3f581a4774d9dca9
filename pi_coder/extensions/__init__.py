"""The extension author's API (extensions §0.2): ``from pi_coder.extensions import ExtensionAPI``.

An extension is a module or package defining ``extension(pi: ExtensionAPI) -> None``. See
``docs/extensions.md`` for worked examples; ``pi_coder.extensions.builtin`` holds the
first-party ones (``-e builtin:<name>``).
"""

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
from pi_coder.core.extensions.types import Completion, StaleContextError, ToolDefinition, ToolInfo

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
]
