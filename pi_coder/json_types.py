"""Types of decoded JSON: what ``json.loads`` returns, before a boundary parses it into objects.

A leaf module every layer may use (like ``paths`` and ``errors``). Parse a value into a model
or dataclass where it enters (docs/architecture.md#types); these aliases type what is passed on
unparsed (an extension's ``details``, a tool's arguments, a header's extra keys).
"""

from __future__ import annotations

from typing import Protocol, TypeAlias, TypeGuard, runtime_checkable

__all__ = ["JsonDumpable", "JsonObject", "JsonValue", "is_json", "to_json_value"]

JsonValue: TypeAlias = "None | bool | int | float | str | list[JsonValue] | dict[str, JsonValue]"
"""Any decoded JSON value."""

JsonObject: TypeAlias = dict[str, JsonValue]
"""A decoded JSON object."""


@runtime_checkable
class JsonDumpable(Protocol):
    """An object that knows its JSON form (the wire models, session entries, results)."""

    def to_json_dict(self) -> JsonObject: ...


def is_json(value: object) -> TypeGuard[JsonValue]:
    """Whether ``value`` is plain JSON data (checked recursively)."""
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list):
        return all(is_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and is_json(item) for key, item in value.items())
    return False


def to_json_value(value: object) -> JsonValue:
    """``value`` as JSON data: itself when it already is (checked, not copied), else its JSON form
    (an object with ``to_json_dict()``, a pydantic model, a tuple), as it would be written.

    Raises:
        TypeError: ``value`` holds something JSON cannot represent.
    """
    if is_json(value):
        return value
    import json

    from pydantic import BaseModel

    def default(item: object) -> object:
        if isinstance(item, JsonDumpable):  # our models and entries
            return item.to_json_dict()
        if isinstance(item, BaseModel):
            return item.model_dump(mode="json", by_alias=True, exclude_none=True)
        raise TypeError(f"cannot serialise {type(item).__name__} to JSON")

    decoded: JsonValue = json.loads(json.dumps(value, default=default))
    return decoded
