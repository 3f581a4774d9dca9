"""One path resolver for every consumer: each spelling of a path meets the same decision.

The spellings (``@``, ``~``, ``..``, ``//``, ``/proc/self/root``, a repository symlink) are fed to
the resolver, the tools' write, the policy in each mode, a deny rule, the secret rules,
``builtin:protected-paths`` and the checkpoints' outside-folder capture.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from pi_coder.ai.models import create_models
from pi_coder.ai.providers.faux import faux_provider
from pi_coder.checkpoints import checkpoints
from pi_coder.core import create_agent_session
from pi_coder.extensions import events as E
from pi_coder.extensions.loader import discover, load_extensions
from pi_coder.extensions.runner import ExtensionRunner
from pi_coder.permissions.policy import Policy
from pi_coder.permissions.rules import RuleSet
from pi_coder.settings import load_settings
from pi_coder.tools._paths import real_path
from pi_coder.tools.write import create_write_tool


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".env").write_text("KEY=1\n")
    (project / "a").mkdir()
    (project / "keys").symlink_to(home / ".ssh")
    (project / "envlink").symlink_to(project / ".env")
    (project / "gitlink").symlink_to(project / ".git")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path / "config"))
    return project, home


def _ssh_spellings(home: Path) -> list[str]:
    return [
        "@~/.ssh/authorized_keys",
        "~/.ssh/authorized_keys",
        f"/{home}/.ssh/authorized_keys",  # a doubled slash
        f"/proc/self/root{home}/.ssh/authorized_keys",
        f"/proc/{os.getpid()}/root{home}/.ssh/authorized_keys",
        f"{home}/.ssh/../.ssh/authorized_keys",
        "keys/authorized_keys",  # a repository symlink to ~/.ssh
        "@keys/authorized_keys",
        "a/../keys/authorized_keys",
    ]


GIT_SPELLINGS = ["@.git/config", ".git/config", ".//.git//config", "a/../.git/config", "gitlink/config", "@gitlink/config"]
ENV_SPELLINGS = ["@.env", ".env", "a/../.env", "envlink", "@envlink", "./.env"]


def _decide(project: Path, mode: str, tool: str, path: str, rules: RuleSet | None = None) -> str:
    policy = Policy(mode, rules or RuleSet(), str(project))
    return policy.decide(tool, {"path": path, "content": "x"}).action


def test_resolver_gives_one_real_path_for_every_spelling(world: tuple[Path, Path]) -> None:
    project, home = world
    ssh = (home / ".ssh" / "authorized_keys").resolve()
    for spelling in _ssh_spellings(home):
        assert real_path(spelling, project) == ssh, spelling
    for spelling in GIT_SPELLINGS:
        assert real_path(spelling, project) == (project / ".git" / "config").resolve(), spelling
    for spelling in ENV_SPELLINGS:
        assert real_path(spelling, project) == (project / ".env").resolve(), spelling
    # a path that does not exist yet: the existing part resolved, the rest kept
    assert real_path("keys/new/deeper.txt", project) == home.resolve() / ".ssh" / "new" / "deeper.txt"


def test_accept_edits_asks_for_every_spelling_of_ssh(world: tuple[Path, Path]) -> None:
    project, home = world
    for spelling in _ssh_spellings(home):
        assert _decide(project, "accept-edits", "write", spelling) == "ask", spelling
        assert _decide(project, "deny", "write", spelling) == "deny", spelling
        assert _decide(project, "plan", "write", spelling) == "deny", spelling
        # the secret rule ~/.ssh/** asks for a read too, whatever the spelling
        assert _decide(project, "ask", "read", spelling) == "ask", spelling
    assert _decide(project, "accept-edits", "write", "a/fine.txt") == "allow"


def test_deny_rule_and_protected_git_meet_every_spelling(world: tuple[Path, Path]) -> None:
    project, _ = world
    deny = RuleSet(deny=["edit(.git/**)"])
    for spelling in GIT_SPELLINGS:
        assert _decide(project, "auto", "edit", spelling, deny) == "deny", spelling
        assert _decide(project, "accept-edits", "write", spelling) == "ask", spelling
        assert _decide(project, "deny", "write", spelling) == "deny", spelling


def test_secret_rules_meet_every_spelling_of_env(world: tuple[Path, Path]) -> None:
    project, _ = world
    for spelling in ENV_SPELLINGS:
        assert _decide(project, "ask", "read", spelling) == "ask", spelling
        assert _decide(project, "plan", "read", spelling) == "ask", spelling
        assert _decide(project, "deny", "read", spelling) == "deny", spelling
    assert _decide(project, "ask", "read", "a/../README") == "allow"


def _protected_paths_blocks(project: Path, path: str) -> bool:
    models = create_models(include_builtin=False, env={}, models_toml=Path("/nonexistent/models.toml"))
    faux = faux_provider([])
    models.set_provider(faux)
    session = create_agent_session(
        str(project), settings=load_settings(str(project)), models=models, tool_names=[], model=faux.model, no_session=True
    )
    runner = ExtensionRunner(str(project), models=models)
    sources, problems = discover(cli_specs=["builtin:protected-paths"], cwd=str(project), config_dir=project / "none")
    assert not problems
    load_extensions(runner, sources)
    runner.bind(session)

    async def run() -> bool:
        event = E.ToolCallEvent(tool_call_id="c1", tool_name="write", input={"path": path, "content": "x"})
        async for _ext, ok, result in runner.results("tool_call", event, E.ToolCallResult):
            assert ok, result
            if result is not None and result.block:
                return True
        return False

    return asyncio.run(run())


def test_protected_paths_extension_meets_every_spelling(world: tuple[Path, Path]) -> None:
    project, _ = world
    for spelling in [*GIT_SPELLINGS, *ENV_SPELLINGS]:
        assert _protected_paths_blocks(project, spelling), spelling
    assert not _protected_paths_blocks(project, "a/fine.txt")


def test_write_tool_and_checkpoints_use_the_same_target(world: tuple[Path, Path]) -> None:
    project, home = world
    tool = create_write_tool(str(project))
    for i, spelling in enumerate(_ssh_spellings(home)):
        target = home / ".ssh" / "authorized_keys"
        assert checkpoints._resolve(str(project), spelling) == str(target.resolve()), spelling
        params = tool.parameters.model_validate({"path": spelling, "content": f"key {i}"})
        asyncio.run(tool.execute(f"w{i}", params, None, None))
        assert target.read_text() == f"key {i}", spelling
        assert not (project / "@~").exists() and not (project / "@keys").exists()
