"""Context-file discovery and system prompt assembly (pi-product 7.2, 5.8)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pi_coder.resources.context_files import (
    ContextFile,
    discover_context_files,
    find_append_system_file,
    find_system_file,
    load_project_context,
    read_prompt_argument,
)
from pi_coder.resources.skills import Skill
from pi_coder.resources.system_prompt import build_system_prompt, format_skills, load_system_prompt

DEFAULT_TOOLS = ["read", "bash", "edit", "write"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PI_CODER_HOME", str(home))
    return home


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp/work/repo/pkg with context files at several levels; returns pkg."""
    pkg = tmp_path / "work" / "repo" / "pkg"
    pkg.mkdir(parents=True)
    (tmp_path / "work" / "CLAUDE.md").write_text("work claude")
    (tmp_path / "work" / "repo" / "AGENTS.md").write_text("repo agents")
    (tmp_path / "work" / "repo" / "CLAUDE.md").write_text("repo claude (ignored)")
    (pkg / "CLAUDE.md").write_text("pkg claude")
    return pkg


# -- context files -------------------------------------------------------------------------


def test_discovery_order_global_then_root_to_cwd(home: Path, tree: Path) -> None:
    """Global file first, then outermost ancestor to cwd; AGENTS.md beats CLAUDE.md in a folder."""
    (home / "AGENTS.md").write_text("global agents")
    (home / "CLAUDE.md").write_text("global claude (ignored)")
    files = discover_context_files(tree)
    tmp = tree.parents[2]
    assert [f.path for f in files] == [
        home / "AGENTS.md",
        tmp / "work" / "CLAUDE.md",
        tmp / "work" / "repo" / "AGENTS.md",
        tree / "CLAUDE.md",
    ]
    assert [f.content for f in files] == ["global agents", "work claude", "repo agents", "pkg claude"]


def test_global_claude_md_used_when_no_agents_md(home: Path, tree: Path) -> None:
    (home / "CLAUDE.md").write_text("global claude")
    assert discover_context_files(tree)[0] == ContextFile(home / "CLAUDE.md", "global claude")


def test_discovery_deduplicates_config_dir_inside_tree(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PI_CODER_HOME being one of the ancestors does not list its file twice."""
    monkeypatch.setenv("PI_CODER_HOME", str(tree.parent))
    files = discover_context_files(tree)
    paths = [f.path for f in files]
    assert paths.count(tree.parent / "AGENTS.md") == 1
    assert paths[0] == tree.parent / "AGENTS.md"


def test_discovery_deduplicates_symlinked_cwd(home: Path, tree: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tree)
    (home / "AGENTS.md").symlink_to(tree / "CLAUDE.md")
    files = discover_context_files(link)
    assert [f.content for f in files].count("pkg claude") == 1


def test_system_and_append_files_project_wins(home: Path, tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / ".pi").mkdir(parents=True)
    (home / "SYSTEM.md").write_text("global system")
    (home / "APPEND_SYSTEM.md").write_text("global append")
    assert find_system_file(proj) == ContextFile(home / "SYSTEM.md", "global system")
    (proj / ".pi" / "SYSTEM.md").write_text("project system")
    sys_file = find_system_file(proj)
    assert sys_file is not None and sys_file.content == "project system"
    append = find_append_system_file(proj)
    assert append is not None and append.content == "global append"
    ctx = load_project_context(proj, context_files=False)
    assert ctx.context_files == [] and ctx.system == sys_file and ctx.append_system == append


def test_no_system_files(home: Path, tmp_path: Path) -> None:
    assert find_system_file(tmp_path) is None and find_append_system_file(tmp_path) is None


def test_read_prompt_argument_reads_existing_file_else_literal(tmp_path: Path) -> None:
    (tmp_path / "prompt.md").write_text("from file")
    assert read_prompt_argument(str(tmp_path / "prompt.md")) == "from file"
    assert read_prompt_argument("prompt.md", tmp_path) == "from file"
    assert read_prompt_argument("You are a pirate.", tmp_path) == "You are a pirate."
    assert read_prompt_argument(str(tmp_path)) == str(tmp_path)  # a folder is not a file


# -- system prompt ---------------------------------------------------------------------------


def build(**kw: object) -> str:
    kw.setdefault("cwd", "/home/u/proj")
    kw.setdefault("date", dt.date(2026, 3, 15))
    kw.setdefault("docs", {})
    return build_system_prompt(**kw)  # type: ignore[arg-type]


def test_default_prompt_lists_tools_and_ends_with_date_and_cwd() -> None:
    prompt = build(tools=DEFAULT_TOOLS)
    assert prompt.startswith("You are an expert coding assistant operating inside pi")
    tools_section = prompt.split("Available tools:\n", 1)[1].split("\n\n", 1)[0]
    assert [line.split(":")[0] for line in tools_section.splitlines()] == [
        "- read",
        "- bash",
        "- edit",
        "- write",
    ]
    assert "- grep" not in prompt
    assert prompt.endswith("Current date: 2026-03-15\nCurrent working directory: /home/u/proj")
    assert "Guidelines:" in prompt and "Be concise" in prompt and "file paths clearly" in prompt


def test_snippets_passed_in_win_over_fallbacks() -> None:
    prompt = build(tools=["read", ("deploy", "Deploy the app")], tool_snippets={"read": "READ IT"})
    assert "- read: READ IT\n- deploy: Deploy the app" in prompt


def test_guidelines_depend_on_tools() -> None:
    """bash-only exploration vs preferring grep/find/ls; edit/write hints only with those tools."""
    default = build(tools=DEFAULT_TOOLS)
    assert "Use bash to explore" in default
    assert "Prefer the" not in default
    assert "before editing" in default and "must match the file exactly" in default
    assert "only for new files" in default

    with_search = build(tools=["read", "bash", "grep", "find", "ls"])
    assert "Prefer the find/grep/ls tools over bash" in with_search
    assert "Use bash to explore" not in with_search
    assert "must match the file exactly" not in with_search
    assert "only for new files" not in with_search

    read_only = build(tools=["read", "grep"])
    assert "bash" not in read_only.split("Guidelines:")[1]


def test_no_tools_and_extra_guidelines() -> None:
    prompt = build(tools=[], guidelines=["Run the tests before you finish", "Be concise in your responses"])
    assert "Available tools:\n(none)" in prompt
    assert "- Run the tests before you finish" in prompt
    assert prompt.count("Be concise in your responses") == 1


def test_project_context_section() -> None:
    files = [ContextFile(Path("/a/AGENTS.md"), "Use tabs.\n"), ContextFile(Path("/a/b/CLAUDE.md"), "No emoji.")]
    prompt = build(tools=DEFAULT_TOOLS, context_files=files)
    assert (
        "# Project Context\n\nProject-specific instructions and guidelines:\n\n"
        "## /a/AGENTS.md\n\nUse tabs.\n\n## /a/b/CLAUDE.md\n\nNo emoji."
    ) in prompt
    assert prompt.index("Guidelines:") < prompt.index("# Project Context") < prompt.index("Current date:")


def test_custom_prompt_replaces_default_but_keeps_context_date_cwd() -> None:
    files = [ContextFile(Path("C:\\proj\\AGENTS.md"), "ctx")]
    prompt = build(
        tools=DEFAULT_TOOLS,
        custom_prompt="You are a pirate.",
        append_prompt="Always say arr.",
        context_files=files,
        cwd="C:\\proj",
    )
    assert prompt.startswith("You are a pirate.\n\nAlways say arr.\n\n# Project Context")
    assert "Available tools" not in prompt and "Guidelines" not in prompt
    assert "## C:/proj/AGENTS.md" in prompt
    assert prompt.endswith("Current working directory: C:/proj")


def test_append_goes_after_default_body_before_context() -> None:
    prompt = build(tools=DEFAULT_TOOLS, append_prompt="APPENDED", context_files=[ContextFile(Path("/x"), "c")])
    assert prompt.index("Guidelines:") < prompt.index("APPENDED") < prompt.index("# Project Context")


def test_skills_only_when_read_is_active() -> None:
    skills = [
        Skill(name="pdf", description="Work with <PDF> files", file_path="/s/pdf/SKILL.md", base_dir="/s/pdf", source="cli"),
        Skill(name="hidden", description="x", file_path="/s/h.md", base_dir="/s", source="cli", disable_model_invocation=True),
    ]
    with_read = build(tools=DEFAULT_TOOLS, skills=skills)
    assert "<name>pdf</name>" in with_read and "&lt;PDF&gt;" in with_read
    assert "<location>/s/pdf/SKILL.md</location>" in with_read
    assert "hidden" not in with_read
    assert with_read.index("</available_skills>") < with_read.index("Current date:")
    assert "<available_skills>" not in build(tools=["grep"], skills=skills)  # read, else bash (extensions §5.3)
    # A custom prompt with no tool list still shows skills.
    assert "<available_skills>" in build(custom_prompt="Custom.", skills=skills)
    assert format_skills(skills[1:]) == ""


def test_docs_block() -> None:
    prompt = build(tools=DEFAULT_TOOLS, docs={"README": "/opt/pi/README.md"})
    assert "Pi documentation" in prompt and "- README: /opt/pi/README.md" in prompt
    assert "Pi documentation" not in build(tools=DEFAULT_TOOLS)


def test_default_date_is_today() -> None:
    prompt = build_system_prompt(cwd="/x", tools=[])
    assert f"Current date: {dt.date.today().isoformat()}" in prompt


def test_load_system_prompt_from_disk(home: Path, tree: Path) -> None:
    """SYSTEM.md replaces the default, APPEND_SYSTEM.md appends; CLI values override both."""
    (home / "AGENTS.md").write_text("global rules")
    (tree / ".pi").mkdir()
    (tree / ".pi" / "SYSTEM.md").write_text("Project system.")
    (home / "APPEND_SYSTEM.md").write_text("Global append.")
    prompt, warnings = load_system_prompt(tree, tools=DEFAULT_TOOLS, date="2026-01-02")
    assert warnings == []
    assert prompt.startswith("Project system.\n\nGlobal append.\n\n# Project Context")
    assert "global rules" in prompt and "pkg claude" in prompt

    (tree / "sp.md").write_text("From CLI file.")
    prompt, _ = load_system_prompt(
        tree, tools=DEFAULT_TOOLS, system_prompt="sp.md", append_system_prompt="CLI append.", context_files=False
    )
    assert prompt.startswith("From CLI file.\n\nCLI append.\n\nCurrent date:")


def test_load_system_prompt_default_when_no_system_md(home: Path, tmp_path: Path) -> None:
    prompt, _ = load_system_prompt(tmp_path, tools=["read"])
    assert prompt.startswith("You are an expert coding assistant")
    assert "# Project Context" not in prompt
