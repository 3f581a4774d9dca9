"""Built-in providers and models: pure data, cheap to import.

The facts (ids, names, context windows, output limits, thinking levels, prices) are Pi 1.6's
bundled catalog for the providers pi_coder speaks to (OpenRouter: a selection of its list);
``pi update --models`` overlays a newer catalog file in Pi's published format.
Prices are USD per million tokens (input, output, cache read, cache write), as published by
each vendor; context windows and output limits are in tokens. ``Model`` objects are built on
demand by ``builtin_models`` so importing this module constructs nothing. Models are listed
newest first within a provider, aliases before dated ids.
"""

from __future__ import annotations

from typing import NamedTuple

from pi_coder.ai.types import Model, ModelCost
from pi_coder.json_types import JsonObject

__all__ = [
    "BUILTIN_PROVIDERS",
    "BuiltinProvider",
    "ModelRow",
    "builtin_models",
]


class BuiltinProvider(NamedTuple):
    name: str
    api: str
    base_url: str
    base_url_env: str | None = None
    """Environment variable that overrides ``base_url`` (e.g. ``ANTHROPIC_BASE_URL``)."""
    default_model: str | None = None
    compat: JsonObject | None = None
    """OpenAI-compatible quirks copied onto every model of the provider."""


class ModelRow(NamedTuple):
    id: str
    name: str
    context_window: int
    max_tokens: int
    reasoning: bool
    images: bool
    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0
    levels: dict[str, str | None] | None = None
    """Thinking level -> provider value (None: the model lacks that level); Pi's ``thinkingLevelMap``."""


_ANTHROPIC = "anthropic-messages"
_OPENAI = "openai-completions"
_RESPONSES = "openai-responses"
_GOOGLE = "google-generative-ai"
_NO_STORE: JsonObject = {"supportsStore": False, "supportsDeveloperRole": False}

BUILTIN_PROVIDERS: tuple[BuiltinProvider, ...] = (
    BuiltinProvider("anthropic", _ANTHROPIC, "https://api.anthropic.com", "ANTHROPIC_BASE_URL", "claude-opus-5-5"),
    BuiltinProvider("openai", _RESPONSES, "https://api.openai.com/v1", "OPENAI_BASE_URL", "gpt-6.2-sol"),
    BuiltinProvider(
        "google", _GOOGLE, "https://generativelanguage.googleapis.com/v1beta", "GEMINI_BASE_URL", "gemini-4-argon"
    ),
    BuiltinProvider(
        "openrouter", _OPENAI, "https://openrouter.ai/api/v1", None, "moonshotai/kimi-k2.7-code", {"supportsStore": False}
    ),
    BuiltinProvider("groq", _OPENAI, "https://api.groq.com/openai/v1", None, "openai/gpt-oss-120b", _NO_STORE),
    BuiltinProvider("xai", _RESPONSES, "https://api.x.ai/v1", None, "grok-4.7"),
    BuiltinProvider("cerebras", _OPENAI, "https://api.cerebras.ai/v1", None, "gpt-oss-120b", _NO_STORE),
    BuiltinProvider(
        "mistral",
        _OPENAI,
        "https://api.mistral.ai/v1",
        None,
        "devstral-medium-latest",
        {**_NO_STORE, "maxTokensField": "max_tokens"},
    ),
    BuiltinProvider(
        "deepseek",
        _OPENAI,
        "https://api.deepseek.com/v1",
        None,
        "deepseek-v4-pro",
        {**_NO_STORE, "maxTokensField": "max_tokens"},
    ),
)

_R = ModelRow
_MODELS: dict[str, tuple[ModelRow, ...]] = {
    "anthropic": (
        _R("claude-opus-5-5", "Claude Opus 5.5", 1_000_000, 128_000, True, True, 4, 20, 0.2, 5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("claude-fable-5", "Claude Fable 5", 1_000_000, 128_000, True, True, 10, 50, 1, 12.5, {"off": None, "xhigh": "xhigh", "max": "max"}),
        _R("claude-fable-5-1", "Claude Fable 5.1", 1_000_000, 128_000, True, True, 10, 50, 0.25, 12.5, {"off": None, "xhigh": "xhigh", "max": "max"}),
        _R("claude-fable-5-2", "Claude Fable 5.2", 1_000_000, 128_000, True, True, 8, 40, 0.2, 10, {"off": None, "xhigh": "xhigh", "max": "max"}),
        _R("claude-haiku-4-5", "Claude Haiku 4.5 (latest)", 200_000, 64_000, True, True, 1, 5, 0.1, 1.25),
        _R("claude-haiku-4-5-20251001", "Claude Haiku 4.5", 200_000, 64_000, True, True, 1, 5, 0.1, 1.25),
        _R("claude-haiku-5-5", "Claude Haiku 5.5", 1_000_000, 128_000, True, True, 0.1, 0.5, 0.01, 0.125, {"minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("claude-opus-4-5", "Claude Opus 4.5 (latest)", 200_000, 64_000, True, True, 5, 25, 0.5, 6.25),
        _R("claude-opus-4-5-20251101", "Claude Opus 4.5", 200_000, 64_000, True, True, 5, 25, 0.5, 6.25),
        _R("claude-opus-4-6", "Claude Opus 4.6", 1_000_000, 128_000, True, True, 5, 25, 0.5, 6.25, {"max": "max"}),
        _R("claude-opus-4-7", "Claude Opus 4.7", 1_000_000, 128_000, True, True, 5, 25, 0.5, 6.25, {"xhigh": "xhigh", "max": "max"}),
        _R("claude-opus-4-8", "Claude Opus 4.8", 1_000_000, 128_000, True, True, 5, 25, 0.5, 6.25, {"xhigh": "xhigh", "max": "max"}),
        _R("claude-opus-5", "Claude Opus 5", 1_000_000, 128_000, True, True, 5, 25, 0.5, 6.25, {"xhigh": "xhigh", "max": "max"}),
        _R("claude-sonnet-4-5", "Claude Sonnet 4.5 (latest)", 200_000, 64_000, True, True, 3, 15, 0.3, 3.75),
        _R("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", 200_000, 64_000, True, True, 3, 15, 0.3, 3.75),
        _R("claude-sonnet-4-6", "Claude Sonnet 4.6", 1_000_000, 128_000, True, True, 3, 15, 0.3, 3.75, {"max": "max"}),
        _R("claude-sonnet-5", "Claude Sonnet 5", 1_000_000, 128_000, True, True, 2, 10, 0.2, 2.5, {"xhigh": "xhigh", "max": "max"}),
        _R("claude-sonnet-5-5", "Claude Sonnet 5.5", 1_000_000, 128_000, True, True, 2, 10, 0.1, 2.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
    ),
    "openai": (
        _R("gpt-6.2-sol", "GPT-6.2 Sol", 272_000, 128_000, True, True, 2, 10, 0.1, 2.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("chat-latest", "Chat Latest", 400_000, 128_000, True, True, 5, 30, 0.5),
        _R("gpt-4", "GPT-4", 8_192, 8_192, False, False, 30, 60),
        _R("gpt-4-turbo", "GPT-4 Turbo", 128_000, 4_096, False, True, 10, 30),
        _R("gpt-4.1", "GPT-4.1", 1_047_576, 32_768, False, True, 2, 8, 0.5),
        _R("gpt-4.1-mini", "GPT-4.1 mini", 1_047_576, 32_768, False, True, 0.4, 1.6, 0.1),
        _R("gpt-4.1-nano", "GPT-4.1 nano", 1_047_576, 32_768, False, True, 0.1, 0.4, 0.025),
        _R("gpt-4o", "GPT-4o", 128_000, 16_384, False, True, 2.5, 10, 1.25),
        _R("gpt-4o-2024-05-13", "GPT-4o (2024-05-13)", 128_000, 4_096, False, True, 5, 15),
        _R("gpt-4o-2024-08-06", "GPT-4o (2024-08-06)", 128_000, 16_384, False, True, 2.5, 10, 1.25),
        _R("gpt-4o-2024-11-20", "GPT-4o (2024-11-20)", 128_000, 16_384, False, True, 2.5, 10, 1.25),
        _R("gpt-4o-mini", "GPT-4o mini", 128_000, 16_384, False, True, 0.15, 0.6, 0.075),
        _R("gpt-5", "GPT-5", 400_000, 128_000, True, True, 1.25, 10, 0.125, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gpt-5-chat-latest", "GPT-5 Chat Latest", 128_000, 16_384, False, True, 1.25, 10, 0.125, 0, {"off": None}),
        _R("gpt-5-mini", "GPT-5 Mini", 400_000, 128_000, True, True, 0.25, 2, 0.025, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gpt-5-nano", "GPT-5 Nano", 400_000, 128_000, True, True, 0.05, 0.4, 0.005, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gpt-5-pro", "GPT-5 Pro", 400_000, 128_000, True, True, 15, 120, 0, 0, {"off": None, "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": None}),
        _R("gpt-5.1", "GPT-5.1", 400_000, 128_000, True, True, 1.25, 10, 0.125, 0, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gpt-5.2", "GPT-5.2", 400_000, 128_000, True, True, 1.75, 14, 0.175, 0, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gpt-5.2-pro", "GPT-5.2 Pro", 400_000, 128_000, True, True, 21, 168, 0, 0, {"off": None, "minimal": None, "low": None, "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gpt-5.3-codex", "GPT-5.3 Codex", 400_000, 128_000, True, True, 1.75, 14, 0.175, 0, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gpt-5.3-codex-spark", "GPT-5.3 Codex Spark", 128_000, 32_000, True, True, 1.75, 14, 0.175, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gpt-5.4", "GPT-5.4", 272_000, 128_000, True, True, 2.5, 15, 0.25, 0, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gpt-5.4-mini", "GPT-5.4 mini", 400_000, 128_000, True, True, 0.75, 4.5, 0.075, 0, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gpt-5.4-nano", "GPT-5.4 nano", 400_000, 128_000, True, True, 0.2, 1.25, 0.02, 0, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gpt-5.4-pro", "GPT-5.4 Pro", 1_050_000, 128_000, True, True, 30, 180, 0, 0, {"off": None, "minimal": None, "low": None, "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gpt-5.5", "GPT-5.5", 272_000, 128_000, True, True, 5, 30, 0.5, 0, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gpt-5.5-pro", "GPT-5.5 Pro", 1_050_000, 128_000, True, True, 30, 180, 0, 0, {"off": None, "minimal": None, "low": None, "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gpt-5.6-cyber", "GPT-5.6 Cyber", 400_000, 128_000, True, True, 12.5, 75, 1.25, 15.625, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-5.6-luna", "GPT-5.6 Luna", 272_000, 128_000, True, True, 0.2, 1.2, 0.02, 0.25, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-5.6-sol", "GPT-5.6 Sol", 272_000, 128_000, True, True, 4, 20, 0.4, 5, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-5.6-terra", "GPT-5.6 Terra", 272_000, 128_000, True, True, 2, 12, 0.2, 2.5, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-6-astra", "GPT-6 Astra", 272_000, 128_000, True, True, 10, 50, 1, 12.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-6-cyber", "GPT-6 Cyber", 1_050_000, 128_000, True, True, 20, 100, 2, 25, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-6-luna", "GPT-6 Luna", 272_000, 128_000, True, True, 0.1, 0.5, 0.01, 0.125, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-6-sol", "GPT-6 Sol", 272_000, 128_000, True, True, 2, 10, 0.2, 2.5, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-6.1-sol", "GPT-6.1 Sol", 272_000, 128_000, True, True, 2, 10, 0.1, 2.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-6.1-terra", "GPT-6.1 Terra", 272_000, 128_000, True, True, 1, 5, 0.05, 1.25, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-6.2-astra", "GPT-6.2 Astra", 272_000, 128_000, True, True, 8, 40, 0.4, 10, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-daybreak-blue-latest", "Daybreak Blue", 1_050_000, 128_000, True, True, 4, 20, 0.4, 5, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("gpt-daybreak-red-latest", "Daybreak Red", 400_000, 128_000, True, True, 12.5, 75, 1.25, 15.625, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("o1", "o1", 200_000, 100_000, True, True, 15, 60, 7.5, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("o1-pro", "o1-pro", 200_000, 100_000, True, True, 150, 600, 0, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("o3", "o3", 200_000, 100_000, True, True, 2, 8, 0.5, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("o3-mini", "o3-mini", 200_000, 100_000, True, False, 1.1, 4.4, 0.55, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("o3-pro", "o3-pro", 200_000, 100_000, True, True, 20, 80, 0, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("o4-mini", "o4-mini", 200_000, 100_000, True, True, 1.1, 4.4, 0.275, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
    ),
    "google": (
        _R("gemini-4-argon", "Gemini 4 Argon", 1_048_576, 32_768, True, True, 2, 10, 0.1, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("deep-research-max-preview-04-2026", "Deep Research Max Preview (Apr-21-2026)", 1_048_576, 65_536, True, True, 2, 12, 0.2),
        _R("deep-research-preview-04-2026", "Deep Research Preview (Apr-21-2026)", 1_048_576, 65_536, True, True, 2, 12, 0.2),
        _R("gemini-2.5-computer-use-preview-10-2025", "Gemini 2.5 Computer Use Preview 10-2025", 128_000, 64_000, True, True, 1.25, 10),
        _R("gemini-2.5-flash", "Gemini 2.5 Flash", 1_048_576, 65_536, True, True, 0.3, 2.5, 0.03),
        _R("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", 1_048_576, 65_536, True, True, 0.1, 0.4, 0.01),
        _R("gemini-2.5-pro", "Gemini 2.5 Pro", 1_048_576, 65_536, True, True, 1.25, 10, 0.125),
        _R("gemini-3-flash-preview", "Gemini 3 Flash Preview", 1_048_576, 65_536, True, True, 0.5, 3, 0.05, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-3.1-flash-lite", "Gemini 3.1 Flash Lite", 1_048_576, 65_536, True, True, 0.25, 1.5, 0.025, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-3.1-flash-lite-preview", "Gemini 3.1 Flash Lite Preview", 1_048_576, 65_536, True, True, 0.25, 1.5, 0.025, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", 1_048_576, 65_536, True, True, 2, 12, 0.2, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-3.1-pro-preview-customtools", "Gemini 3.1 Pro Preview Custom Tools", 1_048_576, 65_536, True, True, 2, 12, 0.2, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-3.5-flash", "Gemini 3.5 Flash", 1_048_576, 65_536, True, True, 1.5, 9, 0.15, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-3.5-flash-lite", "Gemini 3.5 Flash Lite", 1_048_576, 65_536, True, True, 0.3, 2.5, 0.03, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-3.6-flash", "Gemini 3.6 Flash", 1_048_576, 65_536, True, True, 0.75, 3.75, 0.075, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-3.7-flash", "Gemini 3.7 Flash", 1_048_576, 65_536, True, True, 0.75, 3.75, 0.075, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-3.8-flash", "Gemini 3.8 Flash", 1_048_576, 65_536, True, True, 0.75, 3.75, 0.075, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-4-carbon", "Gemini 4 Carbon", 1_048_576, 32_768, True, True, 2, 10, 0.1, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-4-hydrogen", "Gemini 4 Hydrogen", 1_048_576, 65_536, True, True, 1.5, 7.5, 0.075, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gemini-4-neon", "Gemini 4 Neon", 1_048_576, 65_536, True, True, 3, 15, 0.15, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("gemini-flash-latest", "Gemini Flash Latest", 1_048_576, 65_536, True, True, 1.5, 9, 0.15, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-flash-lite-latest", "Gemini Flash-Lite Latest", 1_048_576, 65_536, True, True, 0.25, 1.5, 0.025, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-pro-latest", "Gemini Pro Latest", 1_048_576, 65_536, True, True, 2, 12, 0.2, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemini-robotics-er-2-preview", "Gemini Robotics-ER 2 Preview", 131_072, 65_536, True, True, 1, 5, 0.1, 0, {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("gemma-4-26b-a4b-it", "Gemma 4 26B A4B IT", 262_144, 32_768, True, True, 0, 0, 0, 0, {"off": None, "minimal": "MINIMAL", "low": None, "medium": None, "high": "HIGH"}),
        _R("gemma-4-31b-it", "Gemma 4 31B IT", 262_144, 32_768, True, True, 0, 0, 0, 0, {"off": None, "minimal": "MINIMAL", "low": None, "medium": None, "high": "HIGH"}),
    ),
    "openrouter": (
        _R("moonshotai/kimi-k2.7-code", "MoonshotAI: Kimi K2.7 Code", 262_144, 235_929, True, True, 0.6, 3, 0.12, 0, {"off": None}),
        _R("anthropic/claude-haiku-5.5", "Anthropic: Claude Haiku 5.5", 1_000_000, 128_000, True, True, 0.1, 0.5, 0.01, 0.125, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("anthropic/claude-opus-4.6", "Anthropic: Claude Opus 4.6", 1_000_000, 128_000, True, True, 5, 25, 0.5, 6.25, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": "max"}),
        _R("anthropic/claude-opus-5", "Anthropic: Claude Opus 5", 1_000_000, 128_000, True, True, 5, 25, 0.5, 6.25, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("anthropic/claude-opus-5.5", "Anthropic: Claude Opus 5.5", 1_000_000, 128_000, True, True, 4, 20, 0.2, 5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("anthropic/claude-sonnet-4.5", "Anthropic: Claude Sonnet 4.5", 1_000_000, 64_000, True, True, 3, 15, 0.3, 3.75),
        _R("anthropic/claude-sonnet-5", "Anthropic: Claude Sonnet 5", 1_000_000, 128_000, True, True, 2, 10, 0.2, 2.5, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("anthropic/claude-sonnet-5.5", "Anthropic: Claude Sonnet 5.5", 1_000_000, 128_000, True, True, 2, 10, 0.1, 2.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("deepseek/deepseek-chat-v3.1", "DeepSeek: DeepSeek V3.1", 163_840, 147_456, True, False, 0.25, 0.95, 0.13),
        _R("deepseek/deepseek-v4-pro", "DeepSeek: DeepSeek V4 Pro 0423", 1_048_576, 393_216, True, False, 0.9, 1.5, 0.2, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": "xhigh", "max": None}),
        _R("deepseek/deepseek-v4-pro-0813", "DeepSeek: DeepSeek V4 Pro 0813", 1_048_576, 943_718, True, False, 1.32, 3.96, 0.044, 0, {"off": "none", "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("google/gemini-2.5-pro", "Google: Gemini 2.5 Pro", 1_048_576, 65_536, True, True, 1.25, 10, 0.125, 0.375, {"off": None}),
        _R("google/gemini-4-argon", "Google: Gemini 4 Argon", 1_048_576, 943_718, True, True, 2, 10, 0.1, 0.1875, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("google/gemini-4-carbon", "Google: Gemini 4 Carbon", 1_048_576, 943_718, True, True, 2, 10, 0.1, 0.1875, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("google/gemini-4-hydrogen", "Google: Gemini 4 Hydrogen", 1_048_576, 943_718, True, True, 1.5, 7.5, 0.075, 0.083333, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("google/gemini-4-neon", "Google: Gemini 4 Neon", 1_048_576, 943_718, True, True, 3, 15, 0.15, 0.083333, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("moonshotai/kimi-k3", "MoonshotAI: Kimi K3", 1_048_576, 131_072, True, True, 0.192, 16, 0.182, 0, {"off": "none", "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("moonshotai/kimi-k3.1-pro", "MoonshotAI: Kimi K3.1 Pro", 1_048_576, 131_072, True, True, 0.253, 8.8, 0.18, 0, {"off": "none", "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("openai/gpt-5.1-codex", "OpenAI: GPT-5.1-Codex", 400_000, 128_000, True, True, 1.25, 10, 0.13, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("openai/gpt-6-astra", "OpenAI: GPT-6 Astra", 1_050_000, 128_000, True, True, 10, 50, 1, 12.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6-astra-pro", "OpenAI: GPT-6 Astra Pro", 1_050_000, 128_000, True, True, 10, 50, 1, 12.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6-luna", "OpenAI: GPT-6 Luna", 1_050_000, 128_000, True, True, 0.1, 0.5, 0.01, 0.125, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6-luna-pro", "OpenAI: GPT-6 Luna Pro", 1_050_000, 128_000, True, True, 0.1, 0.5, 0.01, 0.125, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6-sol", "OpenAI: GPT-6 Sol", 1_050_000, 128_000, True, True, 2, 10, 0.2, 2.5, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6-sol-pro", "OpenAI: GPT-6 Sol Pro", 1_050_000, 128_000, True, True, 2, 10, 0.2, 2.5, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6.1-sol", "OpenAI: GPT-6.1 Sol", 1_050_000, 128_000, True, True, 2, 10, 0.1, 2.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6.1-sol-pro", "OpenAI: GPT-6.1 Sol Pro", 1_050_000, 128_000, True, True, 2, 10, 0.1, 2.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6.1-terra", "OpenAI: GPT-6.1 Terra", 1_050_000, 128_000, True, True, 1, 5, 0.05, 1.25, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6.1-terra-pro", "OpenAI: GPT-6.1 Terra Pro", 1_050_000, 128_000, True, True, 1, 5, 0.05, 1.25, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6.2-astra", "OpenAI: GPT-6.2 Astra", 1_050_000, 128_000, True, True, 8, 40, 0.4, 10, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6.2-astra-pro", "OpenAI: GPT-6.2 Astra Pro", 1_050_000, 128_000, True, True, 8, 40, 0.4, 10, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6.2-sol", "OpenAI: GPT-6.2 Sol", 1_050_000, 128_000, True, True, 2, 10, 0.1, 2.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("openai/gpt-6.2-sol-pro", "OpenAI: GPT-6.2 Sol Pro", 1_050_000, 128_000, True, True, 2, 10, 0.1, 2.5, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}),
        _R("qwen/qwen3-coder", "Qwen: Qwen3 Coder 480B A35B", 262_144, 65_536, False, False, 0.3, 1, 0.1),
        _R("qwen/qwen3-coder-30b-a3b-instruct", "Qwen: Qwen3 Coder 30B A3B Instruct", 262_144, 235_929, False, False, 0.15, 0.6),
        _R("qwen/qwen3-coder-flash", "Qwen: Qwen3 Coder Flash", 1_000_000, 65_536, False, False, 0.195, 0.975, 0.039, 0.24375),
        _R("qwen/qwen3-coder-next", "Qwen: Qwen3 Coder Next", 262_144, 235_929, False, False, 0.12, 0.8, 0.07),
        _R("x-ai/grok-4.7", "SpaceXSI: Grok 4.7", 500_000, 450_000, True, True, 2, 6, 0.5, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("z-ai/glm-5.3", "Z.ai: GLM 5.3", 1_048_576, 943_718, True, False, 0.0699, 1.4, 0.0689, 0, {"off": None, "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("z-ai/glm-5.3-flash", "Z.ai: GLM 5.3 Flash", 1_048_576, 131_072, True, True, 0.0399, 0.0784, 0.03, 0, {"off": None, "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("z-ai/glm-5.3-flashx", "Z.ai: GLM 5.3 FlashX", 1_048_576, 131_072, True, True, 0.37, 1.25, 0.075, 0, {"off": None, "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("z-ai/glm-5.3-flashx-legal", "Z.ai: GLM 5.3 FlashX Legal", 1_048_576, 131_072, True, True, 0.37, 1.25, 0.075, 0, {"off": None, "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("z-ai/glm-5.3-prime", "Z.ai: GLM 5.3 Prime", 1_000_000, 131_072, True, False, 1.68, 5.28, 0.336, 0, {"off": None, "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
    ),
    "groq": (
        _R("openai/gpt-oss-120b", "GPT OSS 120B", 131_072, 65_536, True, False, 0.15, 0.6, 0.075, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("llama-3.1-8b-instant", "Llama 3.1 8B", 131_072, 131_072, False, False, 0.05, 0.08),
        _R("llama-3.3-70b-versatile", "Llama 3.3 70B", 131_072, 32_768, False, False, 0.59, 0.79),
        _R("openai/gpt-oss-20b", "GPT OSS 20B", 131_072, 65_536, True, False, 0.075, 0.3, 0.0375, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("openai/gpt-oss-safeguard-20b", "Safety GPT OSS 20B", 131_072, 65_536, True, False, 0.075, 0.3, 0.0375, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("qwen/qwen3.6-27b", "Qwen3.6 27B", 131_072, 16_384, True, True, 0.6, 3, 0.3, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "default", "xhigh": None, "max": None}),
        _R("qwen/qwen3.8-27b", "Qwen3.8 27B", 131_072, 16_384, True, True, 0.8, 4, 0, 0, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
    ),
    "xai": (
        _R("grok-4.7", "Grok 4.7", 500_000, 500_000, True, True, 2, 6, 0.5, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("grok-4.3", "Grok 4.3", 1_000_000, 30_000, True, True, 1.25, 2.5, 0.2, 0, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("grok-4.5", "Grok 4.5", 500_000, 500_000, True, True, 2, 6, 0.3, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
        _R("grok-4.6", "Grok 4.6", 500_000, 500_000, True, True, 2, 6, 0.5, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": None}),
    ),
    "cerebras": (
        _R("gpt-oss-120b", "GPT OSS 120B", 131_072, 40_960, True, False, 0.35, 0.75, 0.35, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("qwen-3.8-27b", "Qwen3.8 27B", 131_072, 40_960, True, True, 0.99, 1.49, 0.99, 0, {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
    ),
    "mistral": (
        _R("devstral-medium-latest", "Devstral 2 (latest)", 262_144, 262_144, False, False, 0.4, 2, 0.04),
        _R("codestral-2508", "Codestral 25.08", 256_000, 8_192, False, False, 0.3, 0.9, 0.03),
        _R("codestral-latest", "Codestral (latest)", 256_000, 4_096, False, False, 0.3, 0.9, 0.03),
        _R("deepseek-v4-1-flash-1017", "DeepSeek V4.1 Flash 1017", 1_048_576, 128_000, True, True, 0.3, 1.2, 0.007, 0, {"off": "none", "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("devstral-2512", "Devstral 2", 262_144, 262_144, False, False, 0.4, 2, 0.04),
        _R("devstral-latest", "Devstral 2", 262_144, 262_144, False, False, 0.4, 2, 0.04),
        _R("glm-5-2", "GLM-5.2", 1_048_576, 131_072, True, False, 1.4, 4.4, 0.14, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("labs-devstral-small-2512", "Devstral Small 2", 256_000, 256_000, False, True, 0, 0),
        _R("labs-leanstral-1-5-1", "Leanstral 1.5", 262_144, 128_000, True, True, 0, 0, 0, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": None}),
        _R("magistral-medium-latest", "Magistral Medium (latest)", 262_144, 16_384, True, True, 2, 5, 0.2, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": None}),
        _R("ministral-14b-2512", "Ministral 3 14B", 262_144, 262_144, False, True, 0.2, 0.2, 0.02),
        _R("ministral-3b-2512", "Ministral 3 3B", 131_072, 131_072, False, True, 0.1, 0.1, 0.01),
        _R("ministral-3b-latest", "Ministral 3B (latest)", 131_072, 128_000, False, True, 0.1, 0.1, 0.01),
        _R("ministral-8b-2512", "Ministral 3 8B", 262_144, 262_144, False, True, 0.15, 0.15, 0.015),
        _R("ministral-8b-latest", "Ministral 8B (latest)", 262_144, 128_000, False, True, 0.15, 0.15, 0.015),
        _R("mistral-large-2512", "Mistral Large 3", 262_144, 262_144, False, True, 0.5, 1.5, 0.05),
        _R("mistral-large-4", "Mistral Large 4", 1_048_576, 262_144, True, True, 0.7, 2.1, 0.07, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("mistral-large-4-0-8", "Mistral Large 4.0.8", 1_048_576, 262_144, True, True, 0.7, 2.1, 0.07, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("mistral-large-latest", "Mistral Large (latest)", 1_048_576, 262_144, True, True, 0.7, 2.1, 0.07, 0, {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None, "max": None}),
        _R("mistral-medium-2505", "Mistral Medium 3", 131_072, 131_072, False, True, 0.4, 2, 0.04),
        _R("mistral-medium-2508", "Mistral Medium 3.1", 262_144, 262_144, False, True, 0.4, 2, 0.04),
        _R("mistral-medium-2604", "Mistral Medium 3.5", 262_144, 262_144, True, True, 1.5, 7.5, 0.15, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": None}),
        _R("mistral-medium-3.5", "Mistral Medium 3.5", 262_144, 262_144, True, True, 1.5, 7.5, 0, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": None}),
        _R("mistral-medium-latest", "Mistral Medium (latest)", 262_144, 262_144, True, True, 1.5, 7.5, 0.15, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": None}),
        _R("mistral-small-2506", "Mistral Small 3.2", 128_000, 16_384, False, True, 0.1, 0.3, 0.01),
        _R("mistral-small-2603", "Mistral Small 4", 262_144, 256_000, True, True, 0.15, 0.6, 0.015, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": None}),
        _R("mistral-small-latest", "Mistral Small (latest)", 262_144, 256_000, True, True, 0.15, 0.6, 0.015, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": None}),
        _R("open-mistral-nemo", "Open Mistral Nemo", 128_000, 128_000, False, False, 0.15, 0.15, 0.015),
        _R("pixtral-12b", "Pixtral 12B", 128_000, 128_000, False, True, 0.15, 0.15, 0.015),
        _R("voxtral-small-2507", "Voxtral Small", 32_768, 32_000, False, False, 0.1, 0.4, 0.01),
        _R("voxtral-small-latest", "Voxtral Small (latest)", 32_768, 32_000, False, False, 0.1, 0.4, 0.01),
        _R("zai-glm-5-2", "GLM-5.2", 1_048_576, 131_072, True, False, 1.4, 4.4, 0.14, 0, {"off": "none", "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("zai-glm-5-3", "GLM-5.3", 1_048_576, 131_072, True, False, 1.4, 4.4, 0.14, 0, {"off": None, "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
        _R("zai-glm-5-3-flash", "GLM-5.3-Flash", 1_048_576, 131_072, True, True, 0.15, 0.5, 0.03, 0, {"off": None, "minimal": None, "low": "low", "medium": None, "high": "high", "xhigh": None, "max": "max"}),
    ),
    "deepseek": (
        _R("deepseek-v4-pro", "DeepSeek V4 Pro", 1_000_000, 384_000, True, False, 1.32, 3.96, 0.044, 0, {"minimal": None, "low": None, "medium": None, "high": "high", "max": "max"}),
        _R("deepseek-flash", "DeepSeek V4.1 Flash", 1_000_000, 384_000, True, True, 0.3, 1.2, 0.006, 0, {"minimal": None, "low": "low", "medium": None, "high": "high", "max": "max"}),
    ),
}


def builtin_models(provider: BuiltinProvider, base_url: str | None = None) -> list[Model]:
    """Build the ``Model`` objects of a built-in provider.

    Args:
        provider: The provider record.
        base_url: Base URL to stamp on every model (defaults to the provider's).

    Returns:
        Fresh models, newest first.
    """
    url = base_url if base_url is not None else provider.base_url
    return [
        Model(
            id=row.id,
            name=row.name,
            api=provider.api,
            provider=provider.name,
            base_url=url,
            reasoning=row.reasoning,
            input=["text", "image"] if row.images else ["text"],
            cost=ModelCost(
                input=row.input, output=row.output, cache_read=row.cache_read, cache_write=row.cache_write
            ),
            context_window=row.context_window,
            max_tokens=row.max_tokens,
            compat=dict(provider.compat) if provider.compat else None,
            thinking_level_map=dict(row.levels) if row.levels is not None else None,
        )
        for row in _MODELS.get(provider.name, ())
    ]
