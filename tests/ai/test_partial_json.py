"""parse_streaming_json: best-effort arguments from partial tool-call JSON (spec 2.4, C96)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_coder.ai._partial_json import parse_streaming_json

DOCUMENTS: list[Any] = [
    {"path": "src/main.py"},
    {"path": "a.txt", "offset": 10, "limit": -2.5e3, "all": True, "none": None, "no": False},
    {"command": "ls -la | grep \"x\"", "timeout": 30},
    {"edits": [{"old": "a\nb", "new": "c\td"}, {"old": "\u00e9\u4e2d", "new": "\\"}], "dry": False},
    {"nested": {"deep": {"list": [1, [2, [3, {}]], "s"]}}, "empty": [], "obj": {}},
    {"unicode": "emoji \U0001f600 and \u2028 separator", "quote": "she said \"hi\""},
]


def _is_prefix_value(partial: Any, full: Any) -> bool:
    """Whether ``partial`` could be what a prefix of ``full``'s JSON text parses to."""
    if isinstance(full, dict):
        if not isinstance(partial, dict) or list(partial) != list(full)[: len(partial)]:
            return False
        keys = list(partial)
        return all(
            partial[k] == full[k] if i < len(keys) - 1 else _is_prefix_value(partial[k], full[k])
            for i, k in enumerate(keys)
        )
    if isinstance(full, list):
        if not isinstance(partial, list) or len(partial) > len(full):
            return False
        return all(
            partial[i] == full[i] if i < len(partial) - 1 else _is_prefix_value(partial[i], full[i])
            for i in range(len(partial))
        )
    if isinstance(full, str):
        return isinstance(partial, str) and full.startswith(partial)
    if isinstance(full, bool) or full is None:
        return partial == full
    if isinstance(full, int | float):
        return isinstance(partial, int | float) and not isinstance(partial, bool)
    return False


@pytest.mark.parametrize("doc", DOCUMENTS)
@pytest.mark.parametrize("indent", [None, 2])
def test_every_cut_point_parses_to_a_prefix_of_the_document(doc: dict[str, Any], indent: int | None) -> None:
    """Every prefix of the JSON text gives a dict consistent with the full document, never raising."""
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    for cut in range(len(text) + 1):
        result = parse_streaming_json(text[:cut])
        assert isinstance(result, dict), (cut, text[:cut])
        assert _is_prefix_value(result, doc), (cut, text[:cut], result)
    assert parse_streaming_json(text) == doc


def test_every_cut_point_with_ascii_escapes() -> None:
    """Prefixes that end inside \\uXXXX or \\" escapes still parse to dicts."""
    doc = DOCUMENTS[3] | {"more": "x\"y\\z\u00e9"}
    text = json.dumps(doc)  # ensure_ascii: \u escapes
    for cut in range(len(text) + 1):
        result = parse_streaming_json(text[:cut])
        assert _is_prefix_value(result, doc), (cut, text[:cut], result)


def test_c96_parse_streaming_json_examples() -> None:
    """C96: the spec's examples."""
    assert parse_streaming_json("") == {}
    assert parse_streaming_json("   ") == {}
    assert parse_streaming_json('{"path":"a"}') == {"path": "a"}
    assert parse_streaming_json('{"path": "src/ma') == {"path": "src/ma"}
    assert parse_streaming_json('{"t":"a\nb"}') == {"t": "a\nb"}
    assert parse_streaming_json("not json") == {}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"t":"a\tb\rc\bd\fe"}', {"t": "a\tb\rc\bd\fe"}),
        ('{"t":"nul\x00 and \x1f"}', {"t": "nul\x00 and \x1f"}),
        ('{"t":"line1\nline2', {"t": "line1\nline2"}),
        ('{\n  "a": "x\ny",\n  "b": 1\n}', {"a": "x\ny", "b": 1}),
        ('{"code": "if x:\n\treturn \\"q\\"\n"}', {"code": 'if x:\n\treturn "q"\n'}),
    ],
)
def test_raw_control_characters_inside_strings_are_escaped(raw: str, expected: dict[str, Any]) -> None:
    """Models sometimes emit literal newlines/tabs inside strings; they are kept as characters."""
    assert parse_streaming_json(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": tr', {"a": True}),
        ('{"a": [fa', {"a": [False]}),
        ('{"a": nu', {"a": None}),
        ('{"a": 1.', {"a": 1}),
        ('{"a": 12e', {"a": 12}),
        ('{"a": -', {}),
        ('{"a": "x:tr', {"a": "x:tr"}),
        ('{"a": 1, "b', {"a": 1}),
        ('{"a": 1, "b":', {"a": 1}),
    ],
)
def test_truncated_literals_numbers_and_keys(raw: str, expected: dict[str, Any]) -> None:
    """Truncated scalars complete or drop like npm partial-json; strings are not touched."""
    assert parse_streaming_json(raw) == expected


@pytest.mark.parametrize("raw", ["[1, 2]", '"just a string"', "42", "null", "}{", "\ud800", "{]", "\x00"])
def test_non_objects_and_garbage_give_empty_dict(raw: str) -> None:
    """Tool arguments are objects: anything else becomes {} and nothing raises."""
    assert parse_streaming_json(raw) == {}


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(doc=st.dictionaries(st.text(max_size=6), _json_values, max_size=5), ascii_only=st.booleans())
def test_random_documents_at_every_cut_point(doc: dict[str, Any], ascii_only: bool) -> None:
    """Property: every prefix of any object's JSON parses to a dict consistent with the object."""
    text = json.dumps(doc, ensure_ascii=ascii_only)
    for cut in range(len(text) + 1):
        result = parse_streaming_json(text[:cut])
        assert _is_prefix_value(result, doc), (cut, text[:cut], result)
    assert parse_streaming_json(text) == doc
