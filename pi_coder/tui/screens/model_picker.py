"""Model selector (Ctrl+L, ``/model``): fuzzy search over the models that have a key.

Lines are ``id  provider  name``, the current model first and marked ``✓``, the rest by provider.
When a Ctrl+P scope exists (``--models`` or the ``enabled_models`` setting), Tab switches
between the scoped models and all models with a key. Ctrl+S saves the highlighted model as the
default for new sessions without switching to it. The result is the chosen ``Model``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding, BindingType

from pi_coder.ai.types import Model
from pi_coder.tui.screens._fuzzy import rank
from pi_coder.tui.screens._picker import PickerEntry, PickerScreen
from pi_coder.tui.theming import theme_style

if TYPE_CHECKING:
    from pi_coder.tui.context import CommandContext

__all__ = ["ModelPicker", "exact_model_match", "reload_models"]


def reload_models(app: CommandContext) -> str | None:
    """Re-read models.toml and the credentials file; the error text when models.toml is invalid."""
    try:
        app.session.models.reload()
    except Exception as exc:  # ConfigError: keep the models loaded so far
        return str(exc)
    return None


def _same(a: Model | None, b: Model | None) -> bool:
    return a is not None and b is not None and (a.provider, a.id) == (b.provider, b.id)


def exact_model_match(term: str, models: Sequence[Model]) -> Model | None:
    """The model ``term`` names exactly (``provider/id`` or a unique id), case-insensitive."""
    needle = term.strip().lower()
    if not needle:
        return None
    for model in models:
        if f"{model.provider}/{model.id}".lower() == needle:
            return model
    matches = [m for m in models if m.id.lower() == needle]
    return matches[0] if len(matches) == 1 else None


class ModelPicker(PickerScreen[Model]):
    """Choose a model.

    Args:
        models: Models with a key (``session.available_models()``).
        current: The session's model (listed first, marked).
        scoped: The Ctrl+P scope; when non-empty the picker opens on it and Tab toggles.
        query: Initial search text (``/model term``).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "toggle_scope", "Scoped / all", show=False, priority=True),
        Binding("ctrl+s", "save_default", "Save as default", show=False, priority=True),
    ]

    def __init__(
        self,
        models: Sequence[Model],
        current: Model | None,
        *,
        scoped: Sequence[Model] = (),
        query: str = "",
        save_default: Callable[[Model], None] | None = None,
    ) -> None:
        hint = "↑↓ move · Enter select · Ctrl+S save as default · Esc cancel"
        if scoped:
            hint = "Tab scoped/all · " + hint
        current_key = f"{current.provider}/{current.id}" if current is not None else None
        super().__init__("Select model", query=query, placeholder="Search models...", hint=hint, initial_key=current_key)
        self.all_models = list(models)
        self.scoped = list(scoped)
        self.current = current
        self.scope = "scoped" if self.scoped else "all"
        self.saved_default: str | None = None
        """``provider/id`` saved with Ctrl+S while the picker is open."""
        self._save_default = save_default
        """Ctrl+S's writer of the default model (None: Ctrl+S does nothing)."""

    def _pool(self) -> list[Model]:
        pool = self.scoped if self.scope == "scoped" else self.all_models
        seen: set[tuple[str, str]] = set()
        unique = []
        for model in pool:
            if (model.provider, model.id) not in seen:
                seen.add((model.provider, model.id))
                unique.append(model)
        indexed = list(enumerate(unique))
        indexed.sort(key=lambda pair: (not _same(pair[1], self.current), pair[1].provider, pair[0]))
        return [model for _, model in indexed]

    def load_entries(self) -> list[PickerEntry[Model]]:
        pool = self._pool()
        id_width = max((len(m.id) for m in pool), default=0)
        provider_width = max((len(m.provider) for m in pool), default=0)
        entries = []
        for model in pool:
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(model.id.ljust(id_width))
            line.append("  ")
            line.append(model.provider.ljust(provider_width), style="dim")
            if model.name and model.name != model.id:
                line.append("  ")
                line.append(model.name, style="dim")
            if _same(model, self.current):
                line.append(" ✓", style=theme_style(self.app, "success", "green", extra="bold"))
            entries.append(
                PickerEntry(
                    key=f"{model.provider}/{model.id}",
                    value=model,
                    prompt=line,
                    search=f"{model.id} {model.provider} {model.provider}/{model.id} {model.name or ''}",
                )
            )
        return entries

    def order(self, query: str, entries: Sequence[PickerEntry[Model]]) -> list[PickerEntry[Model]]:
        return rank(query, entries, lambda entry: entry.search)

    def header(self) -> RenderableType:
        saved = Text(f"Default model saved: {self.saved_default}", style="dim") if self.saved_default else None
        if not self.scoped:
            return saved or Text("Only models with a configured API key are listed", style="dim")
        line = Text()
        for scope in ("scoped", "all"):
            style = "bold reverse" if scope == self.scope else "dim"
            line.append(f" {scope} ", style=style)
            line.append(" ")
        line.append(" (Tab)", style="dim")
        if saved is not None:
            line.append("  ")
            line.append(saved)
        return line

    def detail(self, entry: PickerEntry[Model] | None) -> RenderableType:
        if not self.shown:
            return Text("  No matching models", style="dim")
        base = super().detail(entry)
        if entry is None or not isinstance(base, Text):
            return base
        model: Any = entry.value
        facts = [f"{model.context_window:,} context"] if model.context_window else []
        if model.reasoning:
            facts.append("reasoning")
        if facts:
            base.append("  " + " · ".join(facts), style="dim")
        return base

    def action_toggle_scope(self) -> None:
        if not self.scoped:
            return
        self.scope = "all" if self.scope == "scoped" else "scoped"
        self.reload()

    def action_save_default(self) -> None:
        """Ctrl+S: save the highlighted model as the default for new sessions (no switch)."""
        entry = self.highlighted_entry()
        if entry is None or self._save_default is None:
            return
        self._save_default(entry.value)
        self.saved_default = entry.key
        self._refresh_lines()
