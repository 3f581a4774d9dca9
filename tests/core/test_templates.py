"""Prompt templates: discovery, frontmatter, argument splitting and substitution (pi-product 7.4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.resources.templates import (
    PromptTemplate,
    expand_template,
    load_templates,
    parse_frontmatter,
    split_args,
    substitute_args,
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / "prompts").mkdir(parents=True)
    monkeypatch.setenv("PI_CODER_HOME", str(home))
    return home


def tpl(name: str, content: str) -> PromptTemplate:
    return PromptTemplate(name=name, description="", content=content, path=Path(f"/{name}.md"), source="path")


# -- discovery -----------------------------------------------------------------------------


def test_load_global_and_project_project_wins(home: Path, tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / ".pi" / "prompts").mkdir(parents=True)
    (home / "prompts" / "review.md").write_text("---\ndescription: Global review\n---\nReview $1\n")
    (home / "prompts" / "fix.md").write_text("\n\n  Fix the failing tests in $@  \nmore\n")
    (home / "prompts" / "notes.txt").write_text("not a template")
    (home / "prompts" / "sub").mkdir()
    (home / "prompts" / "sub" / "deep.md").write_text("not loaded: not recursive")
    (proj / ".pi" / "prompts" / "review.md").write_text(
        "---\ndescription: \"Project review\"\nargument-hint: <file>\n---\nProject review of $1\n"
    )
    templates = load_templates(proj)
    assert list(templates) == ["fix", "review"]
    review = templates["review"]
    assert review.source == "project" and review.description == "Project review"
    assert review.argument_hint == "<file>"
    assert review.content == "Project review of $1\n"
    assert review.path == proj / ".pi" / "prompts" / "review.md"
    fix = templates["fix"]
    assert fix.source == "global" and fix.description == "Fix the failing tests in $@"


def test_long_first_line_description_is_shortened(home: Path, tmp_path: Path) -> None:
    (home / "prompts" / "long.md").write_text("x" * 200)
    desc = load_templates(tmp_path)["long"].description
    assert len(desc) == 60 and desc.endswith("...")


def test_extra_paths_files_and_folders_win(home: Path, tmp_path: Path) -> None:
    (home / "prompts" / "a.md").write_text("global a")
    extra_dir = tmp_path / "extra"
    extra_dir.mkdir()
    (extra_dir / "a.md").write_text("extra a")
    single = tmp_path / "b.md"
    single.write_text("single b")
    templates = load_templates(tmp_path, extra_paths=[extra_dir, single, tmp_path / "missing"])
    assert templates["a"].content == "extra a" and templates["a"].source == "path"
    assert templates["b"].content == "single b"


def test_missing_folders_give_no_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path / "nothing"))
    assert load_templates(tmp_path) == {}


def test_frontmatter_parsing() -> None:
    meta, body = parse_frontmatter("---\r\ndescription: 'Say: hi'\r\n# comment\r\nweird line\r\n---\r\nBody\r\n")
    assert meta == {"description": "Say: hi"}
    assert body == "Body\n"
    assert parse_frontmatter("---\nno end\n") == ({}, "---\nno end\n")
    assert parse_frontmatter("plain") == ({}, "plain")


# -- arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("a b  c", ["a", "b", "c"]),
        ('"hello world" x', ["hello world", "x"]),
        ("'it is' \"a 'test'\"", ["it is", "a 'test'"]),
        ('pre"fix suf"x', ["prefix sufx"]),
        ('a "" b', ["a", "", "b"]),
        ('"unclosed rest', ["unclosed rest"]),
        ("C:\\dir\\file.py", ["C:\\dir\\file.py"]),
        ("a\tb\nc", ["a", "b", "c"]),
    ],
)
def test_split_args(text: str, expected: list[str]) -> None:
    assert split_args(text) == expected


@pytest.mark.parametrize(
    ("content", "args", "expected"),
    [
        ("Review $1 then $2.", ["a.py", "b.py"], "Review a.py then b.py."),
        ("Missing [$3]", ["a"], "Missing []"),
        ("All: $@ / $ARGUMENTS", ["x", "y z"], "All: x y z / x y z"),
        ("From 2: ${@:2}", ["a", "b", "c", "d"], "From 2: b c d"),
        ("Slice: ${@:2:2}", ["a", "b", "c", "d"], "Slice: b c"),
        ("Past end: [${@:9}]", ["a"], "Past end: []"),
        ("Default: ${2:-main}", ["a"], "Default: main"),
        ("Default unused: ${1:-main}", ["dev"], "Default unused: dev"),
        ("Tenth: $10", [str(i) for i in range(1, 11)], "Tenth: 10"),
        ("No recursion: $1", ["$2"], "No recursion: $2"),
        ("Price $0 and $ alone", ["a"], "Price $0 and $ alone"),
    ],
)
def test_substitute_args(content: str, args: list[str], expected: str) -> None:
    assert substitute_args(content, args) == expected


# -- expansion -------------------------------------------------------------------------------


def test_expand_template_cases() -> None:
    templates = {"review": tpl("review", "Review $1 focusing on ${@:2}"), "hello": tpl("hello", "Hi! [$@]")}
    assert expand_template('/review src/app.py "error handling" tests', templates) == (
        "Review src/app.py focusing on error handling tests"
    )
    assert expand_template("/hello", templates) == "Hi! []"
    assert expand_template("/hello\nsecond line", templates) == "Hi! [second line]"
    # Not a template: unchanged.
    assert expand_template("/unknown a b", templates) == "/unknown a b"
    assert expand_template("review this", templates) == "review this"
    assert expand_template(" /review x", templates) == " /review x"
    assert expand_template("/reviewer x", templates) == "/reviewer x"
    assert expand_template("/", templates) == "/"
    # An iterable of templates works too.
    assert expand_template("/hello a", list(templates.values())) == "Hi! [a]"


def test_expand_from_disk(home: Path, tmp_path: Path) -> None:
    (home / "prompts" / "commit.md").write_text("---\ndescription: Commit\n---\nCommit with message: $ARGUMENTS")
    templates = load_templates(tmp_path)
    assert expand_template("/commit fix 'the bug'", templates) == "Commit with message: fix the bug"
