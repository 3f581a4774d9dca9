"""Types of decoded JSON: what ``json.loads`` returns, before a boundary parses it into objects.

A leaf module every layer may use (like ``paths`` and ``errors``). Parse a value into a model
or dataclass where it enters (docs/architecture.md#types); these aliases type what is passed on
unparsed (an extension's ``details``, a tool's arguments, a header's extra keys).
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["JsonObject", "JsonValue"]

JsonValue: TypeAlias = "None | bool | int | float | str | list[JsonValue] | dict[str, JsonValue]"
"""Any decoded JSON value."""

JsonObject: TypeAlias = dict[str, JsonValue]
"""A decoded JSON object."""
