"""``pi --list-models [search]``: a table of the models that can be used (their provider has a key)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.ai.models import Models
    from pi_coder.ai.types import Model

__all__ = ["format_model_table", "format_price", "format_tokens", "list_models_text"]

_HEADERS = ("provider", "model", "context", "max-out", "thinking", "images", "input", "output", "cache-read")
"""Pi 1.6's columns, then prices in USD per million tokens."""


def format_price(usd_per_million: float) -> str:
    """``2.5`` -> ``$2.50``, ``0.075`` -> ``$0.075``, ``15`` -> ``$15``, ``0`` -> ``-``."""
    if not usd_per_million:
        return "-"
    if float(usd_per_million).is_integer():
        return f"${usd_per_million:g}"
    text = f"{usd_per_million:.4f}".rstrip("0")
    if len(text.split(".")[1]) < 2:
        text += "0"
    return "$" + text


def format_tokens(count: int) -> str:
    """``200000`` -> ``200K``, ``1000000`` -> ``1M``, ``131072`` -> ``131.1K``, ``512`` -> ``512``."""
    for size, suffix in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            text = f"{count / size:.1f}".removesuffix(".0")
            return text + suffix
    return str(count)


def format_model_table(models: list[Model]) -> str:
    """Aligned columns: provider, model, context, max-out, thinking, images, then the input, output
    and cache-read prices per million tokens (one line per model)."""
    rows = [_HEADERS] + [
        (
            m.provider,
            m.id,
            format_tokens(m.context_window),
            format_tokens(m.max_tokens),
            "yes" if m.reasoning else "no",
            "yes" if "image" in m.input else "no",
            format_price(m.cost.input),
            format_price(m.cost.output),
            format_price(m.cost.cache_read),
        )
        for m in models
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADERS))]
    return "\n".join("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows)


def list_models_text(models: Models, search: str | None) -> str:
    """The ``--list-models`` output: the table, or a line saying why there is none.

    Args:
        models: The collection; only models whose provider has a key are listed.
        search: Optional fuzzy filter (``Models.find_models`` rules).
    """
    if search:
        found = models.find_models(search, available_only=True)
        if not found:
            return f'No models match "{search}".'
    else:
        found = models.available_models()
        if not found:
            return "No models available: no provider has an API key. Run pi --help for how to configure one."
    return format_model_table(sorted(found, key=lambda m: (m.provider, m.id)))
