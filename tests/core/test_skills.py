"""Skills (extensions §5): frontmatter, validation, scanning order, collisions, the prompt block, /skill:."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.resources.skills import (
    FrontmatterError,
    Skill,
    expand_skill_command,
    load_skills,
    parse_frontmatter,
)
from pi_coder.resources.system_prompt import build_system_prompt, format_skills


def _skill(root: Path, folder: str, front: str, body: str = "Do the thing.\n") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    home, config, proj = tmp_path / "userhome", tmp_path / "config", tmp_path / "proj"
    for d in (home, config, proj):
        d.mkdir()
    (proj / ".git").mkdir()  # the ancestors scan of .agents/skills stops here
    monkeypatch.setenv("HOME", str(home))
    return home, config, proj


def test_frontmatter_subset() -> None:
    meta, body = parse_frontmatter(
        "---\nname: pdf\ndescription: >\n  Folded\n  text\nlicense: 'MIT'\nallowed-tools: [read, bash]\n"
        "metadata:\n  author: ana\n  version: \"1\"\ndisable-model-invocation: true\nlist:\n  - a\n  - b\n"
        "notes: |\n  line 1\n  line 2\n---\nBody\n"
    )
    assert meta == {
        "name": "pdf",
        "description": "Folded text",
        "license": "MIT",
        "allowed-tools": ["read", "bash"],
        "metadata": {"author": "ana", "version": "1"},
        "disable-model-invocation": True,
        "list": ["a", "b"],
        "notes": "line 1\nline 2",
    }
    assert body == "Body"
    assert parse_frontmatter("no frontmatter") == ({}, "no frontmatter")
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter("---\nname: x\nthis is not a pair\n---\n")
    assert info.value.line == 3


def test_validation_warns_once_and_skips_what_it_must(dirs: tuple[Path, Path, Path]) -> None:
    """§9.34: no description: not loaded, one warning; a bad name: loaded, warning; bad frontmatter: skipped."""
    _home, config, proj = dirs
    root = config / "skills"
    _skill(root, "nodesc", "name: nodesc")
    _skill(root, "Bad_Name", "name: Bad_Name\ndescription: Fine.")
    _skill(root, "broken", "name: broken\ndescription: 'unterminated")
    (root / "notes.md").write_text("plain markdown, not a skill\n")
    (root / "standalone.md").write_text("---\ndescription: A standalone skill.\n---\nHi\n")
    found = load_skills(proj, config_dir=config, project_trusted=True)
    assert [s.name for s in found.skills] == ["Bad_Name", "standalone"]
    text = "\n".join(found.warnings)
    assert len(found.warnings) == 3, found.warnings
    assert "nodesc/SKILL.md: no description" in text
    assert 'name "Bad_Name" should be lowercase' in text
    assert "broken/SKILL.md: invalid frontmatter, line 3" in text


def test_locations_in_precedence_order_with_one_collision_notice(dirs: tuple[Path, Path, Path]) -> None:
    """§9.35: the trusted project wins over the config folder; the notice names both files."""
    home, config, proj = dirs
    user = _skill(config / "skills", "pdf", "description: user pdf")
    project = _skill(proj / ".pi" / "skills", "pdf", "description: project pdf")
    _skill(proj / ".agents" / "skills", "agents-one", "description: from .agents")
    _skill(proj / ".claude" / "skills", "claude-one", "description: from .claude")
    _skill(home / ".agents" / "skills", "home-agents", "description: from ~/.agents")
    _skill(home / ".claude" / "skills", "home-claude", "description: from ~/.claude")
    extra = _skill(proj / "extra", "cli-one", "description: from --skill")
    found = load_skills(proj, config_dir=config, project_trusted=True, cli_paths=["extra"])
    assert [(s.name, s.source) for s in found.skills] == [
        ("cli-one", "cli"),
        ("pdf", "project"),
        ("agents-one", "agents"),
        ("claude-one", "claude"),
        ("home-agents", "user"),
        ("home-claude", "user"),
    ]
    assert found.get("pdf").file_path == str(project)  # type: ignore[union-attr]
    assert found.warnings == [f'skill "pdf" defined twice: using {project}, ignoring {user}']
    assert found.skills[0].file_path == str(extra)

    untrusted = load_skills(proj, config_dir=config, project_trusted=False)
    assert [s.name for s in untrusted.skills] == ["pdf", "home-agents", "home-claude"]
    assert untrusted.get("pdf").file_path == str(user)  # type: ignore[union-attr]
    no_claude = load_skills(proj, config_dir=config, project_trusted=True, claude_skills=False)
    assert "claude-one" not in [s.name for s in no_claude.skills]
    only_cli = load_skills(proj, config_dir=config, project_trusted=True, cli_paths=["extra", "missing"], no_skills=True)
    assert [s.name for s in only_cli.skills] == ["cli-one"]
    assert only_cli.warnings == [f"skill path not found: {proj / 'missing'}"]


def test_scanning_rules(dirs: tuple[Path, Path, Path]) -> None:
    """A SKILL.md folder is not descended; dot folders, node_modules and ignored names are skipped."""
    _home, config, proj = dirs
    root = config / "skills"
    _skill(root, "outer", "description: outer")
    _skill(root / "outer", "inner", "description: never seen")
    _skill(root / "group", "nested", "description: nested deeper")
    _skill(root, ".hidden", "description: hidden")
    _skill(root / "node_modules", "dep", "description: dep")
    _skill(root, "ignored", "description: ignored")
    (root / ".gitignore").write_text("ignored\n")
    (root / "link").symlink_to(root / "group")
    found = load_skills(proj, config_dir=config, project_trusted=True)
    assert [s.name for s in found.skills] == ["nested", "outer"]


def test_prompt_block_shape_and_escaping() -> None:
    """§5.3: two spaces per level, XML-escaped; read named, else bash; none without either."""
    skills = load_skills_for_block()
    block = format_skills(skills)
    assert block.endswith(
        "<available_skills>\n"
        "  <skill>\n"
        "    <name>release-notes</name>\n"
        "    <description>Draft &lt;notes&gt; &amp; &quot;more&quot; &apos;x&apos;</description>\n"
        "    <location>/s/release-notes/SKILL.md</location>\n"
        "  </skill>\n"
        "</available_skills>"
    )
    assert "use the read tool" in block
    with_bash = build_system_prompt(cwd="/p", tools=["bash"], skills=skills, docs={}, date="2026-01-01")
    assert "use the bash tool" in with_bash
    assert "<available_skills>" not in build_system_prompt(cwd="/p", tools=["grep"], skills=skills, docs={})
    prompt = build_system_prompt(cwd="/p", tools=["read"], skills=skills, docs={}, date="2026-01-01")
    assert prompt.index("</available_skills>") < prompt.index("Current date: 2026-01-01")


def load_skills_for_block() -> list[Skill]:
    return [
        Skill(
            name="release-notes",
            description="Draft <notes> & \"more\" 'x'",
            file_path="/s/release-notes/SKILL.md",
            base_dir="/s/release-notes",
            source="cli",
        ),
        Skill(name="hidden", description="d", file_path="/s/h/SKILL.md", base_dir="/s/h", source="cli", disable_model_invocation=True),
    ]


def test_skill_command_expansion_is_byte_exact(dirs: tuple[Path, Path, Path]) -> None:
    """§9.36: the block plus ``\\n\\nARGS``; unknown names pass through."""
    _home, config, proj = dirs
    path = _skill(config / "skills", "pdf", "description: PDFs", body="\n  Use refs/x.md.\n\n")
    found = load_skills(proj, config_dir=config, project_trusted=True)
    expected = f'<skill name="pdf" location="{path}">\nReferences are relative to {path.parent}.\n\nUse refs/x.md.\n</skill>'
    assert expand_skill_command("/skill:pdf", found) == expected
    assert expand_skill_command("/skill:pdf a.pdf  ", found) == expected + "\n\na.pdf"
    assert expand_skill_command("/skill:nope x", found) == "/skill:nope x"
    assert expand_skill_command("hello", found) == "hello"
