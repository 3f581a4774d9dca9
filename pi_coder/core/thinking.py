"""Thinking levels a model allows, and clamping a requested level to them."""

from __future__ import annotations

from typing import get_args

from pi_coder.ai.types import Model, ThinkingLevel

__all__ = [
    "LEVEL_DESCRIPTIONS",
    "DEFAULT_THINKING_LEVEL",
    "THINKING_LEVELS",
    "available_thinking_levels",
    "clamp_thinking_level",
    "is_thinking_level",
    "supports_xhigh",
]

THINKING_LEVELS: tuple[str, ...] = get_args(ThinkingLevel)
"""Every level, weakest first. ``max`` is offered only when a model's thinking_level_map has it."""

LEVEL_DESCRIPTIONS: dict[str, str] = {
    "off": "No reasoning",
    "minimal": "Very brief reasoning",
    "low": "Light reasoning",
    "medium": "Moderate reasoning",
    "high": "Deep reasoning",
    "xhigh": "Very deep reasoning",
    "max": "The model's largest reasoning budget",
}
"""One line per level, for the pickers."""

_BASE_LEVELS = THINKING_LEVELS[: THINKING_LEVELS.index("xhigh")]
_XHIGH_IDS = ("gpt-5.2", "gpt-5.3", "gpt-5.4", "opus-4-6", "opus-4.6")

DEFAULT_THINKING_LEVEL = "medium"


def is_thinking_level(value: str) -> bool:
    """Whether ``value`` names a thinking level."""
    return value in THINKING_LEVELS


def supports_xhigh(model: Model) -> bool:
    """Whether ``model`` accepts ``xhigh`` (GPT-5.2/5.3/5.4, Opus 4.6, or declared in its map)."""
    mapping = model.thinking_level_map
    if mapping is not None and "xhigh" in mapping:
        return mapping["xhigh"] is not None
    return any(part in model.id for part in _XHIGH_IDS)


def available_thinking_levels(model: Model | None) -> list[str]:
    """The levels ``model`` allows, weakest first; ``["off"]`` for non-reasoning models.

    A ``thinking_level_map`` entry mapped to None hides that level; a ``max`` entry with a
    value adds ``max``.
    """
    if model is None or not model.reasoning:
        return ["off"]
    mapping = model.thinking_level_map or {}
    levels = [level for level in _BASE_LEVELS if level == "off" or mapping.get(level, level) is not None]
    if supports_xhigh(model):
        levels.append("xhigh")
    if mapping.get("max") is not None:
        levels.append("max")
    return levels


def clamp_thinking_level(level: str, model: Model | None) -> str:
    """``level`` if ``model`` allows it, else the nearest higher allowed level, else the nearest lower."""
    allowed = available_thinking_levels(model)
    if level in allowed:
        return level
    if level not in THINKING_LEVELS:
        return allowed[0]
    index = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[index + 1 :]:
        if candidate in allowed:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:index]):
        if candidate in allowed:
            return candidate
    return allowed[0]
