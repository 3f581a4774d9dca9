"""What an extension registers: the per-extension record and registration dataclasses (docs/extensions-runtime.md#registration)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pi_coder.errors import PiError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from pi_coder.ai.models import ProviderTable
    from pi_coder.ai.registry import StreamFunction

__all__ = [
    "EVENT_NAMES",
    "PI_ONLY_EVENTS",
    "Command",
    "Completion",
    "Extension",
    "ExtensionLoadError",
    "Flag",
    "Handler",
    "ProviderRegistration",
    "Shortcut",
    "Source",
    "SourceKind",
    "StaleContextError",
    "ToolDefinition",
    "ToolInfo",
]

EVENT_NAMES: frozenset[str] = frozenset(
    {
        # session
        "project_trust",
        "session_start",
        "session_shutdown",
        "session_before_switch",
        "session_before_fork",
        "session_before_compact",
        "session_compact",
        "session_compact_failed",
        "session_before_tree",
        "session_tree",
        "resources_discover",
        # input and runs
        "input",
        "user_bash",
        "before_agent_start",
        "agent_start",
        "agent_end",
        "agent_settled",
        "agent_before_settle",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "context",
        "context_with_system",
        # providers and models
        "before_provider_request",
        "before_provider_headers",
        "after_provider_response",
        "provider_stream_event",
        "model_select",
        "thinking_level_select",
        # tools
        "tool_call",
        "tool_result",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        # subagents (the task tool's child agents; docs/subagents.md)
        "subagent_start",
        "subagent_end",
    }
)
"""The names ``pi.on()`` accepts (docs/extensions.md, "Event catalogue"); others are a load error."""

PI_ONLY_EVENTS: frozenset[str] = frozenset(
    {
        "session_info_changed",
        "mcp_servers_change",
        "cache_warming_decision",
        "ui_prompt_start",
        "ui_prompt_end",
    }
)
"""Pi 1.6 events pi_coder does not emit (yet): ``pi.on()`` says so instead of "unknown"."""

Handler = Callable[..., Any]
"""``handler(event, ctx)``, sync or async."""


class StaleContextError(PiError):
    """An ``ExtensionAPI`` or ``ctx`` of a replaced session (or a reloaded runtime) was used."""


class ExtensionLoadError(PiError):
    """An extension could not be imported or its factory failed."""


@dataclass(slots=True, kw_only=True, eq=False)
class ToolDefinition:
    """An extension tool: the ``AgentTool`` fields, prompt text, and an ``execute`` taking ``ctx`` too.

    ``execute(tool_call_id, params, signal, on_update, ctx) -> AgentToolResult``.
    """

    name: str
    label: str
    description: str
    parameters: type[BaseModel]
    execute: Callable[..., Awaitable[Any] | Any]
    execution_mode: Literal["sequential", "parallel"] | None = None
    prepare_arguments: Callable[[Any], Any] | None = None
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(default_factory=list)
    default_active: bool = True
    render_call: Callable[..., Any] | None = None
    render_result: Callable[..., Any] | None = None
    read_only: bool = False
    """Never changes anything: allowed in plan mode, no checkpoint snapshot."""


@dataclass(slots=True, kw_only=True, eq=False)
class ToolInfo:
    name: str
    description: str
    parameters: dict[str, Any]
    source: Literal["builtin", "extension", "mcp"]
    extension_path: str | None = None
    annotations: dict[str, Any] | None = None
    source_info: dict[str, str] = field(default_factory=dict)
    """Pi's ``{path, source, scope, origin}`` (plus ``baseDir`` for a package's tool)."""


@dataclass(slots=True, kw_only=True, eq=False)
class Completion:
    value: str
    label: str | None = None
    description: str | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class Command:
    name: str
    handler: Callable[..., Any]
    description: str = ""
    get_argument_completions: Callable[[str], Any] | None = None
    extension: Extension | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class Shortcut:
    key: str
    handler: Callable[..., Any]
    description: str = ""
    extension: Extension | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class Flag:
    name: str
    description: str = ""
    type: Literal["bool", "str"] = "bool"
    default: bool | str | None = None
    extension: Extension | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class ProviderRegistration:
    """One ``pi.register_provider`` call."""

    name: str
    table: ProviderTable
    """The provider in models.toml terms: only the keys the extension gave (not ``None``)."""
    stream_simple: StreamFunction | None = None
    """The provider's own stream function, if it streams its models itself."""


@dataclass(slots=True, kw_only=True, eq=False)
class Extension:
    """One loaded extension: its identity and everything it registered (in order)."""

    path: str
    """Identity: the real path, ``builtin:<name>``, a dotted module or ``dist:name``."""
    name: str
    source: Source | None = None
    """Where it was loaded from (``source.source_info()``: Pi's ``sourceInfo`` of its commands
    and tools); None for one made in code."""

    def source_info(self) -> dict[str, str]:
        """Pi's ``sourceInfo`` of what this extension registers."""
        if self.source is not None:
            return self.source.source_info()
        from pi_coder.resources.source_info import make

        return make(self.path, "sdk", "temporary")
    factory: Callable[..., Any] | None = None
    handlers: dict[str, list[Handler]] = field(default_factory=dict)
    tools: list[Any] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    shortcuts: list[Shortcut] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    providers: list[ProviderRegistration] = field(default_factory=list)
    message_renderers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    entry_renderers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    markdown_transformer: tuple[Callable[..., Any], frozenset[str]] | None = None
    """``register_markdown_transformer``: the function and the message types it runs on."""

    def clear(self) -> None:
        """Drop every registration (rollback after a failed factory, or before re-running it)."""
        self.handlers.clear()
        self.tools.clear()
        self.commands.clear()
        self.shortcuts.clear()
        self.flags.clear()
        self.providers.clear()
        self.message_renderers.clear()
        self.entry_renderers.clear()
        self.markdown_transformer = None


SourceKind = Literal["file", "package", "module", "entry_point"]


@dataclass(slots=True, frozen=True)
class Source:
    identity: str
    name: str
    kind: SourceKind
    target: str
    """The file or package folder, the dotted module, or ``module:attr`` of an entry point."""
    scope: Literal["cli", "project", "global", "entry_point", "package"]
    sys_paths: tuple[str, ...] = ()
    """Folders joining ``sys.path`` (at its end) just before this source is imported: an installed
    package's environment (docs/packages.md); empty for every other source."""
    listed: bool = False
    """Named in a settings file's ``extensions`` (else found in an extensions folder)."""
    package: tuple[str, str, str] | None = None
    """``(folder, source spec, scope)`` of the package it belongs to."""

    def source_info(self) -> dict[str, str]:
        """Pi's ``sourceInfo`` of what this source registers (``pi_coder.resources.source_info``)."""
        from pi_coder.resources.source_info import make

        path = self.target if self.kind in ("file", "package") else self.identity
        if self.identity.startswith("builtin:"):
            return make(self.identity, "builtin", "temporary")
        if self.package is not None:
            root, spec, scope = self.package
            return make(path, spec, "project" if scope == "project" else "user", origin="package", base_dir=root)
        if self.scope == "cli":
            return make(path, "cli", "temporary")
        if self.scope == "entry_point":
            return make(path, "entry_point", "user", origin="package")
        return make(path, "local" if self.listed else "auto", "project" if self.scope == "project" else "user")
