"""``ctx`` and ``ctx.ui`` (docs/extensions-runtime.md#context): what handlers, commands and tools receive.

``UIProtocol`` is implemented by the TUI (``pi_coder.tui.extension_ui``), RPC
(``pi_coder.modes.rpc_ui``) and :class:`NoUI` (print and json mode); they live in
:mod:`pi_coder.extensions.ui` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pi_coder.extensions.types import StaleContextError
from pi_coder.extensions.ui import NotifyLevel, NoUI, UIProtocol, WidgetPlacement

if TYPE_CHECKING:
    from pi_coder.ai.abort import AbortSignal
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.extensions.host import RunnerHost
    from pi_coder.extensions.types import Extension

__all__ = [
    "BoundUI",
    "ExtensionCommandContext",
    "ExtensionContext",
    "NoUI",
    "NotifyLevel",
    "ReplaceResult",
    "SessionView",
    "UIProtocol",
    "WidgetPlacement",
]


class BoundUI:
    """``ctx.ui``: the mode's UI with the extension's name attached to notices."""

    def __init__(self, ui: UIProtocol, source: str) -> None:
        self._ui = ui
        self._source = source

    async def confirm(
        self, title: str, message: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> bool:
        return bool(await self._ui.confirm(title, message, timeout=timeout, signal=signal))

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        return await self._ui.select(title, list(options), timeout=timeout, signal=signal)

    async def input(
        self, title: str, placeholder: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        return await self._ui.input(title, placeholder, timeout=timeout, signal=signal)

    async def editor(
        self, title: str, prefill: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        return await self._ui.editor(title, prefill, timeout=timeout, signal=signal)

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self._ui.notify(message, level, source=self._source)

    def set_status(self, key: str, text: str | None) -> None:
        self._ui.set_status(key, text)

    def set_widget(self, key: str, lines: Sequence[str] | None, placement: WidgetPlacement = "above_editor") -> None:
        self._ui.set_widget(key, lines, placement)

    def set_title(self, title: str) -> None:
        self._ui.set_title(title)

    def set_editor_text(self, text: str) -> None:
        self._ui.set_editor_text(text)

    def get_editor_text(self) -> str:
        return self._ui.get_editor_text()

    def set_working_message(self, text: str | None) -> None:
        self._ui.set_working_message(text)


class SessionView:
    """``ctx.session``: read-only access to the session store."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    @property
    def session_file(self) -> str | None:
        return self._session.session_file

    @property
    def session_id(self) -> str:
        return self._session.session_id

    @property
    def session_name(self) -> str | None:
        return self._session.session_name

    @property
    def leaf_id(self) -> str | None:
        return self._session.store.leaf_id

    def entries(self) -> list[Any]:
        return list(self._session.store.get_entries())

    def branch(self) -> list[Any]:
        return list(self._session.store.get_branch())

    def get_entry(self, entry_id: str) -> Any:
        return self._session.store.get_entry(entry_id)

    def get_label(self, entry_id: str) -> str | None:
        return self._session.store.get_label(entry_id)

    def build_context(self) -> Any:
        return self._session.store.build_session_context()


class ReplaceResult:
    __slots__ = ("cancelled",)

    def __init__(self, cancelled: bool) -> None:
        self.cancelled = cancelled


class ExtensionContext:
    """``ctx`` of event handlers and tools (docs/extensions-runtime.md#ctx)."""

    def __init__(self, runner: RunnerHost, extension: Extension) -> None:
        self._runner = runner
        self._ext = extension
        self._stale = False
        self.ui = BoundUI(runner.ui, extension.name)

    def _live(self) -> RunnerHost:
        if self._stale:
            raise StaleContextError(f"Extension {self._ext.name}: this ctx belongs to a replaced session")
        return self._runner

    def invalidate(self) -> None:
        self._stale = True

    @property
    def cwd(self) -> str:
        return self._runner.cwd

    @property
    def mode(self) -> str:
        return self._runner.mode

    @property
    def has_ui(self) -> bool:
        return bool(getattr(self._runner.ui, "has_ui", False))

    @property
    def session(self) -> SessionView:
        return SessionView(self._live().session)

    @property
    def model(self) -> Any:
        return self._live().session.model

    @property
    def thinking_level(self) -> str:
        return self._live().session.thinking_level

    @property
    def models(self) -> Any:
        return self._live().session.models

    @property
    def signal(self) -> AbortSignal | None:
        session = self._live().session
        return session.agent.signal if session.is_streaming else None

    def is_idle(self) -> bool:
        return not self._live().session.is_streaming

    def abort(self) -> None:
        self._live().session.abort()

    def has_pending_messages(self) -> bool:
        return self._live().session.pending_message_count > 0

    def shutdown(self) -> None:
        self._live().request_shutdown()

    def get_context_usage(self) -> Any:
        return self._live().session.stats()

    def get_system_prompt(self) -> str:
        runner = self._live()
        return runner.run_system_prompt or runner.session.system_prompt

    def is_project_trusted(self) -> bool:
        return self._runner.project_trusted


class ExtensionCommandContext(ExtensionContext):
    """``ctx`` of command handlers: can wait and replace the session (these deadlock in event handlers)."""

    async def wait_for_idle(self) -> None:
        await self._live().session.wait_for_idle()

    async def new_session(self) -> ReplaceResult:
        return ReplaceResult(await self._live().replace_session("new"))

    async def switch_session(self, path: str) -> ReplaceResult:
        return ReplaceResult(await self._live().replace_session("resume", path=path))

    async def fork(self, entry_id: str, position: Literal["before", "at"] = "before") -> ReplaceResult:
        return ReplaceResult(await self._live().replace_session("fork", entry_id=entry_id))

    async def navigate_tree(
        self, target_id: str, *, summarize: bool = False, custom_instructions: str | None = None
    ) -> ReplaceResult:
        """Move to ``target_id`` in this session's tree (``session_before_tree``/``session_tree`` fire);
        cancelled when nothing changed."""
        session = self._live().session
        before = session.store.leaf_id
        await session.navigate_tree(target_id, summarize, custom_instructions)
        return ReplaceResult(session.store.leaf_id == before)

    async def reload(self) -> ReplaceResult:
        return ReplaceResult(not await self._live().reload())
