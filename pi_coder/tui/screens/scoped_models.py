"""``/scoped-models``: choose the models Ctrl+P cycles through, and their order.

Every model with a key is listed, the enabled ones first in cycle order (``[x]``), then the
rest by provider. Enter toggles the highlighted model, Ctrl+A enables all (shown) models,
Ctrl+X clears them, Ctrl+P toggles the highlighted model's provider, Alt+Up/Down move it in
the cycle order. Each change applies to the session at once (``on_change``); Ctrl+S also saves
the scope as ``enabled_models`` patterns (``provider/id``, ``:level`` when a level was pinned).
No model enabled means Ctrl+P cycles all models. Esc closes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding, BindingType

from pi_coder.ai.types import Model
from pi_coder.tui.screens._fuzzy import rank
from pi_coder.tui.screens._picker import PickerEntry, PickerScreen

__all__ = ["ScopedModelsScreen", "scope_patterns"]

Scope = list[tuple[Model, str | None]]


def _key(model: Model) -> str:
    return f"{model.provider}/{model.id}"


def scope_patterns(scope: Sequence[tuple[Model, str | None]]) -> list[str]:
    """The ``enabled_models`` setting for ``scope``."""
    return [_key(model) + (f":{level}" if level else "") for model, level in scope]


class ScopedModelsScreen(PickerScreen[bool]):
    """Toggle and order the Ctrl+P models; the result is whether the scope was saved."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+a", "enable_all", show=False, priority=True),
        Binding("ctrl+x", "clear_all", show=False, priority=True),
        Binding("ctrl+p", "toggle_provider", show=False, priority=True),
        Binding("alt+up", "reorder(-1)", show=False, priority=True),
        Binding("alt+down", "reorder(1)", show=False, priority=True),
        Binding("ctrl+s", "save", show=False, priority=True),
    ]

    def __init__(
        self,
        models: Sequence[Model],
        scope: Sequence[tuple[Model, str | None]],
        *,
        on_change: Callable[[Scope], None],
        on_save: Callable[[list[str]], None],
    ) -> None:
        hint = "Enter toggle · Ctrl+A all · Ctrl+X clear · Ctrl+P provider · Alt+↑↓ order · Ctrl+S save · Esc close"
        super().__init__("Scoped models (Ctrl+P cycle)", placeholder="Search models...", hint=hint)
        self.models = list(models)
        known = {_key(m) for m in self.models}
        self.scope: Scope = [(m, level) for m, level in scope if _key(m) in known]
        self.on_change = on_change
        self.on_save = on_save
        self.saved = False
        self.dirty = False

    # ------------------------------------------------------------------ entries

    def _enabled(self) -> dict[str, int]:
        return {_key(model): index for index, (model, _) in enumerate(self.scope)}

    def load_entries(self) -> list[PickerEntry[bool]]:
        enabled = self._enabled()
        rest = sorted((m for m in self.models if _key(m) not in enabled), key=lambda m: (m.provider, m.id))
        ordered = [model for model, _ in self.scope] + rest
        levels = dict((_key(m), level) for m, level in self.scope)
        width = max((len(m.id) for m in ordered), default=0)
        entries = []
        for model in ordered:
            key = _key(model)
            on = key in enabled
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append("[x] " if on else "[ ] ", style="bold" if on else "dim")
            line.append(model.id.ljust(width))
            line.append(f"  {model.provider}", style="dim")
            if levels.get(key):
                line.append(f"  :{levels[key]}", style="dim")
            entries.append(PickerEntry(key=key, value=on, prompt=line, search=f"{model.id} {key} {model.name or ''}"))
        return entries

    def order(self, query: str, entries: Sequence[PickerEntry[bool]]) -> list[PickerEntry[bool]]:
        return rank(query, entries, lambda entry: entry.search, stable=True)

    def header(self) -> RenderableType:
        count = len(self.scope)
        text = f"{count} of {len(self.models)} enabled" if count else "None enabled: Ctrl+P cycles all models"
        state = " · saved" if self.saved and not self.dirty else (" · not saved (Ctrl+S)" if self.dirty else "")
        return Text(text + state, style="dim")

    # ------------------------------------------------------------------ changes

    def _model(self, key: str) -> Model | None:
        return next((m for m in self.models if _key(m) == key), None)

    def _changed(self, keep: str | None) -> None:
        self.dirty = True
        self.on_change(list(self.scope))
        self.reload(keep)

    def _set(self, keys: Sequence[str], on: bool) -> None:
        enabled = self._enabled()
        if on:
            for key in keys:
                model = self._model(key)
                if key not in enabled and model is not None:
                    self.scope.append((model, None))
                    enabled[key] = len(self.scope) - 1
        else:
            drop = set(keys)
            self.scope = [(m, level) for m, level in self.scope if _key(m) not in drop]

    async def choose(self, entry: PickerEntry[bool]) -> None:
        self._set([entry.key], not entry.value)
        self._changed(entry.key)

    def action_enable_all(self) -> None:
        self._set([entry.key for entry in self.shown], True)
        self._changed(None)

    def action_clear_all(self) -> None:
        self._set([entry.key for entry in self.shown], False)
        self._changed(None)

    def action_toggle_provider(self) -> None:
        entry = self.highlighted_entry()
        if entry is None:
            return
        provider = entry.key.split("/", 1)[0]
        keys = [_key(m) for m in self.models if m.provider == provider]
        self._set(keys, not entry.value)
        self._changed(entry.key)

    def action_reorder(self, step: int) -> None:
        entry = self.highlighted_entry()
        enabled = self._enabled()
        if entry is None or entry.key not in enabled:
            return
        index = enabled[entry.key]
        target = index + step
        if not 0 <= target < len(self.scope):
            return
        self.scope[index], self.scope[target] = self.scope[target], self.scope[index]
        self._changed(entry.key)

    def action_save(self) -> None:
        self.on_save(scope_patterns(self.scope))
        self.saved, self.dirty = True, False
        self._refresh_lines()

    def action_cancel(self) -> None:
        self.dismiss(self.saved)
