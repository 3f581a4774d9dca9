"""``ctx`` and ``ctx.ui`` (docs/extensions-runtime.md#context): what handlers, commands and tools receive.

``UIProtocol`` is implemented by the TUI (``pi_coder.tui.extension_ui``), RPC
(``pi_coder.modes.rpc_ui``) and :class:`NoUI` (print and json mode); they live in
:mod:`pi_coder.extensions.ui` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pi_coder.extensions.types import StaleContextError
from pi_coder.extensions.ui import NotifyLevel, NoUI, UIProtocol, WidgetPlacement

if TYPE_CHECKING:
    from pi_coder.ai.abort import AbortSignal
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.extensions.host import RunnerHost
    from pi_coder.extensions.theme import ThemeView
    from pi_coder.extensions.types import Extension
    from pi_coder.resources.system_prompt import SystemPromptOptions

__all__ = [
    "BoundUI",
    "ModelRegistry",
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
        """The status line's text while a run is active (None: the default ``Working...``)."""
        self._ui.set_working_message(text)

    async def custom(
        self, factory: Callable[..., Any], *, overlay: bool = False, fallback: Callable[[], Any] | None = None
    ) -> Any:
        """Show a component the extension draws and that takes keys; returns what it passes to ``done``.

        TUI only: ``factory(done, theme)`` returns a Textual widget, shown inline above the
        editor or, with ``overlay=True``, over the transcript; the widget calls ``done(value)``
        to close (Escape closes with None). Other modes call ``fallback()`` (sync or async; None
        without one), e.g. a chain of ``select``/``input`` dialogs.
        """
        return await self._ui.custom(factory, overlay=overlay, fallback=fallback)

    @property
    def theme(self) -> ThemeView:
        """The current theme (``fg``/``bg``/``bold``...: ANSI strings; no colours outside the TUI)."""
        return self._ui.theme

    def get_all_themes(self) -> list[str]:
        return self._ui.get_all_themes()

    def set_theme(self, name: str) -> bool:
        """Switch the TUI's theme for this run (not saved); False when unknown or outside the TUI."""
        return self._ui.set_theme(name)

    def set_header(self, lines: Sequence[str] | None) -> None:
        """Lines at the top of the screen (None: remove)."""
        self._ui.set_header(lines)

    def set_footer(self, lines: Sequence[str] | None) -> None:
        """Lines under the editor, above the status footer (None: remove)."""
        self._ui.set_footer(lines)

    def paste_to_editor(self, text: str) -> None:
        """Insert ``text`` at the editor's cursor."""
        self._ui.paste_to_editor(text)

    def get_tools_expanded(self) -> bool:
        return self._ui.get_tools_expanded()

    def set_tools_expanded(self, expanded: bool) -> None:
        """As Ctrl+O: tool output, summaries and custom renderers expanded or collapsed."""
        self._ui.set_tools_expanded(expanded)

    def set_hidden_thinking_label(self, label: str | None) -> None:
        """The line shown for a thinking block while thinking is hidden (None: the default)."""
        self._ui.set_hidden_thinking_label(label)

    def set_working_indicator(self, frames: Sequence[str] | None = None, interval_ms: int | None = None) -> None:
        """The TUI spinner's frames while a run is active (ANSI styling kept; ``theme.fg`` works):
        None restores the default, ``[]`` hides it; ``interval_ms`` between frames (default 100)."""
        self._ui.set_working_indicator(frames, interval_ms)

    def set_working_visible(self, visible: bool) -> None:
        """Show or hide the TUI's working/status line entirely."""
        self._ui.set_working_visible(visible)

    def on_terminal_input(self, handler: Callable[[str, str | None], Any]) -> Callable[[], None]:
        """See every key in the TUI before pi does: ``handler(key, character)`` (Textual's key name,
        e.g. ``ctrl+x``, and the printable character or None); returning True (or
        ``{"consume": True}``) swallows the key. Returns an unsubscribe function; nothing outside the TUI."""
        return self._ui.on_terminal_input(handler)

    def add_autocomplete_provider(self, provider: Callable[[str], Any], trigger_characters: Sequence[str]) -> None:
        """Complete editor tokens that start with one of ``trigger_characters`` (TUI only):
        ``provider(token)`` returns the items (``Completion``, dicts or strings) whose value
        replaces the token, or None to leave it to an earlier provider. The newest answers first."""
        self._ui.add_autocomplete_provider(provider, list(trigger_characters))


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
    def scoped_models(self) -> list[tuple[Any, str | None]]:
        """The ``--models`` scope Ctrl+P cycles: ``(model, thinking level or None)``; empty without one."""
        return list(self._live().session.scoped_models)

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

    def get_system_prompt_options(self) -> SystemPromptOptions:
        """The base inputs of the system prompt: ``cwd``, ``custom_prompt``, ``append_prompt``,
        ``selected_tools``, ``tool_snippets``, ``prompt_guidelines``, ``context_files`` (with their
        full text: keep them out of logs) and ``skills``. A copy; per-run changes
        (``before_agent_start``, ``context``) are not in it."""
        return self._live().session.system_prompt_options()

    def is_project_trusted(self) -> bool:
        return self._runner.project_trusted

    @property
    def model_registry(self) -> ModelRegistry:
        """Find models and call one (``find``, ``available``, ``stream_simple``, ``complete``)."""
        return ModelRegistry(self._live().session.models)

    def compact(
        self,
        custom_instructions: str | None = None,
        *,
        on_complete: Callable[[Any], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
    ) -> None:
        """Start a compaction without waiting for it (safe in event handlers); ``on_complete(result)``
        or ``on_error(exc)`` is called when it ends."""
        runner = self._live()
        session = runner.session

        async def run() -> None:
            try:
                result = await session.compact(custom_instructions)
            except Exception as exc:
                if on_error is not None:
                    await runner.call(self._ext, "compact:on_error", on_error, exc)
                return
            if on_complete is not None:
                await runner.call(self._ext, "compact:on_complete", on_complete, result)

        runner.spawn(run())


class ModelRegistry:
    """``ctx.model_registry``: the configured providers and models, and calling a model."""

    def __init__(self, models: Any) -> None:
        self._models = models

    def find(self, provider: str, model_id: str) -> Any:
        """The model ``model_id`` of ``provider`` (case-insensitive provider), or None."""
        return self._models.get_model(provider, model_id)

    def all(self) -> list[Any]:
        return list(self._models.all_models())

    def available(self) -> list[Any]:
        """Models whose provider has a key."""
        return list(self._models.available_models())

    def has_key(self, provider: str) -> bool:
        return bool(self._models.has_key(provider))

    def stream_simple(self, model: Any, context: Any, options: Any = None) -> Any:
        """An ``AssistantMessageEventStream`` (iterate it; ``await stream.result()``); never raises."""
        return self._models.stream_simple(model, context, options)

    async def complete(self, model: Any, context: Any, options: Any = None) -> Any:
        """The final ``AssistantMessage`` (``stop_reason == "error"`` and ``error_message`` on failure).

        ``context`` is a ``Context`` or a dict (``system_prompt``, ``messages``); a message may be
        a plain string (a user message).
        """
        from pi_coder.ai.types import Context, SystemMessage, UserMessage

        if isinstance(context, dict):
            messages = [UserMessage(content=m) if isinstance(m, str) else m for m in context.get("messages", [])]
            if context.get("system_prompt"):
                messages.insert(0, SystemMessage(content=context["system_prompt"]))
            context = Context(messages=messages)
        return await self._models.stream_simple(model, context, options).result()


class ExtensionCommandContext(ExtensionContext):
    """``ctx`` of command handlers: can wait and replace the session (these deadlock in event handlers)."""

    async def wait_for_idle(self) -> None:
        await self._live().session.wait_for_idle()

    async def new_session(
        self, *, setup: Callable[[Any], Any] | None = None, with_session: Callable[[Any], Any] | None = None
    ) -> ReplaceResult:
        """Like ``/new``. ``setup(store)`` (sync or async) appends entries to the new session's
        ``SessionStore`` (``append_message``, ``append_custom``, ...) before it is loaded and
        ``session_start`` fires; ``with_session(ctx)`` runs afterwards with a command context of
        the new session (this ``ctx`` is stale by then)."""
        cancelled = await self._live().replace_session("new", setup=setup)
        return await self._after(cancelled, with_session)

    async def switch_session(self, path: str, *, with_session: Callable[[Any], Any] | None = None) -> ReplaceResult:
        cancelled = await self._live().replace_session("resume", path=path)
        return await self._after(cancelled, with_session)

    async def fork(
        self,
        entry_id: str,
        position: Literal["before", "at"] = "before",
        *,
        with_session: Callable[[Any], Any] | None = None,
    ) -> ReplaceResult:
        """Like ``/fork`` from ``entry_id`` (pi_coder forks before the entry: ``position="at"`` is
        accepted for Pi's signature and treated the same)."""
        cancelled = await self._live().replace_session("fork", entry_id=entry_id)
        return await self._after(cancelled, with_session)

    async def _after(self, cancelled: bool, with_session: Callable[[Any], Any] | None) -> ReplaceResult:
        if not cancelled and with_session is not None:
            runner = self._runner
            fresh = next((e for e in runner.extensions if e.path == self._ext.path), None)
            if fresh is not None:
                await runner.call(fresh, "with_session", with_session, runner.command_context(fresh))
        return ReplaceResult(cancelled)

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> ReplaceResult:
        """Move to ``target_id`` in this session's tree (``session_before_tree``/``session_tree`` fire);
        cancelled when nothing changed. ``custom_instructions`` add to the default summary prompt,
        or replace it with ``replace_instructions=True``; ``label`` labels the target entry."""
        session = self._live().session
        before = session.store.leaf_id
        await session.navigate_tree(
            target_id, summarize, custom_instructions, replace_instructions=replace_instructions
        )
        moved = session.store.leaf_id != before
        if moved and label is not None:
            session.store.append_label(target_id, label)
        return ReplaceResult(not moved)

    async def reload(self) -> ReplaceResult:
        return ReplaceResult(not await self._live().reload())
