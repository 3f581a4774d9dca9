"""Built-in providers and models: pure data, cheap to import.

Prices are USD per million tokens (input, output, cache read, cache write), as published by
each vendor; context windows and output limits are in tokens. ``Model`` objects are built on
demand by ``builtin_models`` so importing this module constructs nothing. Models are listed
newest first within a provider, aliases before dated ids.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pi_coder.ai.types import Model, ModelCost

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
    compat: dict[str, Any] | None = None
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


_ANTHROPIC = "anthropic-messages"
_OPENAI = "openai-completions"
_NO_STORE = {"supportsStore": False, "supportsDeveloperRole": False}

BUILTIN_PROVIDERS: tuple[BuiltinProvider, ...] = (
    BuiltinProvider("anthropic", _ANTHROPIC, "https://api.anthropic.com", "ANTHROPIC_BASE_URL", "claude-opus-4-6"),
    BuiltinProvider("openai", _OPENAI, "https://api.openai.com/v1", "OPENAI_BASE_URL", "gpt-5.4"),
    BuiltinProvider(
        "openrouter", _OPENAI, "https://openrouter.ai/api/v1", None, "openai/gpt-5.1-codex", {"supportsStore": False}
    ),
    BuiltinProvider("groq", _OPENAI, "https://api.groq.com/openai/v1", None, "openai/gpt-oss-120b", _NO_STORE),
    BuiltinProvider("xai", _OPENAI, "https://api.x.ai/v1", None, "grok-code-fast-1", _NO_STORE),
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
        "deepseek-chat",
        {**_NO_STORE, "maxTokensField": "max_tokens"},
    ),
)

_R = ModelRow
_MODELS: dict[str, tuple[ModelRow, ...]] = {
    "anthropic": (
        _R("claude-opus-4-6", "Claude Opus 4.6", 1_000_000, 128_000, True, True, 5, 25, 0.5, 6.25),
        _R("claude-sonnet-4-6", "Claude Sonnet 4.6", 1_000_000, 64_000, True, True, 3, 15, 0.3, 3.75),
        _R("claude-opus-4-5", "Claude Opus 4.5", 200_000, 64_000, True, True, 5, 25, 0.5, 6.25),
        _R("claude-opus-4-5-20251101", "Claude Opus 4.5 (2025-11-01)", 200_000, 64_000, True, True, 5, 25, 0.5, 6.25),
        _R("claude-sonnet-4-5", "Claude Sonnet 4.5", 200_000, 64_000, True, True, 3, 15, 0.3, 3.75),
        _R("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5 (2025-09-29)", 200_000, 64_000, True, True, 3, 15, 0.3, 3.75),
        _R("claude-haiku-4-5", "Claude Haiku 4.5", 200_000, 64_000, True, True, 1, 5, 0.1, 1.25),
        _R("claude-haiku-4-5-20251001", "Claude Haiku 4.5 (2025-10-01)", 200_000, 64_000, True, True, 1, 5, 0.1, 1.25),
        _R("claude-opus-4-1", "Claude Opus 4.1", 200_000, 32_000, True, True, 15, 75, 1.5, 18.75),
        _R("claude-opus-4-1-20250805", "Claude Opus 4.1 (2025-08-05)", 200_000, 32_000, True, True, 15, 75, 1.5, 18.75),
        _R("claude-opus-4-0", "Claude Opus 4", 200_000, 32_000, True, True, 15, 75, 1.5, 18.75),
        _R("claude-opus-4-20250514", "Claude Opus 4 (2025-05-14)", 200_000, 32_000, True, True, 15, 75, 1.5, 18.75),
        _R("claude-sonnet-4-0", "Claude Sonnet 4", 200_000, 64_000, True, True, 3, 15, 0.3, 3.75),
        _R("claude-sonnet-4-20250514", "Claude Sonnet 4 (2025-05-14)", 200_000, 64_000, True, True, 3, 15, 0.3, 3.75),
        _R("claude-3-7-sonnet-latest", "Claude Sonnet 3.7", 200_000, 64_000, True, True, 3, 15, 0.3, 3.75),
        _R("claude-3-5-haiku-latest", "Claude Haiku 3.5", 200_000, 8_192, False, True, 0.8, 4, 0.08, 1),
    ),
    "openai": (
        _R("gpt-5.4", "GPT-5.4", 1_050_000, 128_000, True, True, 2.5, 15, 0.25),
        _R("gpt-5.2", "GPT-5.2", 400_000, 128_000, True, True, 1.75, 14, 0.175),
        _R("gpt-5.1", "GPT-5.1", 400_000, 128_000, True, True, 1.25, 10, 0.125),
        _R("gpt-5.1-codex", "GPT-5.1 Codex", 400_000, 128_000, True, True, 1.25, 10, 0.125),
        _R("gpt-5", "GPT-5", 400_000, 128_000, True, True, 1.25, 10, 0.125),
        _R("gpt-5-mini", "GPT-5 mini", 400_000, 128_000, True, True, 0.25, 2, 0.025),
        _R("gpt-5-nano", "GPT-5 nano", 400_000, 128_000, True, True, 0.05, 0.4, 0.005),
        _R("gpt-4.1", "GPT-4.1", 1_047_576, 32_768, False, True, 2, 8, 0.5),
        _R("gpt-4.1-mini", "GPT-4.1 mini", 1_047_576, 32_768, False, True, 0.4, 1.6, 0.1),
        _R("gpt-4o", "GPT-4o", 128_000, 16_384, False, True, 2.5, 10, 1.25),
        _R("gpt-4o-mini", "GPT-4o mini", 128_000, 16_384, False, True, 0.15, 0.6, 0.075),
        _R("o3", "o3", 200_000, 100_000, True, True, 2, 8, 0.5),
        _R("o4-mini", "o4-mini", 200_000, 100_000, True, True, 1.1, 4.4, 0.275),
    ),
    "openrouter": (
        _R("openai/gpt-5.1-codex", "OpenAI: GPT-5.1 Codex", 400_000, 128_000, True, True, 1.25, 10, 0.125),
        _R("anthropic/claude-sonnet-4.5", "Anthropic: Claude Sonnet 4.5", 1_000_000, 64_000, True, True, 3, 15, 0.3, 3.75),
        _R("anthropic/claude-opus-4.6", "Anthropic: Claude Opus 4.6", 1_000_000, 128_000, True, True, 5, 25, 0.5, 6.25),
        _R("google/gemini-2.5-pro", "Google: Gemini 2.5 Pro", 1_048_576, 65_536, True, True, 1.25, 10, 0.31, 1.625),
        _R("deepseek/deepseek-chat-v3.1", "DeepSeek: DeepSeek V3.1", 163_840, 65_536, True, False, 0.2, 0.8),
        _R("qwen/qwen3-coder", "Qwen: Qwen3 Coder", 262_144, 65_536, False, False, 0.22, 0.95),
    ),
    "groq": (
        _R("openai/gpt-oss-120b", "GPT OSS 120B", 131_072, 65_536, True, False, 0.15, 0.75),
        _R("openai/gpt-oss-20b", "GPT OSS 20B", 131_072, 65_536, True, False, 0.075, 0.3),
        _R("moonshotai/kimi-k2-instruct-0905", "Kimi K2 Instruct 0905", 262_144, 16_384, False, False, 1, 3),
        _R("llama-3.3-70b-versatile", "Llama 3.3 70B Versatile", 131_072, 32_768, False, False, 0.59, 0.79),
    ),
    "xai": (
        _R("grok-code-fast-1", "Grok Code Fast 1", 256_000, 10_000, True, False, 0.2, 1.5, 0.02),
        _R("grok-4", "Grok 4", 256_000, 64_000, True, True, 3, 15, 0.75),
        _R("grok-4-fast", "Grok 4 Fast", 2_000_000, 30_000, True, True, 0.2, 0.5, 0.05),
    ),
    "cerebras": (
        _R("gpt-oss-120b", "GPT OSS 120B", 131_072, 32_768, True, False, 0.25, 0.69),
        _R("qwen-3-235b-a22b-instruct-2507", "Qwen 3 235B Instruct", 131_072, 32_768, False, False, 0.6, 1.2),
        _R("qwen-3-coder-480b", "Qwen 3 Coder 480B", 131_072, 32_768, False, False, 2, 2),
    ),
    "mistral": (
        _R("devstral-medium-latest", "Devstral Medium", 128_000, 32_768, False, False, 0.4, 2),
        _R("mistral-large-latest", "Mistral Large", 128_000, 32_768, False, True, 0.5, 1.5),
        _R("codestral-latest", "Codestral", 256_000, 32_768, False, False, 0.3, 0.9),
    ),
    "deepseek": (
        _R("deepseek-chat", "DeepSeek Chat", 128_000, 8_192, False, False, 0.28, 0.42, 0.028),
        _R("deepseek-reasoner", "DeepSeek Reasoner", 128_000, 64_000, True, False, 0.28, 0.42, 0.028),
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
        )
        for row in _MODELS.get(provider.name, ())
    ]
