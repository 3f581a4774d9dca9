"""pi_coder: a terminal coding agent, and its Python SDK (docs/sdk.md).

The names below are the SDK: ``create_session`` builds a :class:`Session`; the event and message
classes type what it reports. They are imported on first use, so ``import pi_coder`` (and
``pi --version``) stays cheap; ``__init__.pyi`` gives type checkers the same names. Everything not
listed here is private.
"""

from __future__ import annotations

_EXPORTS = {
    "create_session": "pi_coder._sdk",
    "Session": "pi_coder._sdk",
    "SessionUI": "pi_coder._sdk",
    "SessionStats": "pi_coder.core.stats",
    "ExtensionAPI": "pi_coder.extensions.api",
    "PiError": "pi_coder.errors",
    "UserError": "pi_coder.errors",
    **dict.fromkeys(
        ("AgentStart", "AgentEnd", "TurnStart", "TurnEnd", "MessageStart", "MessageUpdate", "MessageEnd",
         "ToolExecutionStart", "ToolExecutionUpdate", "ToolExecutionEnd"),
        "pi_coder.agent.events",
    ),  # fmt: skip
    **dict.fromkeys(
        ("QueueChanged", "Notice", "AutoRetryStart", "AutoRetryEnd", "AutoCompactionStart", "AutoCompactionEnd"),
        "pi_coder.core.events",
    ),
    **dict.fromkeys(
        ("UserMessage", "AssistantMessage", "ToolResultMessage", "TextContent", "ThinkingContent", "ImageContent",
         "ToolCall", "Usage"),
        "pi_coder.ai.types",
    ),  # fmt: skip
}

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


def __getattr__(name: str) -> object:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("pi-coder")
        except PackageNotFoundError:  # running from a source tree
            return "0.0.0+unknown"
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_coder' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
