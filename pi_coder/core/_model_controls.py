"""Model, thinking-level and queue-mode controls of AgentSession.

A part AgentSession owns and delegates to (so ``agent_session.py`` stays small); it gets the
agent, the models, the settings, the store and the session's ``emit_nowait`` and settings
writer as explicit arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, get_args

from pi_coder.agent import placeholder_model
from pi_coder.ai.types import Model, ThinkingLevel
from pi_coder.core.events import ModelChanged, ThinkingLevelChanged
from pi_coder.core.thinking import available_thinking_levels, clamp_thinking_level
from pi_coder.errors import MissingApiKeyError

if TYPE_CHECKING:
    from pi_coder.agent import Agent
    from pi_coder.ai.models import Models
    from pi_coder.core.events import Event
    from pi_coder.session.store import SessionStore
    from pi_coder.settings import Settings

_SAVABLE_LEVELS: tuple[str, ...] = get_args(ThinkingLevel)


class ModelControls:
    """``set_model``, ``cycle_model``, thinking levels, queue modes and auto-compaction toggles."""

    def __init__(
        self,
        *,
        agent: Agent,
        models: Models,
        settings: Settings,
        store: Callable[[], SessionStore],
        scoped_models: list[tuple[Model, str | None]],
        emit_nowait: Callable[[Event], None],
        save: Callable[[dict[str, Any]], None],
    ) -> None:
        self.agent = agent
        self.models = models
        self.settings = settings
        self._store = store
        self.scoped_models = scoped_models
        self._emit_nowait = emit_nowait
        self._save = save
        self.model: Model | None = None
        """The current model, or None when nothing is configured."""
        self._thinking_asked: tuple[str, str] | None = None
        """(the level the user asked for, the level applied); stale once the level changes elsewhere."""

    @property
    def thinking_level(self) -> str:
        return self.agent.state.thinking_level

    def set_model_state(self, model: Model | None) -> None:
        """Hold ``model`` (the agent gets the placeholder when it is None); records nothing."""
        self.model = model
        self.agent.state.model = model if model is not None else placeholder_model()

    def available_models(self) -> list[Model]:
        """Models whose provider has a key."""
        return self.models.available_models()

    def set_model(self, model: Model, *, source: Literal["set", "cycle"] = "set", save_default: bool = True) -> None:
        """Switch model: appends ``model_change``, saves the default, re-clamps thinking.

        A clamped thinking level is announced before the model (docs/extensions-runtime.md#event-catalogue).

        Raises:
            MissingApiKeyError: The model's provider has no key.
        """
        if not self.models.has_key(model.provider):
            raise MissingApiKeyError(self.models.missing_key_message(model.provider))
        self.set_model_state(model)
        self._store().append_model_change(model.provider, model.id)
        if save_default:  # an extension's pi.set_model() changes this session only
            self._save({"default_provider": model.provider, "default_model": model.id})
        # The user's level (or this model's ``model_thinking_levels`` entry), clamped to what the
        # model can do; neither the entry nor the clamp is a choice: the user's level carries on.
        choice = self._thinking_choice()
        wanted = self.settings.model_thinking_levels.get(f"{model.provider}/{model.id}") or choice
        self._apply_thinking(clamp_thinking_level(wanted, model), force=False, save=False)
        self._thinking_asked = (choice, self.thinking_level)
        self._emit_nowait(ModelChanged(provider=model.provider, model_id=model.id, source=source))

    def _thinking_choice(self) -> str:
        """The level the user asked for last (or started with), before any clamping to a model."""
        if self._thinking_asked is not None and self._thinking_asked[1] == self.thinking_level:
            return self._thinking_asked[0]
        reasons = self.model is not None and self.model.reasoning
        return self.thinking_level if reasons else (self.settings.default_thinking_level or "medium")

    def cycle_model(self, direction: int = 1, *, save_default: bool = True) -> tuple[Model, str] | None:
        """Next (or previous) model of the scope (``--models``), else of the available models."""
        if self.scoped_models:
            pool: list[tuple[Model, str | None]] = list(self.scoped_models)
        else:
            pool = [(m, None) for m in self.available_models()]
        if len(pool) <= 1:
            return None
        current = self.model
        index = next(
            (i for i, (m, _) in enumerate(pool) if current and (m.provider, m.id) == (current.provider, current.id)),
            0,
        )
        model, thinking = pool[(index + (1 if direction >= 0 else -1)) % len(pool)]
        self.set_model(model, source="cycle", save_default=save_default)
        if thinking is not None:
            self.set_thinking_level(thinking, save_default=save_default)
        return model, self.thinking_level

    def available_thinking_levels(self) -> list[str]:
        return available_thinking_levels(self.model)

    def set_thinking_level(self, level: str, *, save_default: bool = True) -> None:
        """Set the thinking level (clamped to the model); appends an entry and saves the default
        (unless ``save_default`` is False: the TUI's keys change this session only, as in Pi).

        A level the model cannot do is applied clamped, and then not saved as the default.
        """
        clamped = clamp_thinking_level(level, self.model) if self.model else level
        self._apply_thinking(clamped, force=True, save=save_default and clamped == level)
        self._thinking_asked = (level, clamped)

    def _apply_thinking(self, level: str, *, force: bool, save: bool = True) -> None:
        changed = level != self.agent.state.thinking_level
        self.agent.state.thinking_level = level
        if changed or force:
            if changed:
                self._store().append_thinking_level_change(level)
            if save and level in _SAVABLE_LEVELS:
                self._save({"default_thinking_level": level})
            self._emit_nowait(ThinkingLevelChanged(thinking_level=level))

    def cycle_thinking_level(self, *, save_default: bool = True) -> str | None:
        """The next allowed level (wrapping); None for a model without reasoning."""
        levels = self.available_thinking_levels()
        if self.model is None or not self.model.reasoning or len(levels) <= 1:
            return None
        current = self.thinking_level
        index = levels.index(current) if current in levels else -1
        self.set_thinking_level(levels[(index + 1) % len(levels)], save_default=save_default)
        return self.thinking_level

    def set_steering_mode(self, mode: Literal["one-at-a-time", "all"]) -> None:
        self.agent.steering_mode = mode
        self._save({"steering_mode": mode})

    def set_follow_up_mode(self, mode: Literal["one-at-a-time", "all"]) -> None:
        self.agent.follow_up_mode = mode
        self._save({"follow_up_mode": mode})

    def set_auto_compaction(self, enabled: bool) -> None:
        self._save({"compaction.enabled": enabled})
