"""``RunnerHost``: what ``api``, ``context``, ``seams`` and ``loader`` need of the runner.

The runner (:mod:`pi_coder.extensions.runner`) builds APIs and contexts and mixes the seams
in; those modules see it only through this protocol, so the package has no import cycle.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.extensions.bus import EventBus
    from pi_coder.extensions.types import Command, Extension, Handler, ProviderRegistration, Source, ToolInfo
    from pi_coder.extensions.ui import UIProtocol

__all__ = ["RunnerHost"]

R = TypeVar("R")


class RunnerHost(Protocol):
    """The runner as its collaborators see it (see the module docstring)."""

    cwd: str
    mode: str
    ui: UIProtocol
    project_trusted: bool
    bus: EventBus
    run_system_prompt: str | None
    next_turn: list[Any]
    extensions: list[Extension]
    sources: list[Source]
    rediscover: Callable[[], list[Source]] | None
    reload_warnings: list[str]
    mcp_servers: dict[str, tuple[Extension, Any]]
    mcp_changed: Callable[[], None] | None
    _starting: bool
    interrupted: bool
    last_model: Any
    last_thinking_level: str | None

    @property
    def session(self) -> AgentSession: ...

    # dispatch
    def has(self, name: str) -> bool: ...

    def handlers(self, name: str) -> list[tuple[Extension, Handler]]: ...

    async def call(self, ext: Extension, label: str, fn: Callable[..., Any], *args: Any) -> tuple[bool, Any]: ...

    def results(self, name: str, event: Any, cls: type[R]) -> AsyncIterator[tuple[Extension, bool, Any]]: ...

    async def notify(self, name: str, event: Any) -> None: ...

    async def gate(self, name: str, event: Any, cls: type[R], field: str = "cancel") -> R | None: ...

    async def shutdown(self, reason: str, target: str | None = None, *, timeout: float | None = ...) -> None: ...

    def spawn(self, coro: Any) -> Any: ...

    def report(self, extension: Extension | None, event: str, exc: BaseException) -> None: ...

    # extensions and contexts
    def add(self, extension: Extension, api: Any) -> None: ...

    def invalidate(self) -> None: ...

    def context(self, extension: Extension) -> Any: ...
    """The ``ExtensionContext`` of ``extension``."""

    def command_context(self, extension: Extension) -> Any: ...
    """A fresh ``ExtensionCommandContext``."""

    def request_shutdown(self) -> None: ...

    # registration
    def tool_registered(self, extension: Extension, tool: Any) -> None: ...

    def install_tools(self, activate: Sequence[str] = ()) -> None: ...

    def set_active_tools(self, extension: Extension, names: list[str]) -> None: ...

    def all_tool_infos(self) -> list[ToolInfo]: ...

    def find_command(self, text: str) -> tuple[Command, str] | None: ...

    async def run_command(self, command: Command, args: str) -> None: ...

    def command_records(self) -> list[dict[str, Any]]: ...

    def all_command_records(self) -> list[dict[str, Any]]: ...

    def flag_value(self, name: str) -> bool | str | None: ...

    def provider_registered(self, registration: ProviderRegistration) -> None: ...

    def provider_unregistered(self, name: str) -> None: ...

    # messages and replacement
    def send_message(self, spec: Any, *, deliver_as: str, trigger_turn: bool) -> None: ...

    def send_user_message(self, ext: Extension, content: Any, *, deliver_as: str | None, expand: bool) -> None: ...

    def append_entry(self, custom_type: str, data: Any) -> str: ...

    def prompt_starter(
        self, message: Any, text: str, images: Sequence[Any], *, message_type: str = "user"
    ) -> Callable[[], Any]: ...

    async def on_session_event(self, event: Any) -> None: ...

    async def discover_resources(self, reason: str) -> None: ...

    async def replace_session(
        self, kind: str, *, path: str | None = None, entry_id: str | None = None, setup: Callable[[Any], Any] | None = None
    ) -> bool: ...

    async def reload(self) -> bool: ...
