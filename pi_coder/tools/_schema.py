"""Base class for tool parameter models: a compact JSON schema like Pi's TypeBox schemas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["ToolParams", "clean_schema"]


def _inline(node: object, defs: Mapping[str, object]) -> object:
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = _inline(defs[ref.rsplit("/", 1)[-1]], defs)
        assert isinstance(target, dict)
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, defs)
    out: dict[str, object] = {}
    for key, value in node.items():
        if key in ("title", "$defs"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _inline(sub, defs) for name, sub in value.items()}
        else:
            out[key] = _inline(value, defs)
    any_of = out.get("anyOf")
    if isinstance(any_of, list):
        non_null = [s for s in any_of if s != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(any_of):
            del out["anyOf"]
            only = non_null[0]
            out = {**only, **out} if isinstance(only, dict) else out
            if out.get("default", 0) is None:
                del out["default"]
    return out


def clean_schema(schema: dict[str, object]) -> dict[str, object]:
    """Inline ``$defs``, drop titles and turn ``anyOf [X, null]`` into ``X`` (optional fields)."""
    defs = schema.get("$defs")
    inlined = _inline(schema, defs if isinstance(defs, dict) else {})
    assert isinstance(inlined, dict)
    return inlined


class ToolParams(BaseModel):
    """Parameters of a coding tool; the JSON schema uses Pi's camelCase names."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    @classmethod
    # pydantic's own signature (its parameters differ across the supported versions).
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[explicit-any]
        return clean_schema(super().model_json_schema(*args, **kwargs))
