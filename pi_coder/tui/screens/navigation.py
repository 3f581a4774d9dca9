"""PiApp's navigation and customisation: pickers, /tree, /fork, /settings, theme, keymap.

:class:`NavigationMixin` is a base class of ``PiApp``. The app calls
:meth:`~NavigationMixin.init_navigation` from ``__init__`` (keybindings from settings, the
theme) and :meth:`~NavigationMixin.mount_navigation` from ``on_mount`` (start-up warnings, theme
hot reload, the ``pi -r`` picker); its Esc action asks :meth:`~NavigationMixin.cancel_branch_summary`
and :meth:`~NavigationMixin.handle_idle_escape` (double Esc opens /tree or /fork).

While a dialog is open the app's own key actions (Esc abort, Ctrl+D quit, Ctrl+P model...) are
switched off by :meth:`~NavigationMixin.check_action`, so the dialog gets those keys.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_coder.tui.keys import KEY_ACTIONS

if TYPE_CHECKING:
    from pi_coder.ai.types import Model
    from pi_coder.tui.screens.settings_screen import SettingItem
    from pi_coder.tui.theming import ThemeController

__all__ = ["NavigationMixin"]

_DOUBLE_ESCAPE_SECONDS = 0.5
_APP_ACTIONS = frozenset(a.action.split("(")[0] for a in KEY_ACTIONS if a.scope == "app")


def _same_file(a: str | Path, b: str | Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


async def _await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


class NavigationMixin:
    """Dialog flows for ``PiApp`` (see the module docstring). Relies on PiApp's attributes."""

    session: Any
    editor: Any
    status_line: Any
    controller: Any
    hide_thinking: bool
    themes: ThemeController
    _nav_warnings: list[str]
    _nav_resume: bool
    _last_escape: float
    _summarizing: bool

    # ------------------------------------------------------------------ set-up hooks

    def init_navigation(
        self, keybindings: Mapping[str, str | list[str]] | None, *, resume: bool = False
    ) -> Mapping[str, str | list[str]]:
        """From ``PiApp.__init__``: the keymap to use (the ``[keybindings]`` setting unless given)
        and the theme from the ``theme`` setting.
        """
        from pi_coder.tui.keybindings import load_keybindings
        from pi_coder.tui.theming import ThemeController

        self._nav_warnings = []
        self._nav_resume = resume
        self._last_escape = 0.0
        self._summarizing = False
        settings = self._settings()
        if keybindings is None:
            keymap = load_keybindings(settings)
            self._nav_warnings.extend(keymap.warnings)
            keybindings = keymap.overrides
        trust = getattr(self.session, "project_trust", None)
        trusted = trust is None or bool(trust.trusted)
        self.themes = ThemeController(
            self,  # type: ignore[arg-type]
            str(getattr(self.session, "cwd", ".")) if trusted else None,  # None: no .pi/themes
            extra_paths=list(getattr(settings, "themes", []) or []),
            on_warning=self._theme_warning,
        )
        self.themes.use(str(getattr(settings, "theme", "dark") or "dark"))
        return keybindings

    async def mount_navigation(self) -> None:
        """From ``PiApp.on_mount``: show start-up warnings, watch the theme file, open ``pi -r``'s picker."""
        warnings, self._nav_warnings = self._nav_warnings, []
        for text in warnings:
            await self.notice(text, "warning")
        self.themes.watch(1.0)
        if self._nav_resume:
            self._nav_resume = False
            self.run_worker(self._resume_at_start(), group="dialog", exit_on_error=False)  # type: ignore[attr-defined]

    def _theme_warning(self, text: str) -> None:
        if getattr(self, "is_running", False) and getattr(self, "controller", None) is not None:
            self.call_later(self.notice, text, "warning")  # type: ignore[attr-defined]
        else:
            self._nav_warnings.append(text)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        from pi_coder.tui.theming import default_theme_variables

        return {**super().get_theme_variable_defaults(), **default_theme_variables()}  # type: ignore[misc]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in _APP_ACTIONS and len(self.screen_stack) > 1:  # type: ignore[attr-defined]
            return False
        return super().check_action(action, parameters)  # type: ignore[misc,no-any-return]

    # ------------------------------------------------------------------ helpers

    def _settings(self) -> Any:
        settings = getattr(self.session, "settings", None)
        return getattr(settings, "settings", settings)

    async def notice(self, text: str, level: str = "info") -> None:  # provided by PiApp
        raise NotImplementedError

    def refresh_footer(self) -> None:  # provided by PiApp
        raise NotImplementedError

    def _save_settings(self, updates: dict[str, Any]) -> None:
        save = getattr(self.session, "save_settings", None)
        if save is not None:
            save(updates)
            return
        from pi_coder.settings import update_global_settings

        update_global_settings(updates)
        settings = self._settings()
        for key, value in updates.items():
            if "." not in key and settings is not None:
                setattr(settings, key, value)

    async def _dialog(self, screen: Any) -> Any:
        return await self.push_screen_wait(screen)  # type: ignore[attr-defined]

    def _note(self, text: str, level: str = "") -> None:
        self.status_line.note(text, level)

    # ------------------------------------------------------------------ key actions

    def action_select_model(self) -> None:
        self.run_worker(self.open_model_picker(), group="dialog", exit_on_error=False)  # type: ignore[attr-defined]

    def action_open_tree(self) -> None:
        self.run_worker(self.open_tree(), group="dialog", exit_on_error=False)  # type: ignore[attr-defined]

    def action_open_fork(self) -> None:
        self.run_worker(self.open_fork(), group="dialog", exit_on_error=False)  # type: ignore[attr-defined]

    def action_open_resume(self) -> None:
        self.run_worker(self.open_session_picker(), group="dialog", exit_on_error=False)  # type: ignore[attr-defined]

    async def action_new_session(self) -> None:
        new_session = getattr(self, "new_session", None)
        if new_session is not None:
            await new_session()

    def cancel_branch_summary(self) -> bool:
        """Esc while a branch summary runs: abort it (navigation then does not happen)."""
        if not self._summarizing:
            return False
        self.session.abort()
        return True

    def handle_idle_escape(self) -> bool:
        """Esc on an empty, idle editor: the second press within 0.5 s opens /tree or /fork.

        Returns:
            True when the press opened a dialog.
        """
        action = getattr(self._settings(), "double_escape_action", "tree")
        if action not in ("tree", "fork") or self.editor.text:
            return False
        now = time.monotonic()
        if now - self._last_escape < _DOUBLE_ESCAPE_SECONDS:
            self._last_escape = 0.0
            flow = self.open_tree() if action == "tree" else self.open_fork()
            self.run_worker(flow, group="dialog", exit_on_error=False)  # type: ignore[attr-defined]
            return True
        self._last_escape = now
        return False

    # ------------------------------------------------------------------ model

    async def open_model_picker(self, term: str = "") -> None:
        """Ctrl+L / ``/model [term]``: an exact ``provider/id`` or id switches at once, else pick."""
        from pi_coder.tui.screens.model_picker import ModelPicker, exact_model_match, reload_models

        session = self.session
        error = reload_models(self)  # type: ignore[arg-type]
        if error:
            self._note(error, "error")
        models = list(session.available_models())
        if term.strip():
            exact = exact_model_match(term, models)
            if exact is not None:
                self._switch_model(exact)
                return
        scoped = [model for model, _ in getattr(session, "scoped_models", []) or []]
        chosen = await self._dialog(ModelPicker(models, session.model, scoped=scoped, query=term.strip()))
        if chosen is not None:
            self._switch_model(chosen)

    def _switch_model(self, model: Model) -> None:
        try:
            self.session.set_model(model)
        except Exception as exc:
            self._note(str(exc), "error")
            return
        self._note(f"Model: {model.id}")
        self.editor.set_thinking_level(getattr(self.session, "thinking_level", None))
        self.refresh_footer()

    # ------------------------------------------------------------------ sessions

    async def open_session_picker(self) -> bool:
        """``/resume``: pick a session and switch to it in place; False when nothing was chosen."""
        from pi_coder.tui.screens.session_picker import SessionPicker, rename_session_file

        session = self.session
        current = getattr(session, "session_file", None)

        def rename(path: Path, name: str) -> None:
            if current is not None and _same_file(current, path):
                session.set_session_name(name)
            else:
                rename_session_file(path, name)

        store = getattr(session, "store", None)
        session_dir = getattr(store, "session_dir", None)
        picker = SessionPicker(
            str(getattr(session, "cwd", ".")),
            session_dir=str(session_dir) if session_dir is not None else None,
            current_file=current,
            on_rename=rename,
        )
        path = await self._dialog(picker)
        if path is None:
            return False
        if current is not None and _same_file(current, path):
            self._note("Already in this session")
            return True
        try:
            await session.switch_session(str(path))
        except Exception as exc:
            await self.notice(f"Could not open the session: {exc}", "error")
            return False
        self._note("Resumed session")
        return True

    async def _resume_at_start(self) -> None:
        if not await self.open_session_picker():
            await _await(self.session.close())
            self.exit(0, message="No session selected")  # type: ignore[attr-defined]

    async def open_fork(self) -> None:
        """``/fork``: new session file with the history before a chosen user message."""
        from pi_coder.tui.screens.fork_picker import ForkPicker

        session = self.session
        candidates = list(session.fork_candidates())
        if not candidates:
            await self.notice("No messages to fork from", "warning")
            return
        entry_id = await self._dialog(ForkPicker(candidates))
        if entry_id is None:
            return
        from pi_coder.tui.screens.checkpoint_commands import ask_restore_mode, restore_code

        mode = await ask_restore_mode(self, entry_id, "the fork")  # type: ignore[arg-type]
        if mode is None:
            return
        if mode in ("code", "both") and not await restore_code(self, entry_id):  # type: ignore[arg-type]
            return
        if mode == "code":
            return
        try:
            text = await session.fork(entry_id)
        except Exception as exc:
            await self.notice(f"Fork failed: {exc}", "error")
            return
        if text is None:
            self._note("Fork cancelled by an extension")
            return
        self.editor.set_text(text)
        self._note("Branched to new session")

    # ------------------------------------------------------------------ tree

    async def open_tree(self) -> None:
        """``/tree``: move to another point of this session, optionally summarising the branch left."""
        from pi_coder.session.entries import CustomMessageEntry, MessageEntry
        from pi_coder.tui.screens.dialogs import ChoiceDialog, InputDialog
        from pi_coder.tui.screens.tree_view import TreeScreen

        session = self.session
        store = session.store
        settings = self._settings()
        if not store.get_entries():
            await self.notice("No entries in this session yet", "warning")
            return
        while True:
            screen = TreeScreen(
                store.get_tree(),
                store.leaf_id,
                filter_mode=getattr(settings, "tree_filter_mode", "default"),
                on_label=store.append_label,
            )
            entry_id = await self._dialog(screen)
            if entry_id is None:
                return
            entry = store.get_entry(entry_id)
            rewinds = isinstance(entry, MessageEntry) and entry.role == "user" or isinstance(entry, CustomMessageEntry)
            if entry_id == store.leaf_id or (entry_id == screen.model.active_id() and not rewinds):
                self._note("Already at this point")
                return
            from pi_coder.tui.screens.checkpoint_commands import ask_restore_mode, restore_code

            mode = await ask_restore_mode(self, entry_id, "moving there")  # type: ignore[arg-type]
            if mode is None:
                continue  # back to the tree
            if mode == "code":
                await restore_code(self, entry_id)  # type: ignore[arg-type]
                return
            while True:
                instructions: str | None = None
                choice = "none"
                if not getattr(getattr(settings, "branch_summary", None), "skip_prompt", False):
                    choice = await self._dialog(
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
                        instructions = await self._dialog(
                            InputDialog(
                                "Summary instructions",
                                placeholder="What should the summary focus on?",
                                hint="Enter: summarize · Esc: back",
                            )
                        )
                        if instructions is None:
                            continue  # back to the question
                if mode == "both" and not await restore_code(self, entry_id):  # type: ignore[arg-type]
                    return
                mode = "conversation"  # the code is restored once, even if the tree reopens
                outcome = await self._navigate(entry_id, choice != "none", instructions or None)
                if outcome == "cancelled":
                    break  # reopen the tree
                return

    async def _navigate(self, entry_id: str, summarize: bool, instructions: str | None) -> str:
        session = self.session
        old_leaf = session.store.leaf_id
        if summarize:
            self._summarizing = True
            self.status_line.start("Summarizing branch... (Esc to cancel)")
        try:
            text = await session.navigate_tree(entry_id, summarize=summarize, instructions=instructions)
        except Exception as exc:
            await self.notice(f"Navigation failed: {exc}", "error")
            return "failed"
        finally:
            if summarize:
                self._summarizing = False
                self.status_line.stop()
        if summarize and session.store.leaf_id == old_leaf:
            self._note("Branch summarization cancelled", "warning")
            return "cancelled"
        if text and not self.editor.text.strip():
            self.editor.set_text(text)
        self._note("Navigated to selected point")
        return "done"

    # ------------------------------------------------------------------ settings

    async def open_settings(self) -> None:
        """``/settings``: change live settings; each change is saved to the global settings.toml."""
        from pi_coder.tui.screens.settings_screen import SettingsScreen

        await self._dialog(SettingsScreen(self.setting_items()))

    def setting_items(self) -> list[SettingItem]:
        """The lines of ``/settings``."""
        from pi_coder.tui.screens.settings_screen import SettingItem

        session = self.session

        def on_off(value: bool) -> str:
            return "on" if value else "off"

        def set_compaction(value: str) -> None:
            session.set_auto_compaction(value == "on")
            self.refresh_footer()

        def set_thinking(value: str) -> None:
            session.set_thinking_level(value)
            self.editor.set_thinking_level(session.thinking_level)
            self.refresh_footer()

        def set_theme(value: str) -> None:
            warning = self.themes.use(value)
            if warning is None:
                self._save_settings({"theme": value})

        def set_hide_thinking(value: str) -> None:
            self.hide_thinking = value == "on"
            if self.controller is not None:
                self.controller.set_thinking_hidden(self.hide_thinking)
            self._save_settings({"hide_thinking_block": self.hide_thinking})

        def saver(key: str) -> Any:
            return lambda value: self._save_settings({key: value})

        def current(key: str, default: str) -> Any:
            return lambda: str(getattr(self._settings(), key, default))

        levels = list(session.available_thinking_levels()) or ["off"]
        theme_names = [info.name for info in self.themes.available()]
        return [
            SettingItem(
                "auto_compaction", "Auto-compact", "Compact the context automatically when it nears the model's window.",
                ["on", "off"], lambda: on_off(session.auto_compaction_enabled), set_compaction,
            ),
            SettingItem(
                "steering_mode", "Steering mode",
                "Enter while the agent works: deliver queued messages one at a time or all at once.",
                ["one-at-a-time", "all"], lambda: session.steering_mode, session.set_steering_mode,
            ),
            SettingItem(
                "follow_up_mode", "Follow-up mode",
                "Alt+Enter while the agent works: deliver queued follow-ups one at a time or all at once.",
                ["one-at-a-time", "all"], lambda: session.follow_up_mode, session.set_follow_up_mode,
            ),
            SettingItem(
                "thinking_level", "Thinking level", "Reasoning effort for models that think (Shift+Tab cycles).",
                levels, lambda: session.thinking_level, set_thinking,
            ),
            SettingItem(
                "theme", "Theme", "Colour theme; the list previews each theme as you move.",
                theme_names, lambda: self.themes.name, set_theme,
                preview=self.themes.preview, end_preview=self.themes.end_preview,
            ),
            SettingItem(
                "hide_thinking_block", "Hide thinking", "Collapse thinking blocks to one line (Ctrl+T toggles).",
                ["on", "off"], lambda: on_off(self.hide_thinking), set_hide_thinking,
            ),
            SettingItem(
                "double_escape_action", "Double-Esc action", "What Esc Esc on an empty editor opens.",
                ["tree", "fork", "none"], current("double_escape_action", "tree"), saver("double_escape_action"),
            ),
            SettingItem(
                "tree_filter_mode", "Tree filter", "The filter /tree starts with.",
                ["default", "no-tools", "user-only", "labeled-only", "all"],
                current("tree_filter_mode", "default"), saver("tree_filter_mode"),
            ),
        ]  # fmt: skip
