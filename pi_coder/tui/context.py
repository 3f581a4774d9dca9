"""What slash commands, dialog flows and the app's mixins may use of the app, as Protocols.

They import this leaf module instead of ``PiApp``, so ``app`` and its helpers form no import
cycle. ``PiApp`` satisfies every Protocol here; the members are the ones the helpers use.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.await_complete import AwaitComplete
    from textual.binding import BindingsMap
    from textual.geometry import Size
    from textual.screen import Screen
    from textual.widget import Widget

    from pi_coder.core.agent_session import AgentSession
    from pi_coder.extensions.runner import ExtensionRunner
    from pi_coder.extensions.types import Shortcut
    from pi_coder.settings import Settings
    from pi_coder.tui.terminal_display import TerminalDisplay
    from pi_coder.tui.theming import ThemeController
    from pi_coder.tui.widgets.panels import StatusLine
    from pi_coder.tui.widgets.prompt_editor import PromptEditor
    from pi_coder.tui.widgets.transcript import Transcript

_R = TypeVar("_R")

__all__ = ["AppHost", "BlockToggles", "CommandContext", "DialogState", "Handler", "SlashCommand", "extension_runner"]


def extension_runner(session: AgentSession) -> ExtensionRunner | None:
    """The session's extensions as the TUI drives them (commands, shortcuts, renderers, ``ctx.ui``).

    Core holds the runner as its narrower ``ExtensionHooks`` protocol (core never imports the
    extension package); the modes bind an ``ExtensionRunner`` there, and the TUI needs its whole
    surface.
    """
    return cast("ExtensionRunner | None", session.extensions)


@dataclass(slots=True)
class DialogState:
    """What the dialog flows (``pi_coder.tui.screens.navigation``) keep between calls."""

    summarizing: bool = False
    """A branch summary runs (Esc cancels it)."""
    last_escape: float = 0.0
    """``time.monotonic()`` of the last Esc on an empty editor (Esc Esc opens /tree or /fork)."""


class CommandContext(Protocol):
    """The app as a slash command handler and the dialog flows it opens see it."""

    session: AgentSession
    commands: Sequence[SlashCommand]
    effective_keys: dict[str, str]
    title: str
    themes: ThemeController
    terminal_display: TerminalDisplay
    hide_thinking: bool
    dialogs: DialogState
    extension_shortcut_list: list[tuple[str, Shortcut]]
    """The extensions' shortcuts bound as app keys: ``(textual key, shortcut)``."""
    autocomplete_providers: list[tuple[Any, str]]
    """``ctx.ui.add_autocomplete_provider``: ``(provider, trigger characters)``, newest first."""

    @property
    def editor(self) -> PromptEditor: ...

    @property
    def screen(self) -> Screen[object]: ...

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...

    @property
    def size(self) -> Size: ...

    @property
    def _bindings(self) -> BindingsMap:
        """Textual's key table of the app (extension shortcuts are bound into it)."""
        ...

    @property
    def status_line(self) -> StatusLine: ...

    async def notice(self, text: str, level: str = "info") -> None: ...

    async def show_markdown(self, text: str) -> None: ...

    def status(self, text: str, level: str = "info") -> None: ...

    def show_statuses(self, statuses: dict[str, str]) -> None: ...

    def refresh_footer(self) -> None: ...

    async def quit_app(self) -> None: ...

    async def new_session(self) -> None: ...

    async def compact(self, instructions: str | None) -> None: ...

    def copy_to_clipboard(self, text: str) -> None: ...

    def push_screen(self, *args: Any, **kwargs: Any) -> Any: ...

    async def push_screen_wait(self, screen: Screen[_R], *, mode: str | None = None) -> _R: ...

    def pop_screen(self) -> AwaitComplete: ...

    def call_later(self, *args: Any, **kwargs: Any) -> Any: ...

    def run_worker(self, *args: Any, **kwargs: Any) -> Any: ...

    def exit(self, result: int | None = None, return_code: int = 0, message: RenderableType | None = None) -> None: ...

    def set_thinking_hidden(self, hidden: bool) -> None: ...


class BlockToggles(Protocol):
    """What the key actions ask of the transcript controller (``controller.TranscriptController``)."""

    def set_tools_expanded(self, expanded: bool) -> None: ...

    def set_thinking_hidden(self, hidden: bool) -> None: ...


class AppHost(CommandContext, Protocol):
    """The app as its key-action, editor and selection mixins see it."""

    @property
    def controller(self) -> BlockToggles | None: ...

    tools_expanded: bool
    _last_clear: float
    working_message: str | None
    """``ctx.ui.set_working_message``: the status line's text while a run is active."""
    terminal_input_handlers: list[Callable[[str, str | None], Any]]
    """``ctx.ui.on_terminal_input``: see each key first; a true result consumes it."""

    @property
    def transcript(self) -> Transcript: ...

    @property
    def focused(self) -> Widget | None: ...

    def _busy(self) -> bool: ...

    def _settings(self) -> Settings: ...

    def query_one(self, *args: Any, **kwargs: Any) -> Any: ...

    def set_timer(self, *args: Any, **kwargs: Any) -> Any: ...

    def refresh(self, *args: Any, **kwargs: Any) -> Any: ...

    def suspend(self, *args: Any, **kwargs: Any) -> Any: ...

    def action_suspend_process(self, *args: Any, **kwargs: Any) -> Any: ...

    def action_toggle_tools(self) -> None: ...

    def copy_selection(self) -> bool: ...

    def query(self, *args: Any, **kwargs: Any) -> Any: ...


Handler = Callable[[CommandContext, str], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    description: str
    handler: Handler
    args_hint: str = ""

    @property
    def takes_args(self) -> bool:
        return bool(self.args_hint)

    async def run(self, app: CommandContext, args: str) -> None:
        result = self.handler(app, args)
        if inspect.isawaitable(result):
            await result
