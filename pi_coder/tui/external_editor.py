"""Ctrl+G: edit the prompt in ``$VISUAL`` / ``$EDITOR`` (or the ``external_editor`` setting);
Ctrl+Z: suspend pi to the shell (``fg`` resumes it).

The external editor runs on a temporary file while the app is suspended (Textual's
``App.suspend``: the terminal is handed back in its normal mode); what the file holds when the
editor exits successfully replaces the editor's text.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.tui.context import AppHost

__all__ = ["ExternalEditorMixin", "editor_command", "edit_text"]


def editor_command(setting: str | None, env: Mapping[str, str] | None = None) -> list[str] | None:
    """The editor to run: the ``external_editor`` setting, then ``$VISUAL``, then ``$EDITOR``."""
    env = os.environ if env is None else env
    for value in (setting, env.get("VISUAL"), env.get("EDITOR")):
        if value and value.strip():
            try:
                return shlex.split(value)
            except ValueError:
                return [value.strip()]
    return None


def edit_text(command: list[str], text: str) -> str | None:
    """Run ``command`` on a temporary file holding ``text``; the new text, or None on failure."""
    fd, path = tempfile.mkstemp(prefix="pi-prompt-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        result = subprocess.run([*command, path], check=False)
        if result.returncode != 0:
            return None
        with open(path, encoding="utf-8") as handle:
            edited = handle.read()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
    return edited[:-1] if edited.endswith("\n") and not text.endswith("\n") else edited


class ExternalEditorMixin:
    """``action_external_editor`` (Ctrl+G), ``action_copy_last`` (Ctrl+X) and ``action_suspend`` (Ctrl+Z)."""

    def action_external_editor(self: AppHost) -> None:
        from textual.app import SuspendNotSupported

        command = editor_command(self._settings().external_editor)
        if command is None:
            self.status("No editor: set $VISUAL or $EDITOR (or external_editor in settings.toml)", "warning")
            return
        editor = self.editor
        editor.close_menu()
        try:
            with self.suspend():
                edited = edit_text(command, editor.expanded_text)
        except SuspendNotSupported:  # headless (tests): the editor must not need the terminal
            edited = edit_text(command, editor.expanded_text)
        except OSError as exc:
            self.status(f"Cannot run {command[0]}: {exc.strerror or exc}", "error")
            return
        if edited is None:
            self.status(f"{command[0]} failed; the prompt is unchanged", "warning")
            return
        editor.set_text(edited)
        editor.focus()

    async def action_copy_last(self: AppHost) -> None:
        from textual.actions import SkipAction

        from pi_coder.tui.commands import find_command

        start, end = self.editor.selection
        if start != end and self.focused is self.editor:
            raise SkipAction()  # a selection in the editor: Ctrl+X cuts it
        if not self.session.settings.fullscreen_copy_on_select and self.copy_selection():
            return  # a transcript selection that was not copied on release

        command = find_command("copy", self.commands)
        if command is not None:
            await command.run(self, "")

    def action_suspend(self: AppHost) -> None:
        self.action_suspend_process()

    def on_driver_signal_resume(self: AppHost, event: Any) -> None:
        # Back from Ctrl+Z (``fg``): the shell drew over the screen, so repaint all of it (Textual
        # would send only the regions that changed since the stop).
        self.refresh(layout=True)
        self.terminal_display.resumed()
