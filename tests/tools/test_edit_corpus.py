"""Edit matching corpus: each case states the expected file text (and tier) or the error."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_coder.tools import EditError, compute_edit_preview
from pi_coder.tools._edits import apply_edits


@dataclass(frozen=True)
class Case:
    name: str
    original: str
    edits: list[tuple[str, str]]
    expected: str | None = None
    tiers: tuple[str, ...] | None = None
    error: str | None = None
    """A substring the error message must contain (the case must fail)."""


PY = "def f(x):\n    if x:\n        return 1\n    return 2\n"
TABS = "def f(x):\n\tif x:\n\t\treturn 1\n\treturn 2\n"

CASES = [
    # ------------------------------------------------------------------ exact
    Case("exact single line", "a = 1\nb = 2\n", [("b = 2", "b = 3")], "a = 1\nb = 3\n", ("exact",)),
    Case("exact multi line", PY, [("    if x:\n        return 1\n", "    if not x:\n        return 0\n")],
         "def f(x):\n    if not x:\n        return 0\n    return 2\n", ("exact",)),
    Case("exact at file start", "first\nsecond\n", [("first", "FIRST")], "FIRST\nsecond\n", ("exact",)),
    Case("exact at end without newline", "x\nlast", [("last", "LAST")], "x\nLAST", ("exact",)),
    Case("exact deletion of lines", "a\nb\nc\n", [("b\n", "")], "a\nc\n", ("exact",)),
    Case("exact insertion after anchor", "a\nc\n", [("a\n", "a\nb\n")], "a\nb\nc\n", ("exact",)),
    Case("two disjoint edits", "one\ntwo\nthree\n", [("one", "1"), ("three", "3")], "1\ntwo\n3\n", ("exact", "exact")),
    Case("edits given out of file order", "one\ntwo\nthree\n", [("three", "3"), ("one", "1")], "1\ntwo\n3\n"),
    Case("unicode content exact", "名前 = '🙂'\nx\n", [("'🙂'", "'😀'")], "名前 = '😀'\nx\n", ("exact",)),
    Case("regex metacharacters are literal", "a.*b(c)\nabc\n", [("a.*b(c)", "z")], "z\nabc\n", ("exact",)),
    Case("adjacent but not overlapping edits", "abcdef", [("abc", "X"), ("def", "Y")], "XY"),
    # ------------------------------------------------------------------ trailing whitespace
    Case("file has trailing spaces", "keep  \nvalue = 1   \nnext\n", [("value = 1\nnext", "value = 2\nnext")],
         "keep  \nvalue = 2\nnext\n", ("trailing_whitespace",)),
    Case("oldText has trailing spaces", "a = 1\nb = 2\n", [("a = 1  \nb = 2", "a = 9\nb = 2")],
         "a = 9\nb = 2\n", ("trailing_whitespace",)),
    Case("trailing tabs in file", "x = 1\t\t\ny = 2\n", [("x = 1\ny = 2", "x = 3\ny = 2")], "x = 3\ny = 2\n"),
    Case("trailing ws elsewhere untouched", "a  \nb \nc   \n", [("b\nc", "B\nC")], "a  \nB\nC\n"),
    Case("trailing tier keeps text after a mid-line match", "start x   \nend\n", [("x\nend", "y\nEND")],
         "start y\nEND\n", ("trailing_whitespace",)),
    # ------------------------------------------------------------------ indentation
    Case("tabs in file, spaces in oldText", TABS, [("if x:\n    return 1", "if x:\n    return 10")],
         "def f(x):\n\tif x:\n\t\treturn 10\n\treturn 2\n", ("indentation",)),
    Case("spaces in file, tabs in oldText", PY, [("\tif x:\n\t\treturn 1\n", "\tif x:\n\t\tprint(x)\n\t\treturn 1\n")],
         "def f(x):\n    if x:\n        print(x)\n        return 1\n    return 2\n", ("indentation",)),
    Case("oldText dedented entirely", "class A:\n    def m(self):\n        return 1\n",
         [("def m(self):\n    return 1", "def m(self):\n    x = 1\n    return x")],
         "class A:\n    def m(self):\n        x = 1\n        return x\n", ("indentation",)),
    Case("deeper new line gets file's unit", "class A:\n  def m(self):\n    pass\n",
         [("def m(self):\n  pass", "def m(self):\n  if True:\n    pass")],
         "class A:\n  def m(self):\n    if True:\n      pass\n", ("indentation",)),
    Case("2-space file, 4-space oldText", "a:\n  b:\n    c: 1\n", [("a:\n    b:\n        c: 1", "a:\n    b:\n        c: 2")],
         "a:\n  b:\n    c: 2\n", ("indentation",)),
    Case("dedent in replacement", "if a:\n    if b:\n        x()\n",
         [("if b:\n    x()", "if b:\n    x()\ny()")], "if a:\n    if b:\n        x()\n    y()\n", ("indentation",)),
    Case("blank lines in replacement carry no indentation", "def f():\n    a()\n    b()\n",
         [("a()\nb()", "a()\n\nb()")], "def f():\n    a()\n\n    b()\n", ("indentation",)),
    Case("indentation tier deletes whole lines", "def f():\n    a()\n    b()\n    c()\n", [("b()\nc()\n", "")],
         "def f():\n    a()\n", ("indentation",)),
    Case("exact may start mid-line", "def f():\n    b()\n", [("b()", "c()")], "def f():\n    c()\n", ("exact",)),
    Case("inconsistent structure is not an indentation match", "x:\ny:\nz\n", [("x:\n    y:\n        z", "q")],
         error="Could not find the exact text"),
    Case("different nesting is not an indentation match", "if a:\n    b()\nc()\n",
         [("if a:\n    b()\n    c()", "z")], error="Could not find the exact text"),
    # ------------------------------------------------------------------ CRLF
    Case("CRLF file, LF oldText", "a\r\nb\r\nc\r\n", [("b", "B")], "a\r\nB\r\nc\r\n", ("exact",)),
    Case("CRLF file, multi-line replacement", "a\r\nb\r\nc\r\n", [("a\nb\n", "x\ny\nz\n")], "x\r\ny\r\nz\r\nc\r\n"),
    Case("CRLF oldText against LF file", "a\nb\nc\n", [("a\r\nb", "A\r\nB")], "A\nB\nc\n"),
    Case("mixed endings: only the region changes", "a\r\nb\nc\r\nd\n", [("b", "B")], "a\r\nB\nc\r\nd\n"),
    Case("CRLF with trailing spaces", "a  \r\nb\r\n", [("a\nb", "x\ny")], "x\r\ny\r\n", ("trailing_whitespace",)),
    # ------------------------------------------------------------------ BOM
    Case("BOM kept", "\ufeffhello\nworld\n", [("world", "there")], "\ufeffhello\nthere\n", ("exact",)),
    Case("BOM and CRLF kept", "\ufeffa\r\nb\r\n", [("a\nb", "c\nd")], "\ufeffc\r\nd\r\n"),
    Case("edit at very start after BOM", "\ufeffimport os\n", [("import os", "import sys")], "\ufeffimport sys\n"),
    # ------------------------------------------------------------------ Unicode normalisation
    Case("smart double quotes in file", "msg = “hello”\nend\n", [('msg = "hello"', 'msg = "bye"')],
         'msg = "bye"\nend\n', ("unicode",)),
    Case("curly apostrophe in file", "it’s fine\n", [("it's fine", "it is fine")], "it is fine\n", ("unicode",)),
    Case("smart quotes typed by the model", "say 'hi'\n", [("say ‘hi’", "say 'yo'")], "say 'yo'\n", ("unicode",)),
    Case("em dash vs hyphen", "a — b\nc\n", [("a - b", "a + b")], "a + b\nc\n", ("unicode",)),
    Case("NBSP in file", "x\u00a0= 1\n", [("x = 1", "x = 2")], "x = 2\n", ("unicode",)),
    Case("ligature expands under NFKC", "de\ufb01ne x\nok\n", [("define x", "declare x")], "declare x\nok\n"),
    Case("fullwidth letters", "ＡＢＣ = 1\n", [("ABC = 1", "ABC = 2")], "ABC = 2\n", ("unicode",)),
    Case("decomposed vs composed accent", "cafe\u0301 = 1\n", [("café = 1", "café = 2")], "café = 2\n"),
    Case("smart quotes outside the region stay", "“a”\nb = ‘x’\n“c”\n", [("b = 'x'", "b = 'y'")],
         "“a”\nb = 'y'\n“c”\n", ("unicode",)),
    # ------------------------------------------------------------------ ambiguity: never a wrong match
    Case("exact duplicate", "x = 1\ny\nx = 1\n", [("x = 1", "x = 2")], error="Found 2 occurrences"),
    Case("duplicate reports lines", "a\nfoo\nb\nfoo\nc\nfoo\n", [("foo", "bar")], error="lines 2, 4, 6"),
    Case("overlapping occurrences", "aaa", [("aa", "b")], error="Found 2 occurrences"),
    Case("duplicate only under trailing ws", "a  \nb\na \nb\n", [("a\nb", "z")], error="Found 2 occurrences"),
    Case("duplicate only under indentation", "if a:\n    x()\nif b:\n        x()\n", [("  x()", "y()")],
         error="Found 2 occurrences"),
    Case("exact match wins over a unicode look-alike", "x = ‘a’\ny = 'a'\n", [("'a'", "'b'")], "x = ‘a’\ny = 'b'\n",
         ("exact",)),
    Case("duplicate smart-quote lines", "s = “q”\nt\ns = “q”\n", [('s = "q"', "s = 1")], error="Found 2 occurrences"),
    Case("exact unique beats looser duplicates", "foo()  \nfoo()\n", [("foo()\n", "bar()\n")], "foo()  \nbar()\n",
         ("exact",)),
    Case("more context makes it unique", "x = 1\ny\nx = 1\nz\n", [("x = 1\nz", "x = 2\nz")], "x = 1\ny\nx = 2\nz\n"),
    Case("repeated block, one with extra line", "def a():\n    pass\n\ndef a():\n    pass\n    return\n",
         [("def a():\n    pass\n    return", "def b():\n    pass")], "def a():\n    pass\n\ndef b():\n    pass\n"),
    # ------------------------------------------------------------------ batch errors
    Case("overlapping edits", "abcdef\n", [("abcd", "x"), ("cdef", "y")], error="edits[0] and edits[1] overlap"),
    Case("same region twice", "abc\n", [("abc", "x"), ("abc", "y")], error="overlap"),
    Case("second edit missing fails the batch", "one\ntwo\n", [("one", "1"), ("three", "3")],
         error="Could not find edits[1]"),
    Case("no change", "same\n", [("same", "same")], error="No changes made to"),
    Case("empty oldText", "abc\n", [("", "x")], error="oldText must not be empty"),
    Case("not found shows closest candidate", "def f():\n    return x\n", [("def f():\n    return y", "z")],
         error="First difference at line 2, column 12"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_edit_corpus(case: Case) -> None:
    """Each case yields exactly the expected text (and tiers), or fails with the expected error."""
    if case.error is not None:
        with pytest.raises(EditError) as info:
            apply_edits(case.original, case.edits, "f.py")
        assert case.error in str(info.value)
        return
    preview = apply_edits(case.original, case.edits, "f.py")
    assert preview.new_content == case.expected
    if case.tiers is not None:
        assert tuple(preview.tiers) == case.tiers


def test_corpus_size() -> None:
    assert len(CASES) >= 40
    assert sum(1 for c in CASES if c.error and "occurrences" in c.error) >= 5


def test_error_texts_keep_pi_wording() -> None:
    """Single-edit errors start with Pi's exact sentences."""
    with pytest.raises(EditError, match=r"^Could not find the exact text in f\.py\. The old text must match exactly"):
        apply_edits("abc\n", [("xyz", "1")], "f.py")
    with pytest.raises(EditError, match=r"^Found 2 occurrences of the text in f\.py\. The text must be unique\. Please"):
        apply_edits("a\na\n", [("a", "b")], "f.py")
    with pytest.raises(EditError) as info:
        apply_edits("a\n", [("a", "a")], "f.py")
    assert str(info.value) == (
        "No changes made to f.py. The replacement produced identical content. This might indicate an issue "
        "with special characters or the text not existing as expected."
    )


def test_not_found_names_candidate_region() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 30)) + "def handler(event):\n    return event.id\n"
    with pytest.raises(EditError) as info:
        apply_edits(text, [("def handler(evt):\n    return evt.id", "x")], "h.py")
    message = str(info.value)
    assert "Closest match in the file (lines 30-31)" in message
    assert "First difference at line 30, column 15" in message
    assert "'def handler(evt):'" in message and "'def handler(event):'" in message


def test_preview_diff_and_first_changed_line() -> None:
    original = "".join(f"l{i}\n" for i in range(1, 21))
    preview = compute_edit_preview(original, [{"oldText": "l10", "newText": "L10"}])
    assert preview.first_changed_line == 10
    lines = preview.diff.split("\n")
    assert "-10 l10" in lines and "+10 L10" in lines
    assert "  6 l6" in lines and " 14 l14" in lines and "  5 l5" not in lines
    assert lines[0] == "    ..." and lines[-1] == "    ..."
    assert preview.patch.startswith("--- a/file\n+++ b/file\n@@ -7,7 +7,7 @@\n")
    assert original == "".join(f"l{i}\n" for i in range(1, 21))  # pure


_line = st.text(alphabet="ab \t", max_size=6)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_line, min_size=3, max_size=12), target=st.integers(min_value=0, max_value=11))
def test_only_the_matched_region_changes(lines: list[str], target: int) -> None:
    """Whatever tier matches, text outside the matched lines stays byte for byte."""
    target %= len(lines)
    marker = "UNIQUE_MARKER  "
    lines = [*lines]
    lines[target] = marker
    original = "\n".join(lines) + "\n"
    preview = apply_edits(original, [("UNIQUE_MARKER", "REPLACED")], "f")
    new_lines = preview.new_content.split("\n")
    old_lines = original.split("\n")
    assert len(new_lines) == len(old_lines)
    for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)):
        if i != target:
            assert a == b
    assert new_lines[target].startswith("REPLACED")


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet="ab\n ", max_size=40), needle=st.text(alphabet="ab\n ", min_size=1, max_size=4))
def test_never_picks_one_of_several_exact_matches(text: str, needle: str) -> None:
    """When the text occurs more than once the edit fails; when once, it equals str.replace."""
    count = sum(1 for i in range(len(text)) if text.startswith(needle, i))
    if count >= 2:
        with pytest.raises(EditError):
            apply_edits(text, [(needle, "Z")], "f")
    elif count == 1:
        assert apply_edits(text, [(needle, "Z")], "f").new_content == text.replace(needle, "Z")


_lines = st.lists(st.sampled_from(["a", "b", "c", "", "dd"]), min_size=1, max_size=15)


@settings(max_examples=200, deadline=None)
@given(lines=_lines, trailing=st.booleans(), edits=st.lists(st.tuples(st.integers(0, 14), _lines), max_size=3))
def test_region_diff_equals_whole_file_diff(lines: list[str], trailing: bool, edits: list) -> None:
    """The patch built from edit regions applies like a whole-file unified diff."""
    from pi_coder.tools._diff import display_diff, unified_patch

    tagged = [f"{line}{i}" for i, line in enumerate(lines)]  # unique lines: every edit matches once
    original = "\n".join(tagged) + ("\n" if trailing else "")
    specs, used = [], set()
    for index, replacement in edits:
        index %= len(tagged)
        if index in used:
            continue
        used.add(index)
        specs.append((tagged[index] + ("\n" if index < len(tagged) - 1 else ""), "\n".join(replacement) + "\n"))
    if not specs:
        return
    try:
        preview = apply_edits(original, specs, "f")
    except EditError:
        return
    assert _apply_patch(original, preview.patch) == preview.new_content
    diff, first = display_diff(original, preview.new_content)
    assert preview.first_changed_line == first
    assert unified_patch(original, preview.new_content, "f") and diff


def _apply_patch(text: str, patch: str) -> str:
    """Apply a unified diff (our own output) to ``text``: enough to check hunks and counts."""
    import re

    old = text.split("\n")
    old_lines = [line + "\n" for line in old[:-1]] + ([old[-1]] if old[-1] else [])
    out: list[str] = []
    pos = 0
    rows = patch.split("\n")
    i = 2
    while i < len(rows) and rows[i]:
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", rows[i])
        assert m, rows[i]
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        out.extend(old_lines[pos:start])
        pos = start
        i += 1
        while i < len(rows) and rows[i] and not rows[i].startswith("@@"):
            tag, body = rows[i][0], rows[i][1:]
            no_newline = i + 1 < len(rows) and rows[i + 1] == "\\ No newline at end of file"
            line = body if no_newline else body + "\n"
            if tag in " -":
                assert old_lines[pos] == line, (old_lines[pos], line)
                pos += 1
            if tag in " +":
                out.append(line)
            i += 2 if no_newline else 1
    out.extend(old_lines[pos:])
    return "".join(out)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab\n", max_size=30),
    anchors=st.lists(st.integers(0, 40), max_size=3),
    order=st.lists(st.integers(0, 40), max_size=12),
)
def test_line_view_matches_split(text: str, anchors: list[int], order: list[int]) -> None:
    """Random access through LineView (any anchors, any order) equals text.split('\\n')."""
    from pi_coder.tools._diff import LineView

    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    view = LineView(text, [(i, starts[i]) for i in anchors if i < len(lines)])
    assert len(view) == len(lines)
    for i in order:
        if i < len(lines):
            assert view[i] == lines[i]
            assert view[i : i + 3] == lines[i : i + 3]
