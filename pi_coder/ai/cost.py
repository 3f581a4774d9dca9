"""Pricing a response: ``calculate_cost`` fills a usage's cost from the model's price table."""

from __future__ import annotations

from pi_coder.ai.types import Cost, Model, Usage

__all__ = ["calculate_cost"]


def calculate_cost(model: Model, usage: Usage) -> Cost:
    """Fill ``usage.cost`` in place from the model's prices (USD per million tokens).

    Args:
        model: The model whose ``cost`` table prices the tokens.
        usage: Token counts; its ``cost`` is overwritten.

    Returns:
        ``usage.cost``, for convenience.
    """
    prices = model.cost
    cost = usage.cost
    cost.input = prices.input / 1e6 * usage.input
    cost.output = prices.output / 1e6 * usage.output
    cost.cache_read = prices.cache_read / 1e6 * usage.cache_read
    cost.cache_write = prices.cache_write / 1e6 * usage.cache_write
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return cost
