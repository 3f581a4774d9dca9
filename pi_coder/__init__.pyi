"""Types of the lazy exports of ``pi_coder/__init__.py`` (the SDK, docs/sdk.md)."""

from pi_coder._sdk import Session, SessionUI, create_session
from pi_coder.agent.events import (
    AgentEnd,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from pi_coder.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_coder.core.events import (
    AutoCompactionEnd,
    AutoCompactionStart,
    AutoRetryEnd,
    AutoRetryStart,
    Notice,
    QueueChanged,
)
from pi_coder.core.stats import SessionStats
from pi_coder.errors import PiError, UserError
from pi_coder.extensions.api import ExtensionAPI

__version__: str

__all__ = [
    "AgentEnd",
    "AgentStart",
    "AssistantMessage",
    "AutoCompactionEnd",
    "AutoCompactionStart",
    "AutoRetryEnd",
    "AutoRetryStart",
    "ExtensionAPI",
    "ImageContent",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "Notice",
    "PiError",
    "QueueChanged",
    "Session",
    "SessionStats",
    "SessionUI",
    "TextContent",
    "ThinkingContent",
    "ToolCall",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolResultMessage",
    "TurnEnd",
    "TurnStart",
    "Usage",
    "UserError",
    "UserMessage",
    "__version__",
    "create_session",
]
