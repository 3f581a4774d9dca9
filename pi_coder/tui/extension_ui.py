"""Extensions in the TUI (docs/extensions-runtime.md#commands, docs/extensions-runtime.md#ui-per-mode): ``ctx.ui`` dialogs, commands in ``/``, start and quit.

Dialogs are modal screens that queue FIFO (Textual's screen stack); ``timeout`` or an aborted
signal closes one with its cancel value. ``set_widget`` lines sit above (or below) the editor,
``set_status`` texts form a footer line, ``set_working_message`` replaces the spinner's text
while a run is active.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from rich.protocol import is_renderable
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from pi_coder.tui.context import SlashCommand, extension_runner
from pi_coder.tui.extension_extras import TuiExtras
from pi_coder.tui.key_guard import KeyGuard
from pi_coder.tui.screens._picker import PickerEntry, PickerScreen
from pi_coder.tui.widgets._measured import MeasuredStatic

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from pi_coder.ai.abort import AbortSignal
    from pi_coder.extensions.runner import ExtensionRunner
    from pi_coder.extensions.types import Shortcut
    from pi_coder.tui.completion import Completion, CompletionContext
    from pi_coder.tui.context import AppHost, CommandContext
    from pi_coder.tui.theming import ThemeController

__all__ = ["ConfirmScreen", "CustomMessageBlock", "render_custom_message", "SelectScreen", "TextScreen", "TuiUI", "bind_shortcuts", "extension_commands", "reload_extensions", "run_shortcut", "start_extensions"]


class SelectScreen(KeyGuard, PickerScreen[str]):
    """A choice among ``options``. A title longer than one line (a command being approved) shows
    whole above the options, wrapped and scrollable; keys sent before the dialog was drawn are
    ignored (:mod:`pi_coder.tui.key_guard`)."""

    CSS_PATH = "screens/picker.tcss"
    DEFAULT_CSS = "SelectScreen #select-title { height: auto; max-height: 12; padding: 0 1; margin: 0 0 1 0; }"
    _ONE_LINE = 100

    def __init__(self, title: str, options: Sequence[str]) -> None:
        lines = title.splitlines() or [""]
        self._long = len(lines) > 1 or len(title) > self._ONE_LINE
        short = lines[0] if len(lines[0]) <= self._ONE_LINE else lines[0][: self._ONE_LINE - 1] + "…"
        super().__init__(short + (" …" if len(lines) > 1 else ""), placeholder="Filter...")
        self.full_title = title
        self._options = list(options)

    def on_mount(self) -> None:
        super().on_mount()
        if self._long:
            title = VerticalScroll(Static(Text(self.full_title, style="bold")), id="select-title")
            title.can_focus = False
            self.query_one("#picker").mount(title, before="#picker-header")
        self.guard_keys(self)

    def load_entries(self) -> list[PickerEntry[str]]:
        return [PickerEntry(key=str(i), value=o, prompt=Text(o), search=o) for i, o in enumerate(self._options)]


class ConfirmScreen(KeyGuard, ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "answer(False)", "No", show=False, priority=True),
        Binding("enter,y", "answer(True)", "Yes", show=False, priority=True),
    ]
    DEFAULT_CSS = "ConfirmScreen { align: center middle; } #confirm { width: 60; height: auto; border: round $accent; padding: 0 1; }"

    def __init__(self, title: str, message: str) -> None:
        super().__init__()
        self._title, self._message = title, message

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Static(Text(self._title, style="bold"))
            if self._message:
                yield Static(self._message)
            yield Static(Text("Enter/y yes · Esc/n no", style="dim"))

    def on_mount(self) -> None:
        self.guard_keys(self)

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class TextScreen(KeyGuard, ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False, priority=True)]
    DEFAULT_CSS = "TextScreen { align: center middle; } #text-dialog { width: 70; height: auto; border: round $accent; }"

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self._title, self._value, self._placeholder = title, value, placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="text-dialog"):
            yield Static(Text(self._title, style="bold"))
            yield Input(value=self._value, placeholder=self._placeholder)

    def on_mount(self) -> None:
        self.guard_keys(self)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class TuiUI(TuiExtras):
    """``UIProtocol`` for the TUI (``custom``, theme, header/footer...: :class:`TuiExtras`)."""

    has_ui = True

    def __init__(self, app: AppHost) -> None:
        self._app = app
        self.statuses: dict[str, str] = {}

    async def _show(self, screen: ModalScreen[Any], cancel: Any, timeout: float | None, signal: AbortSignal | None) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def done(value: Any) -> None:
            if not future.done():
                future.set_result(value)

        if signal is not None:
            if signal.aborted:
                return cancel
            signal.add_listener(lambda *_: done(cancel))
        await self._app.push_screen(screen, done)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            return cancel
        finally:
            if screen.is_attached and not future.done():
                future.set_result(cancel)
            if screen in self._app.screen_stack:
                screen.dismiss(None) if screen is self._app.screen else self._app.pop_screen()

    async def confirm(self, title: str, message: str, *, timeout: float | None = None, signal: AbortSignal | None = None) -> bool:
        return bool(await self._show(ConfirmScreen(title, message), False, timeout, signal))

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None, signal: AbortSignal | None = None) -> str | None:
        result: str | None = await self._show(SelectScreen(title, options), None, timeout, signal)
        return result

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None) -> str | None:
        result: str | None = await self._show(TextScreen(title, placeholder=placeholder), None, timeout, signal)
        return result

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None) -> str | None:
        result: str | None = await self._show(TextScreen(title, value=prefill), None, timeout, signal)
        return result

    async def elicitation_form(self, server: str, request: dict[str, Any]) -> dict[str, Any]:
        """An MCP server's ``elicitation/create`` as one form (``pi_coder.mcp.elicit.FormUI``; docs/mcp.md#elicitation)."""
        from pi_coder.tui.mcp_elicit import ElicitationScreen, open_page

        answer: dict[str, Any] = await self._show(ElicitationScreen(server, request), {"action": "cancel"}, None, None)
        if request.get("mode") == "url" and answer.get("action") == "accept":
            await open_page(str(request.get("url", "")))
        return answer

    def notify(self, message: str, level: str = "info", *, source: str = "") -> None:
        self._app.call_later(self._app.notice, message, level)

    def set_status(self, key: str, text: str | None) -> None:
        """A footer line: every extension status, ordered by key."""
        if text is None:
            self.statuses.pop(key, None)
        else:
            self.statuses[key] = text
        self._app.show_statuses(dict(self.statuses))

    def set_widget(self, key: str, lines: Sequence[str] | None, placement: str = "above_editor") -> None:
        """Lines above the editor (or below it); ``None`` removes the widget."""
        from pi_coder.tui.widgets.panels import ExtensionWidgets

        app = self._app
        here, there = ("#widgets-below", "#widgets-above") if placement == "below_editor" else ("#widgets-above", "#widgets-below")
        app.query_one(there, ExtensionWidgets).set_lines(key, None)
        app.query_one(here, ExtensionWidgets).set_lines(key, lines)

    def set_title(self, title: str) -> None:
        self._app.title = title

    def set_editor_text(self, text: str) -> None:
        self._app.editor.set_text(text)

    def get_editor_text(self) -> str:
        return str(self._app.editor.text)

    def set_working_message(self, text: str | None) -> None:
        """The status line's text while a run is active (``None``: the default ``Working...``)."""
        app = self._app
        previous = app.working_message or "Working..."
        app.working_message = text or None
        line = app.status_line
        if line.busy and line.label == previous:
            line.start(app.working_message or "Working...")


class CustomMessageBlock(MeasuredStatic):
    """A custom message drawn by an extension's message renderer; Ctrl+O draws it again."""

    DEFAULT_CSS = "CustomMessageBlock { height: auto; margin: 1 1 0 1; padding: 0 1; }"

    def __init__(self, content: Any, redraw: Any = None) -> None:
        super().__init__(content)
        self._redraw = redraw

    def set_expanded(self, expanded: bool) -> None:
        """Call the renderer again with ``expanded`` (Ctrl+O); keep the old drawing if it fails."""
        if self._redraw is not None:
            out = self._redraw(expanded)
            if out is not None:
                self.update(out)


class RendererHost(Protocol):
    """What an extension's message renderer needs of the app: the expansion state and the theme."""

    tools_expanded: bool
    themes: ThemeController


def render_custom_message(
    app: RendererHost, runner: ExtensionRunner, custom_type: str, message: Any, *, kind: str = "message"
) -> Static | None:
    """``register_message_renderer``'s rendering of ``message`` (``kind="entry"``:
    ``register_entry_renderer``'s of a custom entry); the first extension registering
    ``custom_type`` wins. ``None``, an awaitable or an exception (reported once as
    ``renderer:<type>``) give None: the default rendering."""
    for ext in runner.extensions:
        renderers = ext.entry_renderers if kind == "entry" else ext.message_renderers
        renderer = renderers.get(custom_type)
        if renderer is None:
            continue

        def draw(expanded: bool, ext: Any = ext, renderer: Any = renderer) -> Any:
            return _draw(app, runner, ext, renderer, custom_type, message, expanded)

        out = draw(app.tools_expanded)
        return CustomMessageBlock(out, draw) if out is not None else None
    return None


def _draw(
    app: RendererHost, runner: ExtensionRunner, ext: Any, renderer: Any, custom_type: str, message: Any, expanded: bool
) -> Any:
    """One call of a renderer: a Rich renderable, or None (nothing, or a failure reported once)."""
    from pi_coder.extensions.theme import ThemeView

    theme = ThemeView(app.themes.theme)
    try:
        out = renderer(message, expanded=expanded, theme=theme)
        if inspect.isawaitable(out):
            if inspect.iscoroutine(out):
                out.close()  # never awaited: no "was never awaited" warning
            raise TypeError("a message renderer must return a Rich renderable or str, not a coroutine")
        if out is None:
            return None
        if isinstance(out, str):
            out = Text.from_ansi(out)
        elif not is_renderable(out):
            raise TypeError(f"a message renderer returned {type(out).__name__}, not a Rich renderable or str")
        return out
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise
    except Exception as exc:
        runner.report(ext, f"renderer:{custom_type}", exc)
        return None


def provider_completions(app: CommandContext, context: CompletionContext) -> list[Completion]:
    """The menu for a token starting with a trigger character: the newest provider that answers
    (``provider(token)`` -> items replacing the token; None lets the next one answer)."""

    for provider, triggers in app.autocomplete_providers:
        if context.query[:1] not in triggers:
            continue
        try:
            items = provider(context.query)
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except Exception as exc:
            runner = extension_runner(app.session)
            if runner is not None:
                runner.report(None, "autocomplete", exc)
            continue
        if items is None:
            continue
        return [_menu_item(item, lambda value: value) for item in items]
    return []


def _menu_item(item: object, replacement: Callable[[str], str]) -> Completion:
    """One item an extension offered for a menu (a ``Completion``, a dict with ``value``/``label``/
    ``description``, or a string), read once here; ``replacement(value)`` replaces the token."""
    from pi_coder.extensions.types import Completion as Offered
    from pi_coder.tui.completion import Completion

    if isinstance(item, Offered):
        value = str(item.value)
        label, description = item.label or value, item.description or ""
    elif isinstance(item, dict):
        value = str(item.get("value", ""))
        label, description = str(item.get("label") or value), str(item.get("description") or "")
    else:
        value = label = str(item)
        description = ""
    return Completion(label, replacement(value), description)


def argument_completions(app: CommandContext, context: CompletionContext) -> list[Completion]:
    """The menu for ``/name args``: the command's ``get_argument_completions(prefix)`` (a list of
    ``Completion``, dicts with ``value``/``label``/``description``, or strings; None: no menu)."""

    runner = extension_runner(app.session)
    if runner is None:
        return []
    name, _, prefix = context.query.partition(" ")
    found = runner.find_command("/" + name)
    complete = found[0].get_argument_completions if found is not None else None
    if found is None or complete is None:
        return []
    command = found[0]
    try:
        items = complete(prefix)
        if inspect.isawaitable(items):
            if inspect.iscoroutine(items):
                items.close()  # never awaited: no "was never awaited" warning
            raise TypeError("get_argument_completions must return a list, not a coroutine")
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise
    except Exception as exc:
        runner.report(command.extension, f"completions:{name}", exc)
        return []
    return [_menu_item(item, lambda value: f"/{name} {value}") for item in items or ()]


def extension_commands(app: CommandContext) -> list[SlashCommand]:
    """The extensions' commands as slash commands (built-in names win)."""
    runner = extension_runner(app.session)
    if runner is None:
        return []
    taken = {c.name for c in app.commands}
    out = []
    for name, command in runner.commands():
        if name in taken:
            runner.report(command.extension, f"command:{name}", ValueError(f"/{name} is a built-in command"))
            continue

        async def run(_app: CommandContext, args: str, command: Any = command) -> None:
            await runner.run_command(command, args)

        out.append(SlashCommand(name, command.description or "(extension)", run))
    return out


def extension_shortcuts(app: CommandContext) -> list[tuple[str, Shortcut]]:
    """``(textual key, Shortcut)`` of the extensions; built-in keys and earlier extensions win."""
    from pi_coder.tui.keybindings import normalize_key

    runner = extension_runner(app.session)
    if runner is None:
        return []
    taken = {k.strip() for keys in app.effective_keys.values() for k in keys.split(",") if k.strip()}
    out: list[tuple[str, Shortcut]] = []
    for ext in runner.extensions:
        for shortcut in ext.shortcuts:
            key = normalize_key(shortcut.key)
            if key is None:
                runner.report(ext, f"shortcut:{shortcut.key}", ValueError(f"{shortcut.key!r} is not a key"))
            elif key in taken:
                runner.report(ext, f"shortcut:{shortcut.key}", ValueError(f"{shortcut.key} is already bound"))
            else:
                taken.add(key)
                out.append((key, shortcut))
    return out


def bind_shortcuts(app: CommandContext) -> None:
    """(Re)bind the extensions' shortcuts as priority app bindings calling ``app.extension_shortcut(i)``."""
    for key, _ in app.extension_shortcut_list:  # the ones bound before (``/reload``)
        app._bindings.key_to_bindings.pop(key, None)
    app.extension_shortcut_list = extension_shortcuts(app)
    for index, (key, shortcut) in enumerate(app.extension_shortcut_list):
        app._bindings.bind(
            key, f"extension_shortcut({index})", shortcut.description, show=False, priority=True
        )


async def run_shortcut(app: CommandContext, index: int) -> None:
    """Call the shortcut's ``handler(ctx)``; a failure is reported like any extension error."""
    shortcuts = app.extension_shortcut_list
    runner = extension_runner(app.session)
    if runner is None or not 0 <= index < len(shortcuts):
        return
    _key, shortcut = shortcuts[index]
    ext = shortcut.extension
    if ext is None:  # set for every shortcut an extension registered
        return
    # Spawned: a handler awaiting a dialog must not hold the app's message loop.
    runner.spawn(runner.call(ext, f"shortcut:{shortcut.key}", shortcut.handler, runner.command_context(ext)))


async def reload_extensions(app: CommandContext, builtins: Sequence[SlashCommand]) -> bool:
    """``/reload`` with extensions: shutdown, re-discover and re-import, commands into ``/`` again
    (after the built-in ``builtins``)."""
    runner = extension_runner(app.session)
    if runner is None or not await runner.reload():
        return False
    app.commands = builtins
    app.commands = [*builtins, *extension_commands(app)]
    bind_shortcuts(app)
    return True


def _install_markdown_transformers(runner: ExtensionRunner) -> None:
    """Chain the extensions' Markdown transformers (load order); one that raises is skipped."""
    from pi_coder.tui.widgets.markdown_view import MarkdownContext, set_markdown_transform

    def transform(text: str, context: MarkdownContext) -> str:
        for ext in runner.extensions:
            entry = ext.markdown_transformer
            if entry is None or context.message_type not in entry[1]:
                continue
            try:
                value = entry[0](text, context)
            except Exception as exc:
                runner.report(ext, "markdown_transformer", exc)
                continue
            if isinstance(value, str):
                text = value
        return text

    if any(ext.markdown_transformer is not None for ext in runner.extensions):
        set_markdown_transform(transform)


async def start_extensions(app: AppHost) -> None:
    """Commands into ``/``, the TUI's ``ctx.ui``, load errors as warnings, then ``session_start``."""
    runner = extension_runner(app.session)
    if runner is None:
        return
    app.commands = [*app.commands, *extension_commands(app)]
    runner.set_ui(TuiUI(app), "tui")
    bind_shortcuts(app)
    _install_markdown_transformers(runner)

    def warn(record: Any) -> None:
        name = record.extension_path.rsplit("/", 1)[-1].removesuffix(".py").removeprefix("builtin:")
        app.call_later(app.notice, f"Extension {name} failed in {record.event}: {record.error}", "warning")

    runner.error_sink = warn
    runner.shutdown_requested = lambda: app.call_later(app.quit_app)
    runner.flush_errors()
    if runner.has("session_start"):  # the events module loads when a handler needs it (as extension_host)
        from pi_coder.extensions.events import SessionStartEvent

        await runner.notify("session_start", SessionStartEvent(reason="startup"))
    await runner.discover_resources("startup")
