"""The few extension types needed whenever an extension is loaded (cheap to import, docs/extensions-runtime.md#start-up-cost)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

from pi_coder.core.events import ExtensionErrorEvent, to_camel_json

__all__ = ["ExtensionErrorEvent", "JsonPayload", "coerce_result"]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class JsonPayload:
    __slots__ = ()

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None or f.name in ("signal", "stack"):
                continue
            out[_camel(f.name)] = to_camel_json(value)
        return out


R = TypeVar("R")


def coerce_result(value: object, cls: type[R]) -> R | None:
    """A handler's return value as ``cls``: None, an instance, or a dict of its snake_case fields.

    Raises:
        TypeError: Anything else (reported as a handler error).
    """
    if value is None:
        return None
    if isinstance(value, cls):
        return value
    if isinstance(value, dict):
        return cls(**value)
    raise TypeError(f"handler returned {type(value).__name__}, expected None, a dict or {cls.__name__}")

