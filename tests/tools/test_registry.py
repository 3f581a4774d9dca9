"""Tool construction, schemas, prompt snippets, truncation helpers and module boundaries."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pi_coder.tools as tools
from pi_coder.tools import (
    ALL_TOOL_NAMES,
    DEFAULT_TOOL_NAMES,
    TOOL_PROMPT_SNIPPETS,
    create_coding_tools,
    create_tools,
    format_size,
    tool_prompt_guidelines,
    truncate_head,
    truncate_line,
    truncate_tail,
)
from pi_coder.tools._images import prepare_image

TOOLS_DIR = Path(tools.__file__).parent


def test_names_and_factories(tmp_path: Path) -> None:
    assert DEFAULT_TOOL_NAMES == ("read", "bash", "edit", "write")
    assert ALL_TOOL_NAMES == ("read", "bash", "edit", "write", "grep", "find", "ls")
    built = create_coding_tools(tmp_path)
    assert list(built) == list(ALL_TOOL_NAMES)
    assert all(tool.name == name == tool.label for name, tool in built.items())
    assert list(create_tools(tmp_path, ["ls", "read"])) == ["ls", "read"]
    with pytest.raises(KeyError):
        create_tools(tmp_path, ["nope"])


def test_schemas_use_pi_names_and_descriptions(tmp_path: Path) -> None:
    built = create_coding_tools(tmp_path)
    expected = {
        "read": ({"path", "offset", "limit"}, ["path"]),
        "write": ({"path", "content"}, ["path", "content"]),
        "edit": ({"path", "edits"}, ["path", "edits"]),
        "bash": ({"command", "timeout"}, ["command"]),
        "grep": ({"pattern", "path", "glob", "ignoreCase", "literal", "context", "limit"}, ["pattern"]),
        "find": ({"pattern", "path", "limit"}, ["pattern"]),
        "ls": ({"path", "limit"}, []),
    }
    for name, (props, required) in expected.items():
        schema = built[name].declaration().parameters
        assert set(schema["properties"]) == props, name
        assert schema.get("required", []) == required, name
        for prop in schema["properties"].values():
            assert prop.get("description"), name
            assert "anyOf" not in prop and "title" not in prop


def test_prompt_snippets_and_guidelines() -> None:
    assert set(TOOL_PROMPT_SNIPPETS) == set(ALL_TOOL_NAMES)
    default = tool_prompt_guidelines(DEFAULT_TOOL_NAMES)
    assert "Use bash for file operations like ls, rg, find" in default
    assert any(line.startswith("Use read to examine files before editing") for line in default)
    assert default[-2:] == ["Be concise in your responses", "Show file paths clearly when working with files"]
    readonly = tool_prompt_guidelines(["read", "bash", "grep", "find", "ls"])
    assert readonly[0].startswith("Prefer grep/find/ls tools over bash")
    assert not any("edit" in line for line in readonly)


def test_exports_are_sorted_and_resolvable() -> None:
    assert sorted(tools.__all__) == sorted(set(tools.__all__))
    for name in tools.__all__:
        assert hasattr(tools, name), name


def test_tool_modules_do_not_import_each_other_or_upper_layers() -> None:
    tool_modules = {p.stem for p in TOOLS_DIR.glob("*.py") if not p.stem.startswith("_")}
    for path in TOOLS_DIR.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = node.module
            elif isinstance(node, ast.Import):
                module = node.names[0].name
            else:
                continue
            for banned in ("pi_coder.session", "pi_coder.core", "pi_coder.tui", "pi_coder.modes", "textual"):
                assert not module.startswith(banned), (path.name, module)
            if path.stem != "__init__" and module.startswith("pi_coder.tools."):
                assert module.split(".")[2] not in tool_modules, (path.name, module)


def test_format_size() -> None:
    assert [format_size(n) for n in (0, 1023, 1024, 51200, 1_258_291)] == ["0B", "1023B", "1.0KB", "50.0KB", "1.2MB"]


def test_truncate_head_and_tail() -> None:
    text = "\n".join(f"l{i}" for i in range(10))
    head = truncate_head(text, max_lines=3)
    assert head.content == "l0\nl1\nl2" and head.truncated_by == "lines" and head.total_lines == 10
    tail = truncate_tail(text, max_lines=3)
    assert tail.content == "l7\nl8\nl9" and tail.output_lines == 3
    by_bytes = truncate_head("aaaa\nbbbb\ncccc", max_bytes=9)
    assert by_bytes.content == "aaaa\nbbbb" and by_bytes.truncated_by == "bytes"
    first = truncate_head("x" * 20 + "\ny", max_bytes=10)
    assert first.content == "" and first.first_line_exceeds_limit
    partial = truncate_tail("ab\n" + "é" * 10, max_bytes=5)
    assert partial.last_line_partial and partial.content == "éé"
    untouched = truncate_tail("small")
    assert not untouched.truncated and untouched.to_details()["truncatedBy"] is None
    assert truncate_line("x" * 501) == ("x" * 500 + "... [truncated]", True)
    assert truncate_line("short") == ("short", False)


def test_huge_image_without_resizer_is_omitted_with_a_note() -> None:
    prepared = prepare_image(b"\x89PNG\r\n\x1a\n" + b"\0" * (5 * 1024 * 1024), "image/png")
    assert prepared.data is None and prepared.note is not None and "Image omitted" in prepared.note
    small = prepare_image(b"\x89PNG\r\n\x1a\n", "image/png", auto_resize=False)
    assert small.data == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("read", {"path": "f.txt"}),
        ("write", {"path": "f.txt", "content": "x"}),
        ("edit", {"path": "f.txt", "edits": [{"oldText": "x", "newText": "y"}]}),
        ("bash", {"command": "echo hi"}),
        ("grep", {"pattern": "x"}),
        ("find", {"pattern": "*"}),
        ("ls", {}),
    ],
)
@pytest.mark.parametrize("use_rg", [True, False])
async def test_every_tool_honours_an_aborted_signal(
    tmp_path: Path, name: str, params: dict[str, object], use_rg: bool
) -> None:
    from pi_coder.ai.abort import AbortController
    from pi_coder.errors import ToolError
    from pi_coder.tools import ToolSettings

    (tmp_path / "f.txt").write_text("x\n")
    tool = create_coding_tools(tmp_path, ToolSettings(use_ripgrep=use_rg))[name]
    controller = AbortController()
    controller.abort()
    with pytest.raises(ToolError, match="^Operation aborted$"):
        await tool.execute("c", tool.parameters.model_validate(params), controller.signal, None)
    assert (tmp_path / "f.txt").read_text() == "x\n"


def test_ripgrep_lookup(tmp_path: Path) -> None:
    import sys

    from pi_coder.tools import ToolSettings
    from pi_coder.tools._rg import find_ripgrep

    assert find_ripgrep(ToolSettings(use_ripgrep=False)) is None
    assert find_ripgrep(ToolSettings(rg_path=str(tmp_path / "no-rg"))) is None
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file():
        assert find_ripgrep() == str(beside)
