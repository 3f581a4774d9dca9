"""Checking a model's arguments against an MCP tool's whole input schema before the call (docs/mcp.md#tools).

``check_arguments(schema, arguments)`` first mends what models commonly get loosely typed, then
validates with ``jsonschema`` (the dialect the schema's ``$schema`` names, else 2020-12):

- a ``null`` in an optional property whose schema does not allow null is dropped (as if omitted);
- a string holding a number becomes the ``integer``/``number`` asked for, ``"true"``/``"false"`` a
  ``boolean``, a number or boolean becomes a ``string``;
- a string holding JSON becomes the ``array`` or ``object`` asked for; a single value where an
  ``array`` is asked for becomes a one-item array.

Mending walks ``properties``, ``additionalProperties`` and ``items``; what cannot be mended is
left as it is, and the check then reports it. A schema ``jsonschema`` cannot use (an unresolvable
``$ref``, an invalid keyword) is not checked here: the server answers. Every problem is one line of the error the model
gets, so it can correct the call; the server is not called.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["check_arguments"]

_INT = re.compile(r"^\s*-?\d+\s*$")
_NUMBER = re.compile(r"^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return []


def _matches(value: Any, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return False


def _convert(value: Any, kind: str) -> Any:
    """``value`` as ``kind``, or ``None`` (with the flag False) when it does not convert."""
    if isinstance(value, str):
        if kind == "integer" and _INT.match(value):
            return int(value)
        if kind == "number" and _NUMBER.match(value):
            number = float(value)
            return int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
        if kind == "boolean" and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        if kind in ("array", "object") and value.strip()[:1] in ("[", "{"):
            try:
                parsed = json.loads(value)
            except ValueError:
                return _NO
            return parsed if _matches(parsed, kind) else _NO
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if kind == "string" and isinstance(value, bool):
        return "true" if value else "false"
    if kind == "array" and not isinstance(value, list) and value is not None:
        return [value]
    return _NO


_NO: Any = object()


def _mend(value: Any, schema: Any) -> Any:
    if not isinstance(schema, dict):
        return value
    kinds = _types(schema)
    if kinds and not any(_matches(value, k) for k in kinds):
        for kind in kinds:
            converted = _convert(value, kind)
            if converted is not _NO:
                value = converted
                break
    if isinstance(value, dict):
        found = schema.get("properties")
        props: dict[str, Any] = found if isinstance(found, dict) else {}
        required = set(schema.get("required") or [])
        extra = schema.get("additionalProperties")
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = props.get(key, extra if isinstance(extra, dict) else None)
            if item is None and key not in required and isinstance(sub, dict) and _types(sub) and "null" not in _types(sub):
                continue  # an optional property given as null: as if omitted
            out[key] = _mend(item, sub)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_mend(item, schema["items"]) for item in value]
    return value


def check_arguments(schema: dict[str, Any], arguments: Any) -> tuple[Any, list[str]]:
    """``(mended arguments, problems)``; no problems means the arguments satisfy ``schema``."""
    import jsonschema

    mended = _mend(arguments, schema)
    try:
        validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        errors = sorted(validator_class(schema).iter_errors(mended), key=lambda e: [str(p) for p in e.absolute_path])
    except Exception:  # noqa: BLE001 - a schema jsonschema cannot use (bad $ref, ...): the server checks
        return mended, []
    problems: list[str] = []
    for error in errors[:10]:
        where = "/".join(str(p) for p in error.absolute_path)
        problems.append(f"{where}: {error.message}" if where else str(error.message))
    if len(errors) > 10:
        problems.append(f"... and {len(errors) - 10} more")
    return mended, problems
