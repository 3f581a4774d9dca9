"""What the hook runner uses of the extension API and its ``ctx``, as protocols.

The hooks package sits below the extension runtime in the layers, so it names these shapes
instead of importing ``ExtensionAPI`` and ``ExtensionContext`` (which match them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from pi_coder.ai.abort import AbortSignal

__all__ = ["HookAPI", "HookContext", "HookSession", "HookUI"]


class HookSession(Protocol):
    @property
    def session_id(self) -> str: ...

    @property
    def session_file(self) -> str | None: ...

    def entries(self) -> list[Any]: ...


class HookUI(Protocol):
    def notify(self, message: str, level: Literal["info", "warning", "error"] = "info") -> None: ...

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None: ...


class HookContext(Protocol):
    """The handler's ``ctx``."""

    @property
    def ui(self) -> HookUI: ...

    @property
    def session(self) -> HookSession: ...

    @property
    def has_ui(self) -> bool: ...

    @property
    def signal(self) -> AbortSignal | None: ...

    def abort(self) -> None: ...


class HookAPI(Protocol):
    """The extension factory's ``pi``."""

    def on(self, event: str, handler: Callable[..., Any]) -> Callable[[], None]: ...

    def register_command(self, name: str, handler: Callable[..., Any], description: str = "") -> None: ...

    def send_message(
        self,
        message: Any,
        *,
        deliver_as: Literal["steer", "follow_up", "next_turn"] = "steer",
        trigger_turn: bool = False,
    ) -> None: ...
