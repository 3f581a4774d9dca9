"""Model resolution rules (pattern, scope, start model) and thinking-level clamping."""

from __future__ import annotations

import pytest

from pi_coder.ai.models import Models, create_models
from pi_coder.ai.registry import Provider
from pi_coder.ai.types import Model
from pi_coder.core.model_resolver import (
    parse_model_pattern,
    pick_start_model,
    resolve_model_pattern,
    resolve_scoped_models,
)
from pi_coder.core.thinking import available_thinking_levels, clamp_thinking_level
from pi_coder.errors import ModelNotFoundError
from pi_coder.settings import Settings


def _model(provider: str, model_id: str, *, name: str = "", reasoning: bool = True, api: str = "openai-completions") -> Model:
    return Model(id=model_id, name=name or model_id, api=api, provider=provider, reasoning=reasoning)


def _models(env: dict[str, str] | None = None) -> Models:
    models = create_models(include_builtin=False, env=env or {}, models_toml=None)
    models.set_provider(
        Provider(
            name="anthropic",
            api="anthropic-messages",
            env_vars=("ANTHROPIC_API_KEY",),
            models=[
                _model("anthropic", "claude-sonnet-4-5", name="Claude Sonnet 4.5", api="anthropic-messages"),
                _model("anthropic", "claude-sonnet-4-5-20250929", name="Claude Sonnet 4.5 (dated)", api="anthropic-messages"),
                _model("anthropic", "claude-opus-4-6", name="Claude Opus 4.6", api="anthropic-messages"),
                _model("anthropic", "claude-3-5-haiku-20241022", name="Haiku", reasoning=False, api="anthropic-messages"),
                _model("anthropic", "claude-3-5-haiku-20240101", name="Haiku old", reasoning=False, api="anthropic-messages"),
            ],
        )
    )
    models.set_provider(
        Provider(
            name="openrouter",
            api="openai-completions",
            env_vars=("OPENROUTER_API_KEY",),
            models=[
                _model("openrouter", "anthropic/claude-sonnet-4-5"),
                _model("openrouter", "qwen/qwen3-coder:free"),
            ],
        )
    )
    models.set_provider(
        Provider(name="openai", api="openai-completions", env_vars=("OPENAI_API_KEY",), models=[_model("openai", "gpt-5.4")])
    )
    return models


def test_provider_slash_id_matches_case_insensitively() -> None:
    """``Provider/ID`` picks that exact provider's model."""
    model, thinking = resolve_model_pattern(_models(), "OpenRouter/Anthropic/Claude-Sonnet-4-5")
    assert (model.provider, model.id, thinking) == ("openrouter", "anthropic/claude-sonnet-4-5", None)


def test_exact_id_beats_substring() -> None:
    model, _ = resolve_model_pattern(_models(), "claude-sonnet-4-5")
    assert (model.provider, model.id) == ("anthropic", "claude-sonnet-4-5")


def test_fuzzy_prefers_alias_over_dated_and_highest_dated_without_alias() -> None:
    models = _models()
    model, _, _ = parse_model_pattern("sonnet", models.all_models())
    assert model is not None and model.id == "claude-sonnet-4-5"
    model, _, _ = parse_model_pattern("haiku", models.all_models())
    assert model is not None and model.id == "claude-3-5-haiku-20241022"


def test_fuzzy_matches_display_name() -> None:
    model, _, _ = parse_model_pattern("opus 4.6", _models().all_models())
    assert model is not None and model.id == "claude-opus-4-6"


def test_thinking_suffix_and_ids_containing_colons() -> None:
    models = _models()
    model, thinking = resolve_model_pattern(models, "sonnet:high")
    assert (model.id, thinking) == ("claude-sonnet-4-5", "high")
    model, thinking = resolve_model_pattern(models, "qwen/qwen3-coder:free")
    assert (model.id, thinking) == ("qwen/qwen3-coder:free", None)
    model, thinking = resolve_model_pattern(models, "qwen3-coder:free:low")
    assert (model.id, thinking) == ("qwen/qwen3-coder:free", "low")


def test_invalid_thinking_suffix_warns_and_keeps_the_model() -> None:
    warnings: list[str] = []
    model, thinking = resolve_model_pattern(_models(), "sonnet:turbo", warnings=warnings)
    assert (model.id, thinking) == ("claude-sonnet-4-5", None)
    assert warnings == ['Invalid thinking level "turbo" in pattern "sonnet:turbo". Using default instead.']


def test_models_with_a_key_are_preferred() -> None:
    """With only OPENROUTER_API_KEY set, ``sonnet`` resolves to the usable OpenRouter model."""
    model, _ = resolve_model_pattern(_models({"OPENROUTER_API_KEY": "k"}), "sonnet")
    assert model.provider == "openrouter"


def test_provider_flag_restricts_and_strips_prefix() -> None:
    models = _models()
    model, _ = resolve_model_pattern(models, "sonnet", provider="OPENROUTER")
    assert model.provider == "openrouter"
    model, _ = resolve_model_pattern(models, "openrouter/qwen3", provider="openrouter")
    assert model.id == "qwen/qwen3-coder:free"


def test_unknown_model_of_known_provider_gives_custom_id_with_warning() -> None:
    warnings: list[str] = []
    model, thinking = resolve_model_pattern(_models(), "openai/gpt-9-preview:high", warnings=warnings)
    assert (model.provider, model.id, model.api, thinking) == ("openai", "gpt-9-preview", "openai-completions", "high")
    assert warnings == ['Model "gpt-9-preview" not found for provider "openai". Using custom model id.']


def test_not_found_and_unknown_provider_errors() -> None:
    with pytest.raises(ModelNotFoundError) as info:
        resolve_model_pattern(_models(), "llama-77")
    assert str(info.value) == 'Model "llama-77" not found. Use --list-models to see available models.'
    with pytest.raises(ModelNotFoundError, match='Unknown provider "nope"'):
        resolve_model_pattern(_models(), "x", provider="nope")


def test_scoped_models_globs_thinking_and_dedup() -> None:
    models = _models({"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"})
    warnings: list[str] = []
    scoped = resolve_scoped_models(
        models, ["anthropic/*sonnet*:low", "claude-sonnet-4-5", "gpt-5.4:high", "*qwen*"], warnings=warnings
    )
    assert [(m.provider, m.id, t) for m, t in scoped] == [
        ("anthropic", "claude-sonnet-4-5", "low"),
        ("anthropic", "claude-sonnet-4-5-20250929", "low"),
        ("openai", "gpt-5.4", "high"),
    ]
    assert warnings == ['No models match pattern "*qwen*"']  # openrouter has no key


def test_start_model_priority() -> None:
    models = _models({"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"})
    settings = Settings(default_provider="openai", default_model="gpt-5.4", default_thinking_level="low")
    opus = models.get_model("anthropic", "claude-opus-4-6")
    assert opus is not None
    # CLI model wins, with its pattern thinking level, clamped to the model.
    start = pick_start_model(models, settings, cli_model=(opus, "xhigh"))
    assert (start.model, start.thinking_level) == (opus, "xhigh")
    # Settings default next, with the default thinking level.
    start = pick_start_model(models, settings)
    assert start.model is not None and start.model.id == "gpt-5.4" and start.thinking_level == "low"
    # A resumed session's model beats the settings default; its thinking level too.
    start = pick_start_model(models, settings, session_model=("anthropic", "claude-opus-4-6"), session_thinking="high")
    assert start.model == opus and start.thinking_level == "high" and start.notices == []


def test_start_model_takes_the_models_own_thinking_level() -> None:
    """``model_thinking_levels``: the level a model starts with, before ``default_thinking_level``;
    ``--thinking`` and a resumed session's level still win."""
    models = _models({"OPENAI_API_KEY": "o"})
    settings = Settings(
        default_provider="openai", default_model="gpt-5.4", default_thinking_level="low",
        model_thinking_levels={"openai/gpt-5.4": "high"},
    )  # fmt: skip
    assert pick_start_model(models, settings).thinking_level == "high"
    assert pick_start_model(models, settings, cli_thinking="minimal").thinking_level == "minimal"
    resumed = pick_start_model(models, settings, session_model=("openai", "gpt-5.4"), session_thinking="medium")
    assert resumed.thinking_level == "medium"
    other = Settings(default_provider="openai", default_model="gpt-5.4", model_thinking_levels={"openai/x": "high"})
    assert pick_start_model(models, other).thinking_level == "medium"


def test_start_model_restore_failure_notice_and_fallback() -> None:
    models = _models({"OPENAI_API_KEY": "o"})
    start = pick_start_model(models, Settings(), session_model=("anthropic", "claude-opus-4-6"))
    assert start.model is not None and start.model.id == "gpt-5.4"
    assert start.notices == [
        "Could not restore model anthropic/claude-opus-4-6 (no API key available). Using openai/gpt-5.4."
    ]
    start = pick_start_model(models, Settings(), session_model=("gone", "model-x"))
    assert start.notices[0].startswith("Could not restore model gone/model-x (model no longer exists).")


def test_start_model_none_without_keys() -> None:
    start = pick_start_model(_models(), Settings())
    assert start.model is None and start.thinking_level == "medium"


def test_thinking_levels_and_clamping() -> None:
    models = _models()
    sonnet = models.get_model("anthropic", "claude-sonnet-4-5")
    opus = models.get_model("anthropic", "claude-opus-4-6")
    haiku = models.get_model("anthropic", "claude-3-5-haiku-20241022")
    gpt = models.get_model("openai", "gpt-5.4")
    assert available_thinking_levels(haiku) == ["off"]
    assert available_thinking_levels(sonnet) == ["off", "minimal", "low", "medium", "high"]
    assert available_thinking_levels(opus)[-1] == "xhigh"
    assert available_thinking_levels(gpt)[-1] == "xhigh"
    assert clamp_thinking_level("xhigh", sonnet) == "high"
    assert clamp_thinking_level("high", haiku) == "off"
    assert clamp_thinking_level("max", opus) == "xhigh"
    mapped = Model(
        id="m", api="x", provider="p", reasoning=True, thinking_level_map={"minimal": None, "max": "max"}
    )
    assert available_thinking_levels(mapped) == ["off", "low", "medium", "high", "max"]
    assert clamp_thinking_level("minimal", mapped) == "low"
    assert clamp_thinking_level("xhigh", mapped) == "max"
