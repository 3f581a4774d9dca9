"""Model resolution: ``--model`` patterns, ``--models`` scopes and the start model.

Pattern rules (Pi's): ``provider/id`` (case-insensitive), then an exact id, then a substring
of the id or name, preferring alias ids (no ``-YYYYMMDD`` suffix, or ``-latest``) over dated
ids and, among several, the id that sorts highest; a trailing ``:<thinking>`` sets the thinking
level (ids that contain colons, like OpenRouter's ``:free``, still match whole first). Models
whose provider has a key are tried before the rest, so ``sonnet`` picks a usable one.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_coder.ai.models import Models
from pi_coder.ai.types import Model
from pi_coder.core.thinking import DEFAULT_THINKING_LEVEL, clamp_thinking_level, is_thinking_level
from pi_coder.errors import ModelNotFoundError

__all__ = [
    "StartModel",
    "default_model_ids",
    "parse_model_pattern",
    "pick_start_model",
    "resolve_model_pattern",
    "resolve_scoped_models",
]

_DATED = re.compile(r"-\d{8}$")


def default_model_ids() -> dict[str, str]:
    """The default model id of each built-in provider, in catalog (preference) order."""
    from pi_coder.ai.catalog import BUILTIN_PROVIDERS

    return {p.name: p.default_model for p in BUILTIN_PROVIDERS if p.default_model}


def _is_alias(model_id: str) -> bool:
    return model_id.endswith("-latest") or not _DATED.search(model_id)


def _match(pattern: str, candidates: Sequence[Model]) -> Model | None:
    lower = pattern.lower()
    provider, slash, model_id = lower.partition("/")
    if slash:
        for model in candidates:
            if model.provider.lower() == provider and model.id.lower() == model_id:
                return model
    for model in candidates:
        if model.id.lower() == lower:
            return model
    matches = [m for m in candidates if lower in m.id.lower() or lower in m.name.lower()]
    if not matches:
        return None
    aliases = [m for m in matches if _is_alias(m.id)]
    pool = aliases or matches
    return max(pool, key=lambda m: m.id)


def parse_model_pattern(pattern: str, candidates: Sequence[Model]) -> tuple[Model | None, str | None, str | None]:
    """Match ``pattern`` (with an optional ``:thinking`` suffix) against ``candidates``.

    Args:
        pattern: What the user typed, e.g. ``sonnet:high`` or ``anthropic/claude-opus-4-6``.
        candidates: The models to search.

    Returns:
        ``(model or None, thinking level or None, warning or None)``. An invalid suffix gives
        a warning and no thinking level.
    """
    model = _match(pattern, candidates)
    if model is not None:
        return model, None, None
    prefix, colon, suffix = pattern.rpartition(":")
    if not colon:
        return None, None, None
    model, thinking, warning = parse_model_pattern(prefix, candidates)
    if model is None:
        return None, None, warning
    if is_thinking_level(suffix):
        return model, (None if warning else suffix), warning
    return model, None, f'Invalid thinking level "{suffix}" in pattern "{pattern}". Using default instead.'


def _custom_model(models: Models, provider: str, model_id: str) -> Model | None:
    record = models.get_provider(provider)
    if record is None:
        return None
    base = None
    default_id = default_model_ids().get(record.name)
    if default_id:
        base = record.get_model(default_id)
    if base is None and record.models:
        base = record.models[0]
    if base is None:
        return Model(id=model_id, name=model_id, api=record.api, provider=record.name, base_url=record.base_url)
    return base.model_copy(update={"id": model_id, "name": model_id})


def resolve_model_pattern(
    models: Models,
    pattern: str,
    provider: str | None = None,
    *,
    warnings: list[str] | None = None,
) -> tuple[Model, str | None]:
    """Resolve ``--model`` (and ``--provider``) to a model and an optional thinking level.

    Args:
        models: The model collection (every model is a candidate, keyed ones first, so
            ``--api-key`` can be used for a provider with no key configured).
        pattern: The ``--model`` value.
        provider: The ``--provider`` value (case-insensitive), restricting the search.
        warnings: Warnings (invalid thinking suffix, custom model id) are appended here.

    Returns:
        ``(model, thinking level or None)``.

    Raises:
        ModelNotFoundError: Unknown provider, or nothing matches.
    """
    notes = warnings if warnings is not None else []
    pattern = pattern.strip()
    every = models.all_models()
    record = None
    if provider:
        record = models.get_provider(provider)
        if record is None:
            raise ModelNotFoundError(f'Unknown provider "{provider}". Use --list-models to see available providers.')
        prefix = record.name.lower() + "/"
        if pattern.lower().startswith(prefix):
            pattern = pattern[len(prefix) :]
        every = [m for m in every if m.provider == record.name]
    available = [m for m in every if models.has_key(m.provider)]
    for pool in (available, every):
        model, thinking, warning = parse_model_pattern(pattern, pool)
        if model is not None:
            if warning:
                notes.append(warning)
            return model, thinking
    if record is None and "/" in pattern:
        record = models.get_provider(pattern.split("/", 1)[0])
        if record is not None:
            pattern = pattern.split("/", 1)[1]
    if record is not None:
        base_pattern, thinking = pattern, None
        head, colon, tail = pattern.rpartition(":")
        if colon and is_thinking_level(tail):
            base_pattern, thinking = head, tail
        custom = _custom_model(models, record.name, base_pattern)
        if custom is not None:
            notes.append(f'Model "{base_pattern}" not found for provider "{record.name}". Using custom model id.')
            return custom, thinking
    shown = f"{record.name}/{pattern}" if record is not None else pattern
    raise ModelNotFoundError(f'Model "{shown}" not found. Use --list-models to see available models.')


def _is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


def resolve_scoped_models(
    models: Models | Sequence[Model],
    patterns: Sequence[str],
    *,
    warnings: list[str] | None = None,
) -> list[tuple[Model, str | None]]:
    """Resolve ``--models`` / ``enabled_models`` patterns to the Ctrl+P cycle list.

    Globs (``anthropic/*``, ``*sonnet*``) match ``provider/id`` or the id, case-insensitively;
    other patterns follow :func:`parse_model_pattern`. Each may end in ``:<thinking>``. Only
    models whose provider has a key are used; duplicates are dropped, order is kept.

    Args:
        models: The collection (its available models are used) or an explicit model list.
        patterns: The patterns, in order.
        warnings: ``No models match pattern "x"`` and invalid-suffix warnings go here.

    Returns:
        ``[(model, thinking level or None), ...]``.
    """
    notes = warnings if warnings is not None else []
    pool = models.available_models() if isinstance(models, Models) else list(models)
    scoped: list[tuple[Model, str | None]] = []
    seen: set[tuple[str, str]] = set()

    def add(model: Model, thinking: str | None) -> None:
        key = (model.provider, model.id)
        if key not in seen:
            seen.add(key)
            scoped.append((model, thinking))

    for raw in patterns:
        pattern = raw.strip()
        if not pattern:
            continue
        if _is_glob(pattern):
            glob, thinking = pattern, None
            head, colon, tail = pattern.rpartition(":")
            if colon and is_thinking_level(tail):
                glob, thinking = head, tail
            glob = glob.lower()
            hits = [
                m
                for m in pool
                if fnmatch.fnmatchcase(f"{m.provider}/{m.id}".lower(), glob) or fnmatch.fnmatchcase(m.id.lower(), glob)
            ]
            if not hits:
                notes.append(f'No models match pattern "{raw}"')
            for hit in hits:
                add(hit, thinking)
            continue
        model, thinking, warning = parse_model_pattern(pattern, pool)
        if warning:
            notes.append(warning)
        if model is None:
            notes.append(f'No models match pattern "{raw}"')
            continue
        add(model, thinking)
    return scoped


@dataclass(slots=True, kw_only=True)
class StartModel:
    """The model and thinking level a session starts with, and what the user should be told."""

    model: Model | None
    thinking_level: str
    notices: list[str] = field(default_factory=list)
    """Warnings such as ``Could not restore model p/id (reason). Using q/id.``"""


def _first_available(models: Models) -> Model | None:
    available = models.available_models()
    if not available:
        return None
    defaults = default_model_ids()
    for provider, model_id in defaults.items():
        for model in available:
            if model.provider == provider and model.id == model_id:
                return model
    return available[0]


def _setting(settings: Any, name: str) -> Any:
    inner = getattr(settings, "settings", settings)
    return getattr(inner, name, None) if inner is not None else None


def restore_notice(provider: str, model_id: str, reason: str, fallback: Model | None) -> str:
    """Pi's warning when a session's model cannot be used."""
    text = f"Could not restore model {provider}/{model_id} ({reason})."
    if fallback is not None:
        text += f" Using {fallback.provider}/{fallback.id}."
    return text


def pick_start_model(
    models: Models,
    settings: Any = None,
    store: Any = None,
    cli_model: tuple[Model, str | None] | Model | None = None,
    *,
    cli_thinking: str | None = None,
    scoped_models: Sequence[tuple[Model, str | None]] = (),
    session_model: tuple[str, str] | None = None,
    session_thinking: str | None = None,
) -> StartModel:
    """Choose the start model and thinking level.

    Priority: the CLI model; the first scoped model (only for a new session); the model stored
    in the session (when it is available with a key, else a notice and fall through); the
    settings default (when it has a key); the first provider default with a key; the first
    available model; else None.

    Thinking: ``cli_thinking``, then the ``:thinking`` of the chosen pattern/scope, then the
    session's, then the model's ``model_thinking_levels`` entry, then ``default_thinking_level``,
    then ``medium``; clamped to the model.

    Args:
        models: The model collection.
        settings: ``Settings`` or ``LoadedSettings`` (for ``default_provider``/``default_model``).
        store: A session store; when it holds entries, its context's model and thinking level
            are used (``build_session_context()``), overriding ``session_model``/``session_thinking``.
        cli_model: What ``resolve_model_pattern`` returned for ``--model``, if given.
        cli_thinking: The ``--thinking`` value.
        scoped_models: The ``--models``/``enabled_models`` scope.
        session_model: ``(provider, model_id)`` stored in the session being resumed.
        session_thinking: The thinking level stored in the session being resumed.
    """
    if store is not None:
        session_model, session_thinking = _stored_model(store, session_model, session_thinking)
    resuming = session_model is not None or session_thinking is not None
    notices: list[str] = []
    model: Model | None = None
    thinking: str | None = None
    if isinstance(cli_model, tuple):
        model, thinking = cli_model
    elif cli_model is not None:
        model = cli_model
    if model is None and scoped_models and not resuming:
        model, thinking = scoped_models[0]
    if model is None and session_model is not None:
        provider, model_id = session_model
        found = models.get_model(provider, model_id)
        if found is not None and models.has_key(found.provider):
            model = found
        else:
            reason = "model no longer exists" if found is None else "no API key available"
            fallback = _settings_default(models, settings) or _first_available(models)
            notices.append(restore_notice(provider, model_id, reason, fallback))
            model = fallback
    if model is None:
        model = _settings_default(models, settings)
    if model is None:
        model = _first_available(models)
        default_provider = _setting(settings, "default_provider")
        default_id = _setting(settings, "default_model")
        if default_provider and default_id:
            configured = models.get_model(default_provider, default_id)
            if model is None and configured is not None:
                model = configured  # no key anywhere: keep the user's choice; prompt() explains the key
            elif model is not None and configured is not None:
                notices.append(
                    f"No API key for the default model {default_provider}/{default_id}. "
                    f"Using {model.provider}/{model.id}."
                )
    level = cli_thinking or thinking or (session_thinking if resuming else None)
    if level is None and model is not None:
        level = (_setting(settings, "model_thinking_levels") or {}).get(f"{model.provider}/{model.id}")
    level = level or _setting(settings, "default_thinking_level") or DEFAULT_THINKING_LEVEL
    if model is not None:
        level = clamp_thinking_level(level, model)
    return StartModel(model=model, thinking_level=level, notices=notices)


def _settings_default(models: Models, settings: Any) -> Model | None:
    provider = _setting(settings, "default_provider")
    model_id = _setting(settings, "default_model")
    if not provider or not model_id:
        return None
    found = models.get_model(provider, model_id)
    if found is not None and models.has_key(found.provider):
        return found
    return None


def _stored_model(
    store: Any, session_model: tuple[str, str] | None, session_thinking: str | None
) -> tuple[tuple[str, str] | None, str | None]:
    if not store.get_entries():
        return session_model, session_thinking
    context = store.build_session_context()
    if context.model is not None:
        session_model = (context.model[0], context.model[1])
    from pi_coder.session.entries import ThinkingLevelChangeEntry

    for entry in store.get_branch():
        if isinstance(entry, ThinkingLevelChangeEntry):
            session_thinking = entry.thinking_level
    return session_model, session_thinking
