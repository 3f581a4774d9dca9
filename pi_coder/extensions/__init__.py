"""Extensions: the runtime (loader, runner, events, ctx) and the authors' facade, ``ExtensionAPI`` and co.

An extension is a module or package defining ``extension(pi: ExtensionAPI) -> None``. See
``docs/extensions.md``; ``pi_coder.extensions.builtin`` holds the first-party ones
(``-e builtin:<name>``). Names are imported on first use, so an extension pays only for what it
imports (start-up budget, docs/extensions-runtime.md#start-up-cost); the runtime modules are imported only when some extension
source is present.

Layering: this package sits above ``pi_coder.core`` (the runner drives an ``AgentSession`` and
speaks core's events; core holds the runner only as ``core.host.ExtensionHooks``) and never
imports a UI library, the TUI or the modes. So two pieces live outside it: the mode start-up
glue that reads the CLI options and binds the runner to a mode (``pi_coder.modes.extension_host``)
and the Textual dialogs behind ``ctx.ui`` (``pi_coder.tui.extension_ui``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentTool, AgentToolResult
    from pi_coder.ai.types import ImageContent, TextContent
    from pi_coder.extensions.api import ExtensionAPI
    from pi_coder.extensions.context import ExtensionCommandContext, ExtensionContext, UIProtocol
    from pi_coder.extensions.events import (
        AgentBeforeSettleResult,
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
    from pi_coder.extensions.exec import ExecResult
    from pi_coder.extensions.streams import text_stream
    from pi_coder.extensions.types import Completion, StaleContextError, ToolDefinition, ToolInfo

_WHERE = {
    "AgentTool": "pi_coder.agent.types",
    "AgentToolResult": "pi_coder.agent.types",
    "ImageContent": "pi_coder.ai.types",
    "TextContent": "pi_coder.ai.types",
    "ExtensionAPI": "pi_coder.extensions.api",
    "ExtensionCommandContext": "pi_coder.extensions.context",
    "ExtensionContext": "pi_coder.extensions.context",
    "UIProtocol": "pi_coder.extensions.context",
    "ExecResult": "pi_coder.extensions.exec",
    "text_stream": "pi_coder.extensions.streams",
    "Completion": "pi_coder.extensions.types",
    "StaleContextError": "pi_coder.extensions.types",
    "ToolDefinition": "pi_coder.extensions.types",
    "ToolInfo": "pi_coder.extensions.types",
    **{
        name: "pi_coder.extensions.events"
        for name in (
            "AgentBeforeSettleResult",
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
    "AgentBeforeSettleResult",
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
