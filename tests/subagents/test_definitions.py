"""Agent definition files: Pi's keys, Claude Code's keys as-is, locations, precedence and trust."""

from __future__ import annotations

from pathlib import Path

from pi_coder.subagents.definitions import load_agents, parse_agent


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_claude_code_fields_map_and_unknown_keys_are_ignored(tmp_path: Path) -> None:
    text = (
        "---\nname: explorer\ndescription: Finds code.\n  Fast.\ntools: Read, Glob, Grep, Bash(git log:*), WebFetch, MultiEdit\n"
        "model: haiku\ncolor: cyan\npermissionMode: plan\nskills:\n  - a\n---\nYou explore.\n"
    )
    text = text.replace("Finds code.\n  Fast.", "Finds code. Fast.")
    agent = parse_agent(text, tmp_path / "explorer.md", "claude")
    assert agent.name == "explorer" and agent.description == "Finds code. Fast."
    assert agent.tools == ("read", "find", "grep", "bash", "edit")
    assert agent.model == "haiku" and agent.prompt == "You explore."
    assert not agent.read_only


def test_pi_fields_and_defaults(tmp_path: Path) -> None:
    agent = parse_agent(
        "---\ndescription: d\ntools: [read, grep]\nthinking: low\nmax_turns: 7\nmax_budget_usd: 0.25\nmodel: inherit\n---\n",
        tmp_path / "scout.md",
        "project",
    )
    assert agent.name == "scout" and agent.tools == ("read", "grep") and agent.read_only
    assert (agent.thinking, agent.max_turns, agent.max_budget_usd, agent.model) == ("low", 7, 0.25, None)
    assert agent.prompt == ""
    every = parse_agent("---\nname: all\ndescription: d\n---\nBody", tmp_path / "all.md", "user")
    assert every.tools is None and not every.read_only
    none = parse_agent("---\nname: none\ndescription: d\ntools: []\n---\n", tmp_path / "none.md", "user")
    assert none.tools == ()


def test_locations_precedence_trust_and_warnings(tmp_path: Path) -> None:
    project, config = tmp_path / "project", tmp_path / "config"
    _write(project / ".pi" / "agents", "a.md", "---\nname: same\ndescription: from .pi\n---\n")
    _write(project / ".claude" / "agents", "b.md", "---\nname: same\ndescription: from .claude\n---\n")
    _write(project / ".claude" / "agents", "c.md", "---\nname: claude-only\ndescription: c\n---\n")
    _write(config / "agents", "d.md", "---\nname: same\ndescription: from config\n---\n")
    _write(config / "agents", "e.md", "---\nname: Bad Name\ndescription: x\n---\n")
    _write(config / "agents", "f.md", "---\nname: off\ndescription: x\ndisabled: true\n---\n")
    _write(config / "agents", "g.md", "---\nname: g\nmax_turns: lots\n---\n")
    _write(config / "agents", "notes.txt", "not an agent")

    trusted = load_agents(project, config, project_trusted=True)
    names = [a.name for a in trusted.agents]
    assert names == ["same", "claude-only", "general-purpose"]
    same = trusted.get("same")
    assert same is not None and same.description == "from .pi"
    assert len(trusted.warnings) == 2
    assert any("e.md" in w and "Bad Name" in w for w in trusted.warnings)
    assert any("g.md" in w and "expected a number" in w for w in trusted.warnings)

    untrusted = load_agents(project, config, project_trusted=False)
    assert [a.name for a in untrusted.agents] == ["same", "general-purpose"]
    same = untrusted.get("same")
    assert same is not None and same.description == "from config"


def test_a_folder_with_agent_files_asks_for_trust(tmp_path: Path) -> None:
    from pi_coder.permissions.trust import project_resources

    assert project_resources(tmp_path) == []
    _write(tmp_path / ".claude" / "agents", "r.md", "---\nname: r\ndescription: x\n---\n")
    _write(tmp_path / ".pi" / "agents", "s.md", "---\nname: s\ndescription: x\n---\n")
    _write(tmp_path / ".pi" / "agents", "t.md", "---\nname: t\ndescription: x\n---\n")
    assert project_resources(tmp_path) == [".pi/agents: 2 agents", ".claude/agents: 1 agent"]
