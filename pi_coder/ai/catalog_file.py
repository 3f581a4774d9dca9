"""Catalog files in Pi's published format, as ``pi update --models`` saves them.

Pi publishes one JSON object per provider: wire protocol id -> ``"<type>:<model id>"`` ->
model record (camelCase: ``id``, ``name``, ``api``, ``provider``, ``baseUrl``, ``reasoning``,
``input``, ``cost`` {input, output, cacheRead, cacheWrite}, ``contextWindow``, ``maxTokens``,
``thinkingLevelMap``, ``compat``). A file may hold one such object, a list of them, or an
object of them keyed by provider. Only ``chat`` records of APIs pi_coder speaks are used.

The saved overlay (``<config dir>/models-catalog.json``) is read when the model collection is
built: its models replace or join the built-in ones of the same provider.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pi_coder.ai.registry import API_STREAMS
from pi_coder.ai.types import Model, ModelCost
from pi_coder.errors import ConfigError
from pi_coder.json_types import JsonObject

__all__ = ["OVERLAY_NAME", "overlay_path", "parse_catalog", "read_overlay"]

OVERLAY_NAME = "models-catalog.json"


def overlay_path(models_toml: Path) -> Path:
    """The overlay file that sits beside ``models.toml``."""
    return models_toml.with_name(OVERLAY_NAME)


def _records(data: object) -> list[JsonObject]:
    found: list[JsonObject] = []
    if isinstance(data, list):
        for item in data:
            found.extend(_records(item))
    elif isinstance(data, dict):
        if isinstance(data.get("id"), str) and "api" in data:
            found.append(data)
        else:
            for value in data.values():
                if isinstance(value, (dict, list)):
                    found.extend(_records(value))
    return found


def _float(value: object) -> float:
    """``float(value)`` for what a JSON document can hold (a TypeError for arrays and objects)."""
    if isinstance(value, str | int | float):
        return float(value)
    raise TypeError(f"not a number: {type(value).__name__}")


def _int(value: object) -> int:
    """``int(value)`` for what a JSON document can hold (a TypeError for arrays and objects)."""
    if isinstance(value, str | int | float):
        return int(value)
    raise TypeError(f"not a number: {type(value).__name__}")


def _input_kinds(value: object) -> list[Literal["text", "image"]]:
    """The known input kinds listed in ``value`` (an array, or what iterating a string gives)."""
    if not isinstance(value, list | str | dict):
        raise TypeError(f"not a list: {type(value).__name__}")
    kinds: list[Literal["text", "image"]] = []
    for kind in value:
        if kind == "text":
            kinds.append("text")
        elif kind == "image":
            kinds.append("image")
    return kinds


def _model(record: JsonObject) -> Model | None:
    api = record.get("api")
    if record.get("type", "chat") != "chat" or not isinstance(api, str) or api not in API_STREAMS:
        return None
    provider, model_id = record.get("provider"), record.get("id")
    if not isinstance(provider, str) or not isinstance(model_id, str):
        return None
    raw_cost = record.get("cost")
    cost: JsonObject = raw_cost if isinstance(raw_cost, dict) else {}
    levels = record.get("thinkingLevelMap")
    try:
        return Model(
            id=model_id,
            name=str(record.get("name") or model_id),
            api=api,
            provider=provider,
            base_url=str(record.get("baseUrl") or ""),
            reasoning=bool(record.get("reasoning")),
            input=_input_kinds(record.get("input") or ["text"]) or ["text"],
            cost=ModelCost(
                input=_float(cost.get("input") or 0),
                output=_float(cost.get("output") or 0),
                cache_read=_float(cost.get("cacheRead") or 0),
                cache_write=_float(cost.get("cacheWrite") or 0),
            ),
            context_window=_int(record.get("contextWindow") or 128_000),
            max_tokens=_int(record.get("maxTokens") or 16_384),
            thinking_level_map=dict(levels) if isinstance(levels, dict) else None,
        )
    except (TypeError, ValueError):
        return None


def parse_catalog(data: object) -> list[Model]:
    """The usable chat models of a catalog document (records of other kinds are skipped).

    Raises:
        ConfigError: The document holds no model record at all.
    """
    records = _records(data)
    if not records:
        raise ConfigError("The file holds no model records in Pi's catalog format")
    return [m for m in (_model(r) for r in records) if m is not None]


def read_overlay(path: Path) -> list[Model]:
    """The models of a saved overlay; empty when there is none or it cannot be read."""
    try:
        if not os.path.exists(path):
            return []
        return parse_catalog(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ConfigError):
        return []
