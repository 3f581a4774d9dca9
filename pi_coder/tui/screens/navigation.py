"""The TUI's dialog flows as functions: the model, session and fork pickers, /tree and /settings.

Each takes the app as a :class:`~pi_coder.tui.context.CommandContext` (the narrow view slash
commands get), so the flows neither inherit from nor import ``PiApp``. The key actions of
``PiApp`` and the slash commands call them; state that outlives one flow (a branch summary
running, the time of the last Esc) lives in the app's :class:`~pi_coder.tui.context.DialogState`.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pi_coder.ai.types import Model
    from pi_coder.tui.context import CommandContext
    from pi_coder.tui.screens.settings_screen import SettingItem

__all__ = [
    "cancel_branch_summary",
    "handle_idle_escape",
    "open_fork",
    "open_model_picker",
    "open_session_picker",
    "open_settings",
    "open_tree",
    "resume_at_start",
    "run_dialog",
    "save_settings",
    "setting_items",
    "switch_model",
    "warm_up",
]

_DOUBLE_ESCAPE_SECONDS = 0.5


def _same_file(a: str | Path, b: str | Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


# ---------------------------------------------------------------------- helpers


def save_settings(app: CommandContext, updates: dict[str, Any]) -> None:
    """Write ``updates`` to the global settings.toml and apply them (the session's writer keeps comments)."""
    app.session.save_settings(updates)


def _queue_mode(value: str) -> Literal["one-at-a-time", "all"]:
    """A steering or follow-up mode chosen in /settings (one of the two values it offers)."""
    return "all" if value == "all" else "one-at-a-time"


def run_dialog(app: CommandContext, flow: Coroutine[Any, Any, Any]) -> None:
    """Run a dialog flow in the background (key actions must return at once)."""
    app.run_worker(flow, group="dialog", exit_on_error=False)


def _note(app: CommandContext, text: str, level: str = "") -> None:
    app.status_line.note(text, level)


# ---------------------------------------------------------------------- Esc


def cancel_branch_summary(app: CommandContext) -> bool:
    """Esc while a branch summary runs: abort it (navigation then does not happen)."""
    if not app.dialogs.summarizing:
        return False
    app.session.abort()
    return True


def handle_idle_escape(app: CommandContext) -> bool:
    """Esc on an empty, idle editor: the second press within 0.5 s opens /tree or /fork.

    Returns:
        True when the press opened a dialog.
    """
    action = app.session.settings.double_escape_action
    if action not in ("tree", "fork") or app.editor.text:
        return False
    now = time.monotonic()
    if now - app.dialogs.last_escape < _DOUBLE_ESCAPE_SECONDS:
        app.dialogs.last_escape = 0.0
        run_dialog(app, open_tree(app) if action == "tree" else open_fork(app))
        return True
    app.dialogs.last_escape = now
    return False


# ---------------------------------------------------------------------- warm-up

_DIALOG_MODULES = (
    "pi_coder.tui.screens.settings_screen",
    "pi_coder.tui.screens.settings_items",
    "pi_coder.tui.screens.model_picker",
    "pi_coder.tui.screens.session_picker",
    "pi_coder.tui.screens.tree_view",
)


def warm_up(app: CommandContext) -> None:
    """Idle time after start-up: what the first /settings, /model, /tree and /resume would pay
    for is done now (the modules imported, one per event-loop turn so keys still go through;
    this folder's sessions summarised in a thread, so /resume lists them in its first frame)."""
    # The function, not a coroutine object: a worker cancelled before it starts (the app quit at
    # once) then leaves no coroutine that was never awaited.
    app.run_worker(functools.partial(_warm_up, app), group="warm-up", exit_on_error=False)


async def _warm_up(app: CommandContext) -> None:
    for name in _DIALOG_MODULES:
        importlib.import_module(name)
        await asyncio.sleep(0)
    from pi_coder.session.listing import list_sessions

    session = app.session
    session_dir = session.store.session_dir
    await asyncio.to_thread(list_sessions, session.cwd, str(session_dir) if session_dir is not None else None)


# ---------------------------------------------------------------------- model


async def open_model_picker(app: CommandContext, term: str = "") -> None:
    """Ctrl+L / ``/model [term]``: an exact ``provider/id`` or id switches at once, else pick."""
    from pi_coder.tui.screens.model_picker import ModelPicker, exact_model_match, reload_models

    session = app.session
    error = reload_models(app)
    if error:
        _note(app, error, "error")
    models = list(session.available_models())
    if term.strip():
        exact = exact_model_match(term, models)
        if exact is not None:
            switch_model(app, exact)
            return
    scoped = [model for model, _ in session.scoped_models]
    def save_default(model: Model) -> None:
        session.save_settings({"default_provider": model.provider, "default_model": model.id})

    picker = ModelPicker(models, session.model, scoped=scoped, query=term.strip(), save_default=save_default)
    chosen = await app.push_screen_wait(picker)
    if chosen is not None:
        switch_model(app, chosen)


def switch_model(app: CommandContext, model: Model) -> None:
    """Switch to ``model`` for this session (a missing key is shown, not raised); the picker's
    Ctrl+S is what saves a default, as in Pi."""
    try:
        app.session.set_model(model, save_default=False)
    except Exception as exc:
        _note(app, str(exc), "error")
        return
    _note(app, f"Model: {model.id}")
    app.editor.set_thinking_level(app.session.thinking_level)
    app.refresh_footer()


# ---------------------------------------------------------------------- sessions


async def open_session_picker(app: CommandContext) -> bool:
    """``/resume``: pick a session and switch to it in place; False when nothing was chosen."""
    from pi_coder.tui.screens.session_picker import SessionPicker, rename_session_file

    session = app.session
    current = session.session_file

    def rename(path: Path, name: str) -> None:
        if current is not None and _same_file(current, path):
            session.set_session_name(name)
        else:
            rename_session_file(path, name)

    session_dir = session.store.session_dir
    picker = SessionPicker(
        session.cwd,
        session_dir=str(session_dir) if session_dir is not None else None,
        current_file=current,
        on_rename=rename,
    )
    path = await app.push_screen_wait(picker)
    if path is None:
        return False
    if current is not None and _same_file(current, path):
        _note(app, "Already in this session")
        return True
    try:
        await session.switch_session(str(path))
    except Exception as exc:
        await app.notice(f"Could not open the session: {exc}", "error")
        return False
    _note(app, "Resumed session")
    return True


async def resume_at_start(app: CommandContext) -> None:
    """``pi -r``: the session picker at start; cancelling it quits."""
    if not await open_session_picker(app):
        await app.session.close()
        app.exit(0, message="No session selected")


async def open_fork(app: CommandContext) -> None:
    """``/fork``: new session file with the history before a chosen user message."""
    from pi_coder.tui.screens.fork_picker import ForkPicker

    session = app.session
    candidates = list(session.fork_candidates())
    if not candidates:
        await app.notice("No messages to fork from", "warning")
        return
    entry_id = await app.push_screen_wait(ForkPicker(candidates))
    if entry_id is None:
        return
    from pi_coder.tui.screens.checkpoint_commands import ask_restore_mode, fork_with_code, restore_code

    mode = await ask_restore_mode(app, entry_id, "the fork")
    if mode is None:
        return
    if mode == "code":
        await restore_code(app, entry_id)
        return
    try:
        if mode == "both":
            done, text = await fork_with_code(app, entry_id)
            if not done:
                return
        else:
            text = await session.fork(entry_id)
    except Exception as exc:
        await app.notice(f"Fork failed: {exc}", "error")
        return
    if text is None:
        _note(app, "Fork cancelled by an extension")
        return
    app.editor.set_text(text)
    _note(app, "Branched to new session")


# ---------------------------------------------------------------------- tree


async def open_tree(app: CommandContext) -> None:
    """``/tree``: move to another point of this session, optionally summarising the branch left."""
    from pi_coder.session.entries import CustomMessageEntry, MessageEntry
    from pi_coder.tui.screens.dialogs import ChoiceDialog, InputDialog
    from pi_coder.tui.screens.tree_view import TreeScreen

    session = app.session
    store = session.store
    settings = session.settings
    if not store.get_entries():
        await app.notice("No entries in this session yet", "warning")
        return
    while True:
        screen = TreeScreen(
            store.get_tree(),
            store.leaf_id,
            filter_mode=settings.tree_filter_mode,
            on_label=store.append_label,
        )
        entry_id = await app.push_screen_wait(screen)
        if entry_id is None:
            return
        entry = store.get_entry(entry_id)
        rewinds = (
            isinstance(entry, MessageEntry) and entry.role == "user" or isinstance(entry, CustomMessageEntry)
        )
        if entry_id == store.leaf_id or (entry_id == screen.model.active_id() and not rewinds):
            _note(app, "Already at this point")
            return
        from pi_coder.tui.screens.checkpoint_commands import ask_restore_mode, restore_code

        mode = await ask_restore_mode(app, entry_id, "moving there")
        if mode is None:
            continue  # back to the tree
        if mode == "code":
            await restore_code(app, entry_id)
            return
        while True:
            instructions: str | None = None
            choice = "none"
            if not settings.branch_summary.skip_prompt:
                choice = await app.push_screen_wait(
                    ChoiceDialog(
                        "Summarize branch?",
                        [
                            ("none", "No summary"),
                            ("summary", "Summarize"),
                            ("custom", "Summarize with custom prompt"),
                        ],
                        message="Summarize the branch you are leaving before moving?",
                    )
                )
                if choice is None:
                    break  # back to the tree
                if choice == "custom":
                    instructions = await app.push_screen_wait(
                        InputDialog(
                            "Summary instructions",
                            placeholder="What should the summary focus on?",
                            hint="Enter: summarize · Esc: back",
                        )
                    )
                    if instructions is None:
                        continue  # back to the question
            force = False
            if mode == "both":
                from pi_coder.tui.screens.checkpoint_commands import confirm_hand_edits

                answer = await confirm_hand_edits(app, entry_id)
                if answer is None:
                    return
                force = answer
            outcome = await _navigate(
                app, entry_id, choice != "none", instructions or None, with_code=mode == "both", force=force
            )
            mode = "conversation"  # the code is restored once, even if the tree reopens
            if outcome == "kept":
                return
            if outcome == "cancelled":
                break  # reopen the tree
            return


async def _navigate(
    app: CommandContext,
    entry_id: str,
    summarize: bool,
    instructions: str | None,
    with_code: bool = False,
    force: bool = False,
) -> str:
    """Move to ``entry_id``; ``with_code``: files too, in one checkpoint restore ("kept": not done)."""
    session = app.session
    old_leaf = session.store.leaf_id
    if summarize:
        app.dialogs.summarizing = True
        app.status_line.start("Summarizing branch... (Esc to cancel)")
    try:
        if with_code:
            from pi_coder.tui.screens.checkpoint_commands import restore_both

            done, text = await restore_both(app, entry_id, summarize, instructions, force)
            if not done:
                return "kept"
        else:
            text = await session.navigate_tree(entry_id, summarize=summarize, instructions=instructions)
    except Exception as exc:
        await app.notice(f"Navigation failed: {exc}", "error")
        return "failed"
    finally:
        if summarize:
            app.dialogs.summarizing = False
            app.status_line.stop()
    if summarize and session.store.leaf_id == old_leaf:
        _note(app, "Branch summarization cancelled", "warning")
        return "cancelled"
    if text and not app.editor.text.strip():
        app.editor.set_text(text)
    _note(app, "Navigated to selected point")
    return "done"


# ---------------------------------------------------------------------- settings


async def open_settings(app: CommandContext) -> None:
    """``/settings``: change live settings; each change is saved to the global settings.toml."""
    from pi_coder.tui.screens.settings_screen import SettingsScreen

    await app.push_screen_wait(SettingsScreen(setting_items(app)))


def setting_items(app: CommandContext) -> list[SettingItem]:
    """The lines of ``/settings``."""
    from pi_coder.tui.screens.settings_items import more_setting_items
    from pi_coder.tui.screens.settings_screen import SettingItem

    session = app.session

    def on_off(value: bool) -> str:
        return "on" if value else "off"

    def set_compaction(value: str) -> None:
        session.set_auto_compaction(value == "on")
        app.refresh_footer()

    def set_thinking(value: str) -> None:
        session.set_thinking_level(value)
        app.editor.set_thinking_level(session.thinking_level)
        app.refresh_footer()

    def set_theme(value: str) -> None:
        warning = app.themes.use(value)
        if warning is None:
            save_settings(app, {"theme": value})
            app.terminal_display.ask_background()  # a theme that follows the terminal's background

    def set_hide_thinking(value: str) -> None:
        app.set_thinking_hidden(value == "on")
        save_settings(app, {"hide_thinking_block": app.hide_thinking})

    def saver(key: str) -> Any:
        return lambda value: save_settings(app, {key: value})

    levels = list(session.available_thinking_levels()) or ["off"]
    # the terminal's own colours, then the light/dark pair that follows its background (Pi's order)
    theme_names = ["system", "light/dark", *(i.name for i in app.themes.available() if i.name != "system")]
    return [
        SettingItem(
            "auto_compaction", "Auto-compact", "Compact the context automatically when it nears the model's window.",
            ["on", "off"], lambda: on_off(session.auto_compaction_enabled), set_compaction,
        ),
        SettingItem(
            "steering_mode", "Steering mode",
            "Enter while the agent works: deliver queued messages one at a time or all at once.",
            ["one-at-a-time", "all"], lambda: session.steering_mode, lambda v: session.set_steering_mode(_queue_mode(v)),
        ),
        SettingItem(
            "follow_up_mode", "Follow-up mode",
            "Alt+Enter while the agent works: deliver queued follow-ups one at a time or all at once.",
            ["one-at-a-time", "all"], lambda: session.follow_up_mode, lambda v: session.set_follow_up_mode(_queue_mode(v)),
        ),
        SettingItem(
            "thinking_level", "Thinking level", "Reasoning effort for models that think (Shift+Tab cycles).",
            levels, lambda: session.thinking_level, set_thinking,
        ),
        SettingItem(
            "theme", "Theme",
            "Colour theme (the list previews each as you move): system uses the terminal's own colours; "
            "light/dark follows the terminal's background.",
            theme_names, lambda: app.themes.name, set_theme,
            preview=app.themes.preview, end_preview=app.themes.end_preview,
        ),
        SettingItem(
            "hide_thinking_block", "Hide thinking", "Collapse thinking blocks to one line (Ctrl+T toggles).",
            ["on", "off"], lambda: on_off(app.hide_thinking), set_hide_thinking,
        ),
        SettingItem(
            "double_escape_action", "Double-Esc action", "What Esc Esc on an empty editor opens.",
            ["tree", "fork", "none"], lambda: session.settings.double_escape_action, saver("double_escape_action"),
        ),
        SettingItem(
            "tree_filter_mode", "Tree filter", "The filter /tree starts with.",
            ["default", "no-tools", "user-only", "labeled-only", "all"],
            lambda: session.settings.tree_filter_mode, saver("tree_filter_mode"),
        ),
        *more_setting_items(app, lambda: app.session.settings, lambda updates: save_settings(app, updates)),
    ]  # fmt: skip
