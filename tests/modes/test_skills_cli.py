"""Skills in the real ``pi`` (extensions §5, §9.33-37): prompt block, /skill: in print and RPC mode, trust."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, RpcClient, user_texts
from tests.support.sse_server import SSEServer, Text, Turn


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer, monkeypatch: pytest.MonkeyPatch) -> PiHome:
    home = PiHome(tmp_path, sse_server, "anthropic")
    (tmp_path / "userhome").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))  # no ~/.agents or ~/.claude skills of the machine
    return home


def _skill(root: Path, name: str, description: str, extra: str = "") -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n\nInstructions for {name}.\n")
    return path


def _system(pi: PiHome, index: int = 0) -> str:
    system = pi.server.requests[index].json.get("system")
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


def test_global_skill_in_prompt_and_skill_command_in_print_mode(pi: PiHome) -> None:
    """§9.33 and §9.36: the block lists the skill; ``/skill:pdf a.pdf`` sends Pi's block."""
    path = _skill(pi.home / "skills", "pdf", "D")
    pi.server.enqueue(Turn([Text("ok")]), Turn([Text("ok")]))
    run = pi.run("-p", "/skill:pdf a.pdf")
    assert run.returncode == 0, run.stderr
    system = _system(pi)
    assert f"    <name>pdf</name>\n    <description>D</description>\n    <location>{path}</location>" in system
    expected = f'<skill name="pdf" location="{path}">\nReferences are relative to {path.parent}.\n\nInstructions for pdf.\n</skill>\n\na.pdf'
    assert user_texts(pi.server.requests[0].json) == [expected]

    run = pi.run("-p", "--tools", "grep", "/skill:nope x")
    assert run.returncode == 0, run.stderr
    assert "<available_skills>" not in _system(pi, 1)
    assert user_texts(pi.server.requests[1].json) == ["/skill:nope x"]


def test_project_skills_need_trust_and_claude_projects_work_unchanged(pi: PiHome) -> None:
    """§9.35: a trusted project's skill wins with one notice; a `.claude/skills` project works as is."""
    _skill(pi.home / "skills", "pdf", "global pdf")
    project_pdf = _skill(pi.project / ".pi" / "skills", "pdf", "project pdf")
    claude = _skill(pi.project / ".claude" / "skills", "review", "Review code like Claude Code does")
    pi.server.enqueue(Turn([Text("ok")]), Turn([Text("ok")]))

    run = pi.run("-p", "hi")  # untrusted: only the global skill
    assert run.returncode == 0, run.stderr
    system = _system(pi)
    assert "global pdf" in system and "project pdf" not in system and "review" not in system

    run = pi.run("-a", "-p", "hi")
    assert run.returncode == 0, run.stderr
    system = _system(pi, 1)
    assert "project pdf" in system and "global pdf" not in system
    assert f"<location>{claude}</location>" in system
    assert run.stderr.count("defined twice") == 1
    assert f'skill "pdf" defined twice: using {project_pdf}' in run.stderr


def test_no_skills_keeps_only_cli_skills(pi: PiHome) -> None:
    """§9.37: ``-ns --skill extra/``: only the extra skills."""
    _skill(pi.home / "skills", "pdf", "global pdf")
    _skill(pi.project / "extra", "mine", "mine only")
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-ns", "--skill", "extra", "-p", "hi")
    assert run.returncode == 0, run.stderr
    system = _system(pi)
    assert "mine only" in system and "global pdf" not in system


def test_rpc_get_commands_lists_skills_and_hidden_ones_still_expand(pi: PiHome) -> None:
    """§9.37 over RPC: ``skill:<name>`` in get_commands; with enable_skill_commands = false none is listed,
    a disable-model-invocation skill is not in the prompt, and typing it still expands."""
    _skill(pi.home / "skills", "pdf", "D")
    _skill(pi.home / "skills", "secret", "S", extra="disable-model-invocation: true\n")
    client = RpcClient(pi)
    try:
        data = client.call({"type": "get_commands"})["data"]
        names = [c["name"] for c in data["commands"] if c["source"] == "skill"]
        assert names == ["skill:pdf", "skill:secret"]
    finally:
        client.close()

    (pi.home / "settings.toml").write_text("enable_skill_commands = false\n")
    pi.server.enqueue(Turn([Text("ok")]))
    client = RpcClient(pi)
    try:
        data = client.call({"type": "get_commands"})["data"]
        assert [c for c in data["commands"] if c["source"] == "skill"] == []
        client.call({"type": "prompt", "message": "/skill:secret now"})
        client.event("agent_end")
    finally:
        client.close()
    system = _system(pi)
    assert "<name>pdf</name>" in system and "secret" not in system
    (text,) = user_texts(pi.server.requests[0].json)
    assert text.startswith('<skill name="secret"') and text.endswith("</skill>\n\nnow")
