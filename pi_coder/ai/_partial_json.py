"""Best-effort parsing of tool-call argument JSON while it streams.

``parse_streaming_json`` is called on every ``toolcall_delta`` with the whole accumulated text,
so the common path stays in jiter (Rust); the Python fix-ups below run only when a strict or
partial parse fails or when the text ends in the middle of a literal or a number.
"""

from __future__ import annotations

import json
import re

import jiter

from pi_coder.json_types import JsonObject

__all__ = ["parse_final_json", "parse_streaming_json"]

# A JSON string literal, possibly unterminated. Outside string literals a JSON document has no
# double quotes, so scanning for the next quote tokenises strings correctly.
_STRING = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)("?)', re.DOTALL)
_CONTROL = re.compile(r"[\x00-\x1f]")
_SHORT_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Only the end of the text matters for completing a truncated literal or number.
_TAIL_WINDOW = 80

_TAIL_LITERAL = re.compile(r"(?<=[:\[,])(\s*)(t|tr|tru|f|fa|fal|fals|n|nu|nul)$")
_TAIL_NUMBER = re.compile(r"(?<=[:\[,])(\s*-?\d+(?:\.\d*)?(?:[eE][+-]?\d*)?)$")
_LITERALS = {"t": "true", "f": "false", "n": "null"}
_KINDS: dict[type, str] = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
_KINDS[type(None)] = "null"


def parse_streaming_json(s: str) -> JsonObject:
    """Parse possibly incomplete JSON object text into a dict; never raises.

    Steps: empty or whitespace-only text gives ``{}``; then a strict parse; then a partial parse
    that accepts a truncated document (open strings, arrays, objects, trailing partial numbers
    and ``true``/``false``/``null`` prefixes); if the text has raw control characters inside
    string literals, they are escaped and both parses are retried. Anything else gives ``{}``.

    Tool arguments are always objects, so a document whose top level is not an object (an
    array, a string, a number) also gives ``{}``.

    Args:
        s: The accumulated JSON text.

    Returns:
        The best-effort parsed object.
    """
    try:
        return _parse(s)
    except Exception:  # the contract is "never raises": any surprise means "no arguments yet"
        return {}


def parse_final_json(s: str) -> tuple[JsonObject, str | None]:
    """The arguments of a finished tool call, and why they are invalid (None when they are valid).

    Valid means the whole text is one JSON object (raw control characters inside strings are
    tolerated, as local servers send them). Anything else, typically a document cut off in
    the middle, is invalid: the best-effort parse is still returned so it can be shown, but a
    call with an error must not be executed (its arguments may be truncated).

    Args:
        s: The complete argument text the provider sent.

    Returns:
        ``(arguments, error)``; ``error`` is a phrase such as ``the arguments are not valid
        JSON (Unterminated string starting at: line 1 column 30 (char 29))``.
    """
    if not s or s.isspace():
        return {}, None
    for text in (s, _escape_control_chars(s)):
        try:
            value = jiter.from_json(text.encode("utf-8", "surrogatepass"), partial_mode="off")
        except ValueError:
            continue
        if isinstance(value, dict):
            return value, None
        return {}, f"the arguments are {_KINDS.get(type(value), 'a JSON value')}, not a JSON object"
    try:
        json.loads(s)
        reason = ""
    except ValueError as exc:
        reason = f" ({exc})"
    return parse_streaming_json(s), f"the arguments are not valid JSON{reason}"


def _parse(s: str) -> JsonObject:
    if not s or s.isspace():
        return {}
    data = s.encode("utf-8", "surrogatepass")
    try:
        return _as_object(jiter.from_json(data, partial_mode="off"))
    except ValueError:
        pass
    result = _parse_partial(s)
    if result is not None:
        return result
    escaped = _escape_control_chars(s)
    if escaped != s:
        try:
            return _as_object(jiter.from_json(escaped.encode("utf-8", "surrogatepass"), partial_mode="off"))
        except ValueError:
            pass
        result = _parse_partial(escaped)
        if result is not None:
            return result
    return {}


def _as_object(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _parse_partial(s: str) -> JsonObject | None:
    text = _complete_tail(s.rstrip())
    try:
        value = jiter.from_json(text.encode("utf-8", "surrogatepass"), partial_mode="trailing-strings")
    except ValueError:
        return None
    return _as_object(value)


def _ends_inside_string(s: str) -> bool:
    last = None
    for match in _STRING.finditer(s):
        last = match
    return last is not None and last.end() == len(s) and not last.group(2)


def _complete_tail(s: str) -> str:
    """Finish a trailing partial literal (``tr`` -> ``true``) or number (``1.`` -> ``1``)."""
    if not s or s[-1] not in "truefalsn.eE+-":
        return s
    offset = max(0, len(s) - _TAIL_WINDOW)
    tail = s[offset:]
    literal = _TAIL_LITERAL.search(tail)
    if literal is not None and not _ends_inside_string(s):
        return s[: offset + literal.start(2)] + _LITERALS[literal.group(2)[0]]
    number = _TAIL_NUMBER.search(tail)
    if number is not None and s[-1] in ".eE+-" and not _ends_inside_string(s):
        return s.rstrip(".eE+-")
    return s


def _escape_control_chars(s: str) -> str:
    """Escape raw control characters that appear inside string literals."""

    def escape_string(match: re.Match[str]) -> str:
        literal = match.group(0)
        if _CONTROL.search(literal) is None:
            return literal
        for raw, escaped in _SHORT_ESCAPES.items():  # str.replace is far faster than a per-char callback
            literal = literal.replace(raw, escaped)
        return _CONTROL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", literal)

    return _STRING.sub(escape_string, s)
