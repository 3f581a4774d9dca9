"""Base class for tool parameter models: a compact JSON schema like Pi's TypeBox schemas."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["ToolParams", "clean_schema"]


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**_inline(target, defs), **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "$defs"):
            continue
        out[key] = _inline(value, defs) if key not in ("properties",) else {
            name: _inline(sub, defs) for name, sub in value.items()
        }
    any_of = out.get("anyOf")
    if isinstance(any_of, list):
        non_null = [s for s in any_of if s != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(any_of):
            del out["anyOf"]
            out = {**non_null[0], **out}
            if out.get("default", 0) is None:
                del out["default"]
    return out


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline ``$defs``, drop titles and turn ``anyOf [X, null]`` into ``X`` (optional fields)."""
    inlined: dict[str, Any] = _inline(schema, schema.get("$defs", {}))
    return inlined


class ToolParams(BaseModel):
    """Parameters of a coding tool; the JSON schema uses Pi's camelCase names."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return clean_schema(super().model_json_schema(*args, **kwargs))
