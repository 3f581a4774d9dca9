"""The edit tool on real files: texts, details, byte preservation, all-or-nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.errors import ToolError
from pi_coder.tools import prepare_edit_arguments

from .conftest import ToolRunner, text_of


async def test_legacy_arguments_are_folded_in(run: ToolRunner, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 1\n")
    result = await run("edit", path="f.py", oldText="x = 1", newText="x = 2")
    assert text_of(result) == "Successfully replaced text in f.py."
    assert (tmp_path / "f.py").read_text() == "x = 2\n"


def test_prepare_arguments_shapes() -> None:
    raw = {"path": "a", "oldText": "x", "newText": "y"}
    assert prepare_edit_arguments(raw) == {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}
    assert raw == {"path": "a", "oldText": "x", "newText": "y"}  # not mutated
    stringified = {"path": "a", "edits": '[{"oldText": "p", "newText": "q"}]'}
    assert prepare_edit_arguments(stringified)["edits"] == [{"oldText": "p", "newText": "q"}]
    plain = {"path": "a", "edits": [{"oldText": "p", "newText": "q"}]}
    assert prepare_edit_arguments(plain) is plain


async def test_multiple_edits_and_details(run: ToolRunner, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = await run(
        "edit", path="f.py", edits=[{"oldText": "a = 1", "newText": "a = 10"}, {"oldText": "c = 3", "newText": "c = 30"}]
    )
    assert text_of(result) == "Successfully replaced 2 blocks in f.py."
    assert (tmp_path / "f.py").read_text() == "a = 10\nb = 2\nc = 30\n"
    details = result.details
    assert details["firstChangedLine"] == 1
    assert details["diff"].split("\n") == ["-1 a = 1", "+1 a = 10", " 2 b = 2", "-3 c = 3", "+3 c = 30", " 4 "]
    assert details["patch"].startswith("--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,3 @@\n-a = 1\n+a = 10\n")
    assert details["matchTiers"] == ["exact", "exact"]


async def test_fuzzy_match_is_reported(run: ToolRunner, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("def f():\n\treturn 1\n")
    result = await run("edit", path="f.py", edits=[{"oldText": "    return 1", "newText": "    return 2"}])
    assert "matched ignoring indentation" in text_of(result)
    assert (tmp_path / "f.py").read_text() == "def f():\n\treturn 2\n"


async def test_bytes_outside_region_are_preserved(run: ToolRunner, tmp_path: Path) -> None:
    """BOM, CRLF, invalid UTF-8 and trailing spaces elsewhere stay byte for byte."""
    original = b"\xef\xbb\xbfline one  \r\nbad \xff\xfe byte\r\ntarget = 1\r\nlast\xe9\r\n"
    (tmp_path / "f.txt").write_bytes(original)
    await run("edit", path="f.txt", edits=[{"oldText": "target = 1\n", "newText": "target = 2\nadded\n"}])
    assert (tmp_path / "f.txt").read_bytes() == original.replace(b"target = 1\r\n", b"target = 2\r\nadded\r\n")


async def test_failed_batch_changes_nothing(run: ToolRunner, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    with pytest.raises(ToolError, match=r"Could not find edits\[1\] in f\.txt"):
        await run("edit", path="f.txt", edits=[{"oldText": "one", "newText": "1"}, {"oldText": "zzz", "newText": "3"}])
    assert (tmp_path / "f.txt").read_text() == "one\ntwo\n"


async def test_missing_and_binary_files(run: ToolRunner, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"^File not found: nope\.py$"):
        await run("edit", path="nope.py", oldText="a", newText="b")
    (tmp_path / "b.bin").write_bytes(b"a\x00b")
    with pytest.raises(ToolError, match="Cannot edit binary file"):
        await run("edit", path="b.bin", oldText="a", newText="b")


async def test_ambiguous_edit_reports_lines(run: ToolRunner, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\nx\n")
    with pytest.raises(ToolError) as info:
        await run("edit", path="f.txt", oldText="x", newText="y")
    assert str(info.value).startswith("Found 2 occurrences of the text in f.txt. The text must be unique.")
    assert "lines 1, 2" in str(info.value)


def test_edit_schema_is_pi_shaped(run: ToolRunner) -> None:
    schema = run.tools["edit"].json_schema()
    assert schema["required"] == ["path", "edits"]
    item = schema["properties"]["edits"]["items"]
    assert set(item["properties"]) == {"oldText", "newText"}
    assert item["required"] == ["oldText", "newText"]
    assert "$defs" not in schema and "title" not in schema
