"""The interactive TUI: ``PiApp`` drives an ``AgentSession`` and renders its events."""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, assert_never

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Static

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
from pi_coder.core.events import (
    AutoCompactionEnd,
    AutoCompactionStart,
    AutoRetryEnd,
    AutoRetryStart,
    BashExecutionEnd,
    BashExecutionStart,
    BashExecutionUpdate,
    EntryAppendedEvent,
    Event,
    ExtensionErrorEvent,
    ModelChanged,
    Notice,
    QueueChanged,
    SessionNameChanged,
    SessionSwitched,
    SubagentEvent,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
    ThinkingLevelChanged,
)
from pi_coder.tui.bridge import SessionBridge, SessionEventsPosted, StreamDelta
from pi_coder.tui.commands import COMMANDS, SlashCommand, find_command, parse_command
from pi_coder.tui.completion import (
    Completion,
    CompletionContext,
    ProjectFiles,
    ordered_filter,
    slash_candidates,
)
from pi_coder.tui.context import DialogState
from pi_coder.tui.controller import TranscriptController
from pi_coder.tui.external_editor import ExternalEditorMixin
from pi_coder.tui.format import git_branch, shorten_home
from pi_coder.tui.key_actions import KeyActionsMixin
from pi_coder.tui.key_guard import KeyGuard
from pi_coder.tui.keybindings import Keymap, load_keybindings
from pi_coder.tui.keys import KEY_ACTIONS, bindings_for, display_keys, effective_keys
from pi_coder.tui.screens import navigation
from pi_coder.tui.selection_copy import SelectionCopyMixin
from pi_coder.tui.terminal_display import TerminalDisplay
from pi_coder.tui.theming import ThemeController, session_themes
from pi_coder.tui.widgets.completion_menu import CompletionMenu
from pi_coder.tui.widgets.panels import ExtensionWidgets, HeaderPanel, PendingMessages, StatusLine
from pi_coder.tui.widgets.prompt_editor import PromptEditor, PromptHistory
from pi_coder.tui.widgets.status_bar import FooterInfo, StatusBar
from pi_coder.tui.widgets.tool_call import ToolCallBlock
from pi_coder.tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.extensions.types import Shortcut
    from pi_coder.settings import ImageSettings, Settings
    from pi_coder.tui.driver import TerminalBackground

__all__ = ["PiApp", "no_model_help"]

_Behavior = Literal["steer", "follow_up"]
"""How a prompt sent while the agent runs is queued."""

_APP_ACTIONS = frozenset(a.action.split("(")[0] for a in KEY_ACTIONS if a.scope == "app")


def no_model_help(models_toml: str | None = None) -> Text:
    """How to configure a model (core's text, styled), as a light renderable (no Markdown parser at start-up)."""
    from pi_coder.core.no_model import LOCAL_EXAMPLE, NO_MODEL_HEADLINE, NO_MODEL_MARKERS, no_model_text
    from pi_coder.paths import config_dir

    where = models_toml if models_toml is not None else str(config_dir() / "models.toml")
    text = Text(no_model_text(where))
    text.stylize("bold yellow", 0, len(NO_MODEL_HEADLINE))
    text.highlight_words([LOCAL_EXAMPLE], "cyan")
    text.highlight_words([*NO_MODEL_MARKERS, shorten_home(where)], "bold")
    return text


_EXACT_INFO_CHARS = 20_000
"""Info blocks (``show_markdown``) up to this size are rendered when first laid out."""


class PiApp(KeyActionsMixin, ExternalEditorMixin, SelectionCopyMixin, App[int]):
    """The ``pi`` terminal UI.

    Args:
        session: The AgentSession to drive.
        initial_messages: Prompts sent one after another once the screen is up.
        startup_notices: Lines shown at the top of the transcript (warnings from the CLI).
        startup_news: Information lines shown above them (a local server was found).
        keymap: The key table's overrides and their warnings (default: the session's
            ``[keybindings]`` settings, as ``run_tui`` builds them).
        themes: The theme controller with the start theme loaded, not yet attached (default:
            ``session_themes(session)``, as ``run_tui`` builds it).
        version: Version shown in the header (default: the package version).
        cwd_display: Footer cwd text (default: the session cwd with ``~``).
        branch: Git branch for the footer; ``None`` looks it up, ``""`` hides it.
        animate: Spinners and elapsed-time clocks (off for deterministic snapshots).
        hide_thinking: Start with thinking blocks collapsed.
        resume: Open the session picker at start (``pi -r``); cancelling it quits.
        initial_images: Images for the first initial message (``pi @shot.png "..."``).
        clipboard_image: Reads the clipboard's image for Ctrl+V (default: the system clipboard tools).
    """

    # The dialogs' style sheets (their screens' CSS_PATH, the same files) are read at start: a
    # sheet first read when its screen is pushed restyles every widget of the app (the whole
    # transcript) before the dialog opens.
    CSS_PATH = [
        "pi.tcss",
        "screens/dialogs.tcss",
        "screens/picker.tcss",
        "screens/settings_screen.tcss",
        "screens/tree_view.tcss",
    ]
    ENABLE_COMMAND_PALETTE = False
    TITLE = "pi"
    BINDINGS = bindings_for("app")

    def __init__(
        self,
        session: AgentSession,
        *,
        initial_messages: Sequence[str] = (),
        startup_notices: Sequence[str] = (),
        startup_news: Sequence[str] = (),
        keymap: Keymap | None = None,
        themes: ThemeController | None = None,
        version: str | None = None,
        cwd_display: str | None = None,
        branch: str | None = None,
        animate: bool = True,
        hide_thinking: bool = False,
        resume: bool = False,
        initial_images: Sequence[Any] = (),
        clipboard_image: Any = None,
    ) -> None:
        from pi_coder.tui.driver import driver_class

        if themes is None:
            themes = session_themes(session)
        # The terminal's own colours (its background shows; NO_COLOR drops every colour rather
        # than turning them grey) unless the page is painted: tui/theming.py.
        super().__init__(driver_class=driver_class(), ansi_color=True if themes.native_colors else None)
        self.session = session
        self.initial_messages = list(initial_messages)
        self.initial_images = list(initial_images)
        self._clipboard_image = clipboard_image
        self.startup_notices = list(startup_notices)
        self.startup_news = list(startup_news)
        self.dialogs = DialogState()
        self._resume_at_start = resume
        if keymap is None:
            keymap = load_keybindings(session.settings)
        self._startup_warnings: list[str] = list(keymap.warnings)
        self.themes = themes
        self.terminal_display = TerminalDisplay(self)
        """Output padding, the hardware cursor, the terminal's progress indicator."""
        self._startup_warnings.extend(self.themes.attach(self, on_warning=self._theme_warning))
        self.effective_keys = effective_keys(keymap.overrides)
        self._keymap_overrides: dict[str, str] = dict(keymap.overrides)
        if version is None:
            from pi_coder import __version__

            version = __version__
        self.version = version
        cwd = session.cwd
        self.cwd = cwd
        self.cwd_display = cwd_display if cwd_display is not None else shorten_home(cwd)
        self._branch_fixed = branch
        self._statuses: dict[str, str] = {}
        self.animations = animate
        self.hide_thinking = hide_thinking
        self.tools_expanded = False
        self.commands: Sequence[SlashCommand] = COMMANDS
        self._gc_frozen = False
        self.bridge: SessionBridge | None = None
        self._last_clear = 0.0
        self._project_files = ProjectFiles(cwd)
        history: list[str] = []
        try:
            history = session.user_prompt_history()
        except Exception:
            history = []
        self.history = PromptHistory(history)
        self.controller: TranscriptController | None = None
        self.exit_transcript: list[Text] = []
        """The conversation's rows, kept when quitting, for ``run_tui`` to print (tui/exit_output.py)."""
        self.working_message: str | None = None
        self.autocomplete_providers: list[tuple[Any, str]] = []
        """``ctx.ui.add_autocomplete_provider``: ``(provider, trigger characters)``, newest first."""
        self.terminal_input_handlers: list[Callable[[str, str | None], Any]] = []
        """``ctx.ui.on_terminal_input``: see each key first; a true result consumes it."""
        """``ctx.ui.set_working_message``: the status line's text while a run is active."""
        """``ctx.ui.set_status`` texts by key, shown in the footer."""
        self.extension_shortcut_list: list[tuple[str, Shortcut]] = []
        """The extensions' shortcuts bound as app keys (``extension_ui.bind_shortcuts``)."""

    def _use_discovered_themes(self) -> None:
        """Themes from ``resources_discover`` join the theme list; the ``theme`` setting is
        loaded again, since it may name one of them (its earlier failure is then not shown)."""
        from pi_coder.tui.theming import session_theme_paths

        paths = session_theme_paths(self.session)
        if paths == self.themes.extra_paths:
            return
        self.themes.extra_paths = paths
        failure = self.themes.last_warning
        if failure is not None and failure in self._startup_warnings:
            self._startup_warnings.remove(failure)
        self.themes.use(self._settings().theme or "dark")

    def on_terminal_background(self, message: TerminalBackground) -> None:
        """The terminal's answer to the background query (tui/terminal_display.py)."""
        self.themes.terminal_background(message.light)

    def _theme_warning(self, text: str) -> None:
        if self.is_running and self.controller is not None:
            self.call_later(self.notice, text, "warning")
        else:
            self._startup_warnings.append(text)

    def _settings(self) -> Settings:
        return self.session.settings

    def get_theme_variable_defaults(self) -> dict[str, str]:
        from pi_coder.tui.theming import default_theme_variables

        return {**super().get_theme_variable_defaults(), **default_theme_variables()}

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        """Textual's frame writer; a dialog's guard opens once a frame of it was written."""
        super()._display(screen, renderable)
        if renderable is not None and isinstance(screen, KeyGuard):
            screen._drawn()

    async def on_event(self, event: events.Event) -> None:
        # A dialog ignores keys sent before it was drawn (tui/key_guard.py).
        if isinstance(event, events.Key) and isinstance(self.screen, KeyGuard) and not self.screen.accepts_key(event):
            return
        if isinstance(event, events.Key) and self.terminal_input_handlers and self._terminal_input(event):
            event.stop()
            event.prevent_default()
            return
        await super().on_event(event)

    def _terminal_input(self, event: events.Key) -> bool:
        """Offer a key to the extensions' ``on_terminal_input`` handlers; True when one consumed it."""
        for handler in tuple(self.terminal_input_handlers):
            try:
                result = handler(event.key, event.character)
            except Exception as exc:
                runner = self.session.extensions
                if runner is not None:
                    runner.report(None, "terminal_input", exc)
                continue
            if result is True or (isinstance(result, dict) and result.get("consume")):
                return True
        return False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While a dialog is open the app's own key actions (Esc abort, Ctrl+D quit, Ctrl+P
        # model...) are off, so the dialog gets those keys.
        if action in _APP_ACTIONS and len(self.screen_stack) > 1:
            return False
        return super().check_action(action, parameters)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        transcript = Transcript(id="transcript")
        yield transcript
        yield transcript.marker
        with Vertical(id="bottom"):
            yield PendingMessages()
            yield StatusLine(animate=self.animations)
            yield ExtensionWidgets(id="widgets-above")
            menu = CompletionMenu(max_visible=self.session.settings.autocomplete_max_visible)
            yield menu
            editor = PromptEditor(
                prompt_history=self.history,
                menu=menu,
                completion_source=self._completions,
                cwd=self.cwd,
                clipboard_image=self._clipboard_image,
                id="editor",
            )
            padding_x = self.session.settings.editor_padding_x
            if padding_x:  # setting ``editor_padding_x``: columns beyond the one inside the border
                editor.styles.padding = (0, 1 + padding_x)
            yield editor
            yield ExtensionWidgets(id="widgets-below")
            yield StatusBar()

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def editor(self) -> PromptEditor:
        return self.query_one(PromptEditor)

    @property
    def status_line(self) -> StatusLine:
        return self.query_one(StatusLine)

    def _header_hints(self) -> list[tuple[str, str]]:
        k = self.effective_keys
        return [
            (display_keys(k["app.interrupt"]), "interrupt"),
            (display_keys(k["app.clear"]), "clear"),
            (display_keys(k["app.clear"]) + " twice", "exit"),
            (display_keys(k["app.exit"]), "exit (empty)"),
            (display_keys(k["app.thinking.cycle"]), "thinking"),
            (display_keys(k["app.model.cycleForward"]), "model"),
            (display_keys(k["app.tools.expand"]), "tools"),
            (display_keys(k["app.thinking.toggle"]), "thinking blocks"),
            ("/", "commands"),
            ("!", "bash"),
            ("!!", "bash (no context)"),
            (display_keys(k["app.message.followUp"]), "follow-up"),
            (display_keys(k["app.message.dequeue"]), "dequeue"),
        ]

    async def on_mount(self) -> None:
        if self._keymap_overrides:
            self.set_keymap(self._keymap_overrides)
        self.controller = TranscriptController(self, self.transcript)
        self.bridge = SessionBridge(self.session, self)
        if self.session.mcp is not None:  # connect in the background once the first frame is up
            self.call_after_refresh(self.session.mcp.start)
        # a new folder's first snapshot, while the user types
        self.call_after_refresh(self.session.checkpoints.warm_up)
        if self.session.extensions is not None:
            from pi_coder.tui.extension_ui import start_extensions

            await start_extensions(self)
            self._use_discovered_themes()
        self.editor.set_thinking_level(self.session.thinking_level)
        self.editor.cursor_blink = False
        self.editor.focus()
        self.terminal_display.apply(self.session.settings)
        from pi_coder.tui.widgets.markdown_view import set_code_block_indent, set_table_row_separators

        markdown = self.session.settings.markdown
        set_code_block_indent(markdown.code_block_indent)
        set_table_row_separators(markdown.table_row_separators)
        await self._render_start()
        self.refresh_footer()
        warnings, self._startup_warnings = self._startup_warnings, []
        for text in warnings:
            await self.notice(text, "warning")
        self.themes.watch(1.0)
        if self._resume_at_start:
            self._resume_at_start = False
            navigation.run_dialog(self, navigation.resume_at_start(self))
        self.set_timer(1.0, self._after_startup)  # once the first frame is on screen
        if os.environ.get("TMUX"):
            self.run_worker(self._check_tmux_keys(), group="startup", exit_on_error=False)
        if self.initial_messages:
            messages = list(self.initial_messages)
            self.run_worker(self._send_initial(messages), group="prompt", exit_on_error=False)

    async def _render_start(self) -> None:
        assert self.controller is not None
        context_files = [str(p) for p in self.session.context_files]
        if not self.session.settings.quiet_startup:
            await self.transcript.add(HeaderPanel(self.version, self._header_hints(), context_files))
        for line in self.startup_news:
            await self.controller.note(line, "info")
        for notice in self.startup_notices:
            await self.controller.note(notice, "warning")
        if self.session.model is None:
            path = self.session.models.models_toml_path
            help_block = Static(no_model_help(str(path) if path else None), classes="no-model")
            help_block.styles.margin = (1, 1, 0, 1)
            help_block.styles.padding = (0, 1)
            await self.transcript.add(help_block)
        messages = list(self.session.messages)
        if messages:
            await self.controller.render_history(messages)

    async def _send_initial(self, messages: list[str]) -> None:
        for index, text in enumerate(messages):
            images = self.initial_images if index == 0 else []
            await self._send_prompt(text, "follow_up", images or None)

    async def _check_tmux_keys(self) -> None:
        """Pi's warning when tmux would drop Shift+Enter (its ``extended-keys`` is off)."""
        from pi_coder.tui.driver import tmux_extended_keys_warning

        warning = await asyncio.to_thread(tmux_extended_keys_warning)
        if warning:
            await self.notice(warning, "warning")

    def _after_startup(self) -> None:
        # Idle time after the first frame: load the Markdown renderer (markdown-it, Pygments) now
        # rather than in the middle of the first answer.
        from pi_coder._dataclass_cache import save
        from pi_coder.tui.widgets.markdown_view import warm_up

        warm_up(self.console)
        save()  # the dataclass methods compiled at start, for the next start (pi_coder/_dataclass_cache.py)
        navigation.warm_up(self)  # the dialogs' modules and this folder's session list
        # Modules, widgets and styles built at start-up live as long as the app: keeping them out
        # of the cyclic GC's scans makes every collection during a stream cheaper. ``pi`` paused
        # the GC while it started (modes/launch.py): it runs again from here.
        gc.collect()
        gc.freeze()
        self._gc_frozen = True
        gc.enable()

    def on_unmount(self) -> None:
        if self._gc_frozen:
            gc.unfreeze()
            self._gc_frozen = False
        self.terminal_display.close()
        self._close_bridge()

    def _close_bridge(self) -> None:
        if self.bridge is not None:
            self.bridge.close()

    async def _shutdown(self) -> None:
        # Textual prunes the screens first and dispatches the app's Unmount last: stop the session
        # events before any widget goes, whichever way the app ends (exit, a test harness).
        self._close_bridge()
        await super()._shutdown()

    # ------------------------------------------------------------------ session events

    @property
    def events_pending(self) -> bool:
        """True while session events wait to be rendered."""
        return self.bridge is not None and self.bridge.pending

    async def on_session_events_posted(self, message: SessionEventsPosted) -> None:
        bridge, controller = self.bridge, self.controller
        if bridge is None or controller is None or bridge.closed:
            return  # closed: a wake-up posted before the close, the screens may be gone
        for event in bridge.drain():
            if bridge.closed:
                return
            await self._dispatch(event, controller)
        if not bridge.closed:
            self.transcript.note_activity()

    async def _dispatch(self, event: Event | StreamDelta, controller: TranscriptController) -> None:
        match event:
            case MessageUpdate() | StreamDelta():
                await controller.handle(event)
                return
            case AgentStart():
                self.status_line.start(self.working_message or "Working...")
                self.terminal_display.busy(True)
            case AgentEnd():
                self.status_line.stop()
                self.terminal_display.busy(False)
            case QueueChanged():
                self.query_one(PendingMessages).show_queue(event.steering, event.follow_up)
            case AutoCompactionStart():
                label = {
                    "overflow": "Context overflow detected, Auto-compacting... (Esc to cancel)",
                    "manual": "Compacting context... (Esc to cancel)",
                }.get(event.reason, "Auto-compacting... (Esc to cancel)")
                self.status_line.start(label)
            case AutoCompactionEnd() | AutoRetryEnd():
                self._restore_status()
            case AutoRetryStart():
                deadline = time.monotonic() + event.delay_ms / 1000
                self.status_line.start(
                    f"Retrying ({event.attempt}/{event.max_attempts}) in {{s}}s... (Esc to cancel)",
                    deadline=deadline,
                    level="warning",
                )
            case ModelChanged() | ThinkingLevelChanged() | SessionNameChanged():
                self.editor.set_thinking_level(self.session.thinking_level)
                self.refresh_footer()
            case SessionSwitched():
                await self._rebuild()
                if event.reason == "new":
                    await controller.note("✓ New session started", "success")
                return
            case (
                TurnStart()
                | TurnEnd()
                | MessageStart()
                | MessageEnd()
                | ToolExecutionStart()
                | ToolExecutionUpdate()
                | ToolExecutionEnd()
                | BashExecutionStart()
                | BashExecutionUpdate()
                | BashExecutionEnd()
                | SummarizationRetryScheduled()
                | SummarizationRetryAttemptStart()
                | SummarizationRetryFinished()
                | Notice()
                | ExtensionErrorEvent()
                | EntryAppendedEvent()
                | SubagentEvent()
            ):
                pass  # the transcript's alone
            case _:
                if TYPE_CHECKING:  # a new event class must be placed above; at run time it reaches the transcript
                    assert_never(event)
        await controller.handle(event)

    def _restore_status(self) -> None:
        if self.session.is_streaming:
            self.status_line.start(self.working_message or "Working...")
        else:
            self.status_line.stop()

    async def _rebuild(self) -> None:
        assert self.controller is not None
        await self.controller.clear()
        self.query_one(PendingMessages).show_queue([], [])
        self.history.entries.clear()
        for entry in self.session.user_prompt_history():
            self.history.add(entry)
        await self._render_start()
        self.editor.set_thinking_level(self.session.thinking_level)
        self.refresh_footer()

    # ------------------------------------------------------------------ footer

    def footer_info(self) -> FooterInfo:
        session = self.session
        info = FooterInfo(cwd=self.cwd_display)
        info.branch = git_branch(self.cwd) if self._branch_fixed is None else (self._branch_fixed or None)
        info.session_name = session.session_name
        try:
            stats = session.stats()
        except Exception:
            stats = None
        if stats is not None:
            info.input, info.output = stats.input, stats.output
            info.cache_read, info.cache_write = stats.cache_read, stats.cache_write
            info.cost = stats.cost
            info.context_percent = stats.context_percent
            info.context_window = stats.context_window
        info.auto_compaction = session.auto_compaction_enabled
        model = session.model
        if model is not None:
            info.model = model.id
            info.provider = model.provider
            info.reasoning = bool(model.reasoning)
            info.thinking_level = session.thinking_level
        info.statuses = [text for _key, text in sorted(self._statuses.items())]
        return info

    def show_statuses(self, statuses: dict[str, str]) -> None:
        """Extension statuses (``ctx.ui.set_status``), shown on the footer's third line."""
        self._statuses = dict(statuses)
        self.refresh_footer()

    def refresh_footer(self) -> None:
        try:
            bar = self.query_one(StatusBar)
        except Exception:
            return
        bar.show(self.footer_info())

    # ------------------------------------------------------------------ completion

    def _completions(self, context: CompletionContext) -> list[Completion]:
        match context.kind:
            case "slash":
                return self._slash_completions(context.query)
            case "file":
                return self._project_files.complete(context.query)
            case "argument":
                from pi_coder.tui.extension_ui import argument_completions

                return argument_completions(self, context)
            case "extension":
                from pi_coder.tui.extension_ui import provider_completions

                return provider_completions(self, context)
            case "path":
                return []  # the editor lists paths itself
            case _:
                assert_never(context.kind)

    def _slash_completions(self, query: str) -> list[Completion]:
        names = {c.name: c for c in self.commands}
        templates: dict[str, str] = {}
        try:
            for template in self.session.prompt_templates:
                templates[template.name] = template.description
        except Exception:
            templates = {}
        skills = self.session.skills
        if skills and self.session.settings.enable_skill_commands:
            from pi_coder.resources.skills import SkillSet

            for skill in skills.skills if isinstance(skills, SkillSet) else skills:
                templates.setdefault(f"skill:{skill.name}", skill.description)
        if self.session.mcp is not None:  # the connected MCP servers' prompts (docs/mcp.md#prompts)
            from pi_coder.mcp.prompts import records

            for record in records(self.session.mcp):
                templates.setdefault(record["name"], record["description"])
        builtins = [c.name for c in COMMANDS if c.name in names]
        others = [t for t in templates if not t.startswith("skill:")]
        others += [n for n in names if n not in builtins] + [t for t in templates if t.startswith("skill:")]
        out = []
        for name in ordered_filter(query, slash_candidates(builtins, others)):
            command = names.get(name)
            description = command.description if command else templates.get(name, "")
            out.append(Completion("/" + name, "/" + name, description))
        return out

    # ------------------------------------------------------------------ submitting

    async def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        text = message.text
        editor = self.editor
        stripped = text.strip()
        if stripped.startswith("!"):
            if self.session.is_bash_running:
                await self.notice(
                    "A bash command is already running. Press Esc to cancel it first.", "warning"
                )
                if not editor.text:
                    editor.set_text(text)  # give the command back to edit or send later
                return
            exclude = stripped.startswith("!!")
            command = stripped[2:] if exclude else stripped[1:]
            if command.strip():
                self.run_worker(self._run_bash(command.strip(), exclude), group="bash", exit_on_error=False)
            return
        parsed = parse_command(stripped)
        if parsed is not None:
            slash = find_command(parsed[0], self.commands)
            if slash is not None:
                self.run_worker(self._run_command(slash, parsed[1]), group="command", exit_on_error=False)
                return
        behavior: _Behavior = "follow_up" if message.follow_up else "steer"
        self.run_worker(self._prompt(text, behavior, message.images), group="prompt", exit_on_error=False)

    async def _prompt(self, text: str, behavior: _Behavior, pending: Sequence[Any] = ()) -> None:
        images = None
        if pending or "@" in text:
            from pi_coder.tui.image_input import prompt_images

            images_settings = self.session.settings.images
            auto_resize = images_settings.auto_resize
            try:
                text, found = await asyncio.to_thread(prompt_images, text, pending, self.cwd, auto_resize=auto_resize)
            except Exception as exc:
                await self.notice(f"Error: could not attach the images: {exc}", "error")
                return
            images = found or None
            if images:
                await self._image_warning(images_settings)
        await self._send_prompt(text, behavior, images)

    async def _image_warning(self, images_settings: ImageSettings) -> None:
        """Say when attached images will not reach the model as images."""
        model = self.session.model
        if images_settings.block_images:
            await self.notice("Images are blocked (setting images.block_images): the model gets a note instead.", "warning")
        elif model is not None and "image" not in model.input:
            await self.notice(f"{model.id} does not accept images: the model gets a note instead.", "warning")

    async def _send_prompt(self, text: str, behavior: _Behavior, images: Any = None) -> None:
        try:
            if images:
                await self.session.prompt(text, images, streaming_behavior=behavior)
            else:
                await self.session.prompt(text, streaming_behavior=behavior)
        except Exception as exc:
            await self.notice(f"Error: {exc}", "error")

    async def _run_bash(self, command: str, exclude: bool) -> None:
        try:
            await self.session.run_bash(command, exclude_from_context=exclude)
        except Exception as exc:
            await self.notice(f"Error: {exc}", "error")

    async def _run_command(self, command: SlashCommand, args: str) -> None:
        try:
            await command.run(self, args)
        except Exception as exc:
            await self.notice(f"/{command.name}: {exc}", "error")

    # ------------------------------------------------------------------ helpers used by commands

    def status(self, text: str, level: str = "info") -> None:
        """A dim status line in the transcript; consecutive ones replace each other."""
        if self.controller is not None:
            self.call_later(self.controller.note, text, level, replace=True)

    async def notice(self, text: str, level: str = "info") -> None:
        if self.controller is not None:
            await self.controller.note(text, level)

    async def show_markdown(self, text: str) -> None:
        # The transcript's own Markdown widget: one line-API widget drawn lazily (Textual's
        # Markdown builds a widget per block and per table cell: /hotkeys took a second).
        from pi_coder.tui.widgets.markdown_view import StreamingMarkdown

        def info() -> StreamingMarkdown:
            # A short block is laid out at its rendered height at once (an estimate corrected when
            # it is painted costs another layout of the transcript); a long one renders as it shows.
            block = StreamingMarkdown(text, message_type="info", lazy=len(text) > _EXACT_INFO_CHARS)
            block.add_class("info-block")
            block.styles.padding = (0, 1)
            block.styles.margin = (1, 1, 0, 1)
            return block

        block = info()
        await self.transcript.add(block)
        self.transcript.keep(block, info)

    async def new_session(self) -> None:
        if self.session.is_streaming:
            self.session.abort()
            await self.session.wait_for_idle()
        await self.session.new_session()

    async def compact(self, instructions: str | None) -> None:
        if not [m for m in self.session.messages if m.role != "system"]:
            await self.notice("Nothing to compact (no messages yet)", "warning")
            return
        if self.session.is_streaming:
            self.session.abort()
            await self.session.wait_for_idle()
        self.status_line.start("Compacting context... (Esc to cancel)")
        if self.bridge is not None:
            self.bridge.compaction_error_reported = False
        try:
            await self.session.compact(instructions)
        except Exception as exc:
            if not (
                self.bridge is not None and self.bridge.compaction_error_reported
            ):  # else the compaction end event showed it
                await self.notice(f"Compaction failed: {exc}", "error")
        finally:
            self._restore_status()

    async def action_extension_shortcut(self, index: int) -> None:
        from pi_coder.tui.extension_ui import run_shortcut

        await run_shortcut(self, index)

    async def action_quit(self) -> None:
        await self.quit_app()

    async def quit_app(self) -> None:
        await self._keep_transcript()
        self._close_bridge()  # events of the closing session are not rendered any more
        await self._close_session()
        self.exit(0)

    async def _keep_transcript(self) -> None:
        """The conversation as drawn, for ``run_tui`` to print once the screen is restored (as Pi;
        setting ``fullscreen_exit_output``): the whole of it, the earlier blocks the transcript's
        window had not mounted yet included."""
        if self._settings().fullscreen_exit_output != "transcript":
            return
        from pi_coder.tui.exit_output import transcript_rows

        try:
            await self.transcript.load_all()
            self.exit_transcript = transcript_rows(self.transcript)
        except Exception:  # never let a drawing problem stand in the way of quitting
            self.exit_transcript = []

    async def _close_session(self) -> None:
        extensions = self.session.extensions
        if extensions is not None:
            await extensions.shutdown("quit")
        try:
            await asyncio.wait_for(self.session.close(), timeout=5)
        except Exception:
            pass

    def schedule_edit_preview(self, block: ToolCallBlock) -> None:
        self.run_worker(self._edit_preview(block), group="preview", exit_on_error=False)

    async def _edit_preview(self, block: ToolCallBlock) -> None:
        from pi_coder.tui.edit_preview import preview_edit

        diff, error = await asyncio.to_thread(preview_edit, dict(block.view.args), self.cwd)
        if block.view.status not in ("success", "error"):
            block.set_preview(diff, error)
