"""The ``[keybindings]`` settings table: action names and key strings onto the key table.

A user writes ``follow_up = "alt+enter"`` or ``select_model = ["ctrl+l", "f2"]``. An action may
be named by its id in the key table (``app.message.followUp``), by Pi's short id
(``followUp``, ``selectModel``, ``cycleModelForward``...), by the snake_case form of either
(``follow_up``, ``cycle_model_forward``) or by its action method (``toggle_tools``); matching
ignores case, ``_``, ``-`` and ``.``. Keys use Pi's syntax (``ctrl+shift+p``, ``shift+ctrl+p``,
``esc``, ``return``, ``pageUp``, ``ctrl+]``) and are turned into Textual key names. An empty
string or list unbinds the action (its binding gets a key no terminal sends).

The result feeds ``PiApp(keymap=...)``: every action id is also the id of a Textual
``Binding``, so ``App.set_keymap`` applies the overrides; ``/hotkeys`` shows the effective keys.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pi_coder.tui.keys import KEY_ACTIONS, KeyAction, unbound_key

if TYPE_CHECKING:
    from pi_coder.settings import Settings

__all__ = [
    "Keymap",
    "action_aliases",
    "load_keybindings",
    "normalize_key",
    "parse_keybindings",
    "resolve_action",
]

# Pi 0.58 action ids (keybindings.json) that are not derivable from our ids.
_PI_NAMES: dict[str, str] = {
    "interrupt": "app.interrupt",
    "clear": "app.clear",
    "exit": "app.exit",
    "cycleThinkingLevel": "app.thinking.cycle",
    "cycleModelForward": "app.model.cycleForward",
    "cycleModelBackward": "app.model.cycleBackward",
    "selectModel": "app.model.select",
    "expandTools": "app.tools.expand",
    "toggleThinking": "app.thinking.toggle",
    "followUp": "app.message.followUp",
    "dequeue": "app.message.dequeue",
    "newSession": "app.session.new",
    "tree": "app.session.tree",
    "fork": "app.session.fork",
    "resume": "app.session.resume",
    "submit": "editor.submit",
    "newLine": "editor.newline",
}

_KEY_ALIASES: dict[str, str] = {
    "esc": "escape",
    "return": "enter",
    "cr": "enter",
    "del": "delete",
    "bs": "backspace",
    "pgup": "pageup",
    "pgdn": "pagedown",
    "pageup": "pageup",
    "pagedown": "pagedown",
    "ins": "insert",
    "spacebar": "space",
    "arrowup": "up",
    "arrowdown": "down",
    "arrowleft": "left",
    "arrowright": "right",
}

_MODIFIERS = {"ctrl": "ctrl", "control": "ctrl", "shift": "shift", "alt": "alt", "meta": "alt", "option": "alt",
              "super": "super", "cmd": "super"}  # fmt: skip

_NAMED_KEYS = frozenset(
    {
        "escape", "enter", "tab", "backspace", "delete", "insert", "home", "end", "pageup", "pagedown",
        "up", "down", "left", "right", "space",
        *(f"f{n}" for n in range(1, 25)),
    }
)  # fmt: skip


@dataclass(slots=True)
class Keymap:
    """What ``[keybindings]`` asks for, ready for ``PiApp(keymap=...)``."""

    overrides: dict[str, str] = field(default_factory=dict)
    """Action id -> comma-separated Textual keys (``unbound_key(id)`` when unbound)."""
    warnings: list[str] = field(default_factory=list)
    """One line per unknown action or unusable key."""


def _squash(name: str) -> str:
    return re.sub(r"[\s_.\-]", "", name).lower()


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def action_aliases(actions: Iterable[KeyAction] = KEY_ACTIONS) -> dict[str, str]:
    """Every accepted spelling (squashed) -> action id."""
    ids = {a.id for a in actions}
    aliases: dict[str, str] = {}
    method_count: dict[str, int] = {}
    for action in actions:
        method_count[action.action.split("(")[0]] = method_count.get(action.action.split("(")[0], 0) + 1
    for action in actions:
        names = [action.id, action.id.split(".", 1)[-1]]
        method = action.action.split("(")[0]
        if method_count[method] == 1:
            names.append(method)
        for name in names:
            aliases.setdefault(_squash(name), action.id)
    for pi_name, action_id in _PI_NAMES.items():
        if action_id in ids:
            aliases.setdefault(_squash(pi_name), action_id)
            aliases.setdefault(_squash(_snake(pi_name)), action_id)
    return aliases


def resolve_action(name: str, actions: Iterable[KeyAction] = KEY_ACTIONS) -> str | None:
    """The action id ``name`` refers to, or None."""
    return action_aliases(actions).get(_squash(name))


def normalize_key(key: str) -> str | None:
    """A key in Pi's or Textual's syntax as a Textual key name; None if it cannot be a key.

    ``shift+ctrl+P`` -> ``ctrl+shift+p``, ``esc`` -> ``escape``, ``shift+l`` -> ``L``,
    ``ctrl+]`` -> ``ctrl+right_square_bracket``, ``?`` -> ``question_mark``.
    """
    text = key.strip()
    if not text:
        return None
    if text == "+":
        return "plus"
    parts = text.split("+")
    if text.endswith("++"):  # "ctrl++"
        parts = [*text[:-2].split("+"), "+"]
    *mods, base = parts
    modifiers: set[str] = set()
    for mod in mods:
        canonical = _MODIFIERS.get(mod.strip().lower())
        if canonical is None:
            return None
        modifiers.add(canonical)
    base = base.strip()
    if not base:
        return None
    if len(base) == 1:
        if base.isalpha():
            upper = base.isupper()
            base = base.lower()
            if modifiers == {"shift"} or (upper and not modifiers):
                return base.upper()  # terminals report Shift+L as the character "L"
        elif not base.isdigit():
            base = _char_name(base)
    else:
        lowered = base.lower()
        base = _KEY_ALIASES.get(lowered, lowered)
        if base not in _NAMED_KEYS and not re.fullmatch(r"[a-z_]+", base):
            return None
    return "+".join([*sorted(modifiers), base])


def _char_name(char: str) -> str:
    names = {" ": "space", "+": "plus", "-": "minus"}
    if char in names:
        return names[char]
    try:
        return unicodedata.name(char).lower().replace("-", "_").replace(" ", "_")
    except ValueError:
        return char


def parse_keybindings(table: Mapping[str, object] | None, actions: Iterable[KeyAction] = KEY_ACTIONS) -> Keymap:
    """Turn a ``[keybindings]`` table into overrides of the key table.

    Args:
        table: Action name -> key string or list of key strings.
        actions: The known actions (default: the app's key table).

    Returns:
        The overrides, and a warning for each entry that was skipped.
    """
    keymap = Keymap()
    if not table:
        return keymap
    aliases = action_aliases(actions)
    for name, value in table.items():
        action_id = aliases.get(_squash(str(name)))
        if action_id is None:
            keymap.warnings.append(f"[keybindings] {name}: unknown action (see /hotkeys for the action names)")
            continue
        raw = [value] if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else None
        if raw is None or not all(isinstance(k, str) for k in raw):
            keymap.warnings.append(f"[keybindings] {name}: expected a key or a list of keys")
            continue
        keys: list[str] = []
        for item in raw:
            for part in _split_keys(item):
                normalized = normalize_key(part)
                if normalized is None:
                    keymap.warnings.append(f"[keybindings] {name}: {part!r} is not a key")
                elif normalized not in keys:
                    keys.append(normalized)
        if keys:
            keymap.overrides[action_id] = ",".join(keys)
        elif all(not k.strip() for k in raw):
            keymap.overrides[action_id] = unbound_key(action_id)
    return keymap


def _split_keys(value: str) -> list[str]:
    """``"ctrl+l, f2"`` -> two keys; a lone ``","`` stays a key."""
    if value.strip() == ",":
        return [","]
    return [part for part in value.split(",") if part.strip()]


def load_keybindings(settings: Settings, actions: Iterable[KeyAction] = KEY_ACTIONS) -> Keymap:
    """``parse_keybindings`` of ``settings.keybindings``."""
    return parse_keybindings(settings.keybindings, actions)
