"""What pi says when no model is configured: one text for the TUI, the start-up error and the session."""

from __future__ import annotations

from pathlib import Path

from pi_coder.paths import config_dir, shorten_home

__all__ = ["LOCAL_EXAMPLE", "NO_MODEL_HEADLINE", "NO_MODEL_MARKERS", "no_model_text"]

NO_MODEL_HEADLINE = "No model configured."

LOCAL_EXAMPLE = (
    "    [providers.local]\n"
    '    api = "openai-completions"\n'
    '    base_url = "http://127.0.0.1:8080/v1"\n'
    '    api_key = "none"\n'
    '    models = [{ id = "qwen2.5-coder", context_window = 32768 }]'
)
"""A local OpenAI-compatible server in models.toml (the TUI shows it in colour)."""

NO_MODEL_MARKERS = (
    "/login",
    "/model",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "pi --provider NAME --model ID --api-key KEY",
    "pi --model local/qwen2.5-coder",
)
"""The commands and variables in the text (the TUI shows them in bold)."""


def no_model_text(models_toml: str | Path | None = None) -> str:
    """How to configure a model; ``models_toml`` defaults to the one in the config folder."""
    where = shorten_home(str(models_toml if models_toml is not None else config_dir() / "models.toml"))
    return (
        f"{NO_MODEL_HEADLINE} To use pi, either:\n"
        "  • run /login in the TUI to paste a provider's key, or set ANTHROPIC_API_KEY or OPENAI_API_KEY\n"
        "    (or another provider's key, e.g. OPENROUTER_API_KEY, GROQ_API_KEY) and restart, or\n"
        "  • give the key on the command line: pi --provider NAME --model ID --api-key KEY, or\n"
        f"  • add a provider to {where}, e.g. a local OpenAI-compatible server (llama.cpp, Ollama, vLLM):\n"
        "\n"
        f"{LOCAL_EXAMPLE}\n"
        "\n"
        "    then start pi --model local/qwen2.5-coder (or pick one with /model)."
    )
