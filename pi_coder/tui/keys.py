"""The key table: every TUI action with its default keys (Pi's defaults).

The table is data so that a ``[keybindings]`` settings table can remap actions later: each action id
is also the id of a Textual ``Binding``, and ``PiApp(keymap=...)`` feeds overrides to
``App.set_keymap``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "KEY_ACTIONS",
    "KeyAction",
    "bindings_for",
    "display_keys",
    "effective_keys",
    "unbound_key",
]


@dataclass(frozen=True, slots=True)
class KeyAction:
    """One remappable action."""

    id: str
    """Binding id (``app.interrupt``); the key of a ``[keybindings]`` entry."""
    keys: str
    """Default keys, comma separated, in Textual's key names."""
    action: str
    """The Textual action method it runs (without the ``action_`` prefix)."""
    description: str
    """What ``/hotkeys`` shows."""
    scope: Literal["app", "editor"]
    """Where the binding lives: the app, or the prompt editor (editor actions need focus)."""


KEY_ACTIONS: tuple[KeyAction, ...] = (
    KeyAction("app.interrupt", "escape", "interrupt", "Abort the run / cancel `!` command; restores queued messages", "app"),
    KeyAction("app.clear", "ctrl+c", "clear", "Clear the editor; twice to quit", "app"),
    KeyAction("app.exit", "ctrl+d", "exit", "Quit (when the editor is empty)", "app"),
    KeyAction("app.thinking.cycle", "shift+tab", "cycle_thinking_level", "Cycle the thinking level", "app"),
    KeyAction("app.model.cycleForward", "ctrl+p", "cycle_model(1)", "Next model", "app"),
    KeyAction("app.model.cycleBackward", "ctrl+shift+p", "cycle_model(-1)", "Previous model", "app"),
    KeyAction("app.tools.expand", "ctrl+o", "toggle_tools", "Expand or collapse tool output", "app"),
    KeyAction("app.thinking.toggle", "ctrl+t", "toggle_thinking", "Hide or show thinking blocks", "app"),
    KeyAction("app.message.dequeue", "alt+up", "dequeue", "Pull queued messages back into the editor", "app"),
    KeyAction("app.scroll.end", "end", "jump_to_end", "Jump to the live end of the transcript", "app"),
    KeyAction("app.scroll.pageUp", "pageup", "scroll_page(-1)", "Scroll the transcript up a page", "app"),
    KeyAction("app.scroll.pageDown", "pagedown", "scroll_page(1)", "Scroll the transcript down a page", "app"),
    KeyAction("app.editor.external", "ctrl+g", "external_editor", "Edit the prompt in $VISUAL / $EDITOR", "app"),
    KeyAction("app.message.copy", "ctrl+x", "copy_last", "Copy the last answer to the clipboard (`/copy`)", "app"),
    KeyAction("app.suspend", "ctrl+z", "suspend", "Suspend pi to the shell (`fg` resumes)", "app"),
    KeyAction("app.model.select", "ctrl+l", "select_model", "Select a model", "app"),
    KeyAction("app.session.tree", "", "open_tree", "Session tree (`/tree`)", "app"),
    KeyAction("app.session.fork", "", "open_fork", "Fork from an earlier message (`/fork`)", "app"),
    KeyAction("app.session.resume", "", "open_resume", "Resume another session (`/resume`)", "app"),
    KeyAction("app.session.new", "", "new_session", "Start a new session (`/new`)", "app"),
    KeyAction("editor.submit", "enter", "submit", "Send (idle) / queue a steering message (working)", "editor"),
    KeyAction("app.message.followUp", "alt+enter", "follow_up", "Queue a follow-up message (working)", "editor"),
    KeyAction("editor.newline", "shift+enter,ctrl+j", "newline", "New line (also `\\` then Enter)", "editor"),
    KeyAction("editor.historyPrev", "up", "history_prev", "Previous prompt (on an empty editor)", "editor"),
    KeyAction("editor.historyNext", "down", "history_next", "Next prompt while browsing history", "editor"),
    KeyAction("editor.complete", "tab", "complete", "Complete a path or command", "editor"),
)


def bindings_for(scope: Literal["app", "editor"]) -> list[Any]:
    """Textual priority bindings for one scope (``SkipAction`` lets a key fall through)."""
    from textual.binding import Binding

    return [
        Binding(a.keys or unbound_key(a.id), a.action, a.description, show=False, priority=True, id=a.id)
        for a in KEY_ACTIONS
        if a.scope == scope
    ]


def unbound_key(action_id: str) -> str:
    """The key of an action without keys: a name no terminal sends, so a keymap can still rebind it."""
    return f"unbound-{action_id}"


def effective_keys(overrides: Mapping[str, str | list[str]] | None = None) -> dict[str, str]:
    """Action id -> comma-separated keys after applying ``overrides``."""
    keys = {a.id: a.keys for a in KEY_ACTIONS}
    for action_id, value in (overrides or {}).items():
        keys[action_id] = value if isinstance(value, str) else ",".join(value)
    return keys


_NICE = {
    "escape": "Esc",
    "enter": "Enter",
    "tab": "Tab",
    "up": "Up",
    "down": "Down",
    "end": "End",
}


def display_keys(keys: str) -> str:
    """``ctrl+shift+p,alt+up`` -> ``Ctrl+Shift+P / Alt+Up`` for hints and ``/hotkeys``."""
    shown = []
    for key in keys.split(","):
        if not key.strip() or key.startswith("unbound-"):
            continue
        parts = [_NICE.get(p, p.capitalize() if len(p) > 1 else p.upper()) for p in key.strip().split("+")]
        shown.append("+".join(parts))
    return " / ".join(shown) or "unbound"
