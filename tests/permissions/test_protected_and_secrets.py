"""Protected folders in each mode, the new secret rules, and approvals that hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.permissions.policy import Policy
from pi_coder.permissions.rules import RuleSet


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path / "config"))
    (tmp_path / "config").mkdir()
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (folder / ".pi").mkdir()
    (folder / ".env").write_text("A=1\n")
    return folder


PROTECTED = [".git/config", ".git/hooks/pre-commit", ".pi/settings.toml", "sub/.git/config"]
EXPECTED = {"auto": "allow", "accept-edits": "ask", "ask": "ask", "plan": "deny", "deny": "deny"}


@pytest.mark.parametrize("mode", list(EXPECTED))
@pytest.mark.parametrize("path", PROTECTED)
def test_protected_folders_in_each_mode(project: Path, mode: str, path: str) -> None:
    decision = Policy(mode, RuleSet(), str(project)).decide("write", {"path": path, "content": "x"})
    assert decision.action == EXPECTED[mode]
    if decision.action == "ask":
        assert "protected" in decision.reason


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_config_folder_and_credentials_are_protected(project: Path, mode: str, tmp_path: Path) -> None:
    for name in ("credentials.json", "settings.toml", "models.toml"):
        decision = Policy(mode, RuleSet(), str(project)).decide("edit", {"path": str(tmp_path / "config" / name)})
        assert decision.action == EXPECTED[mode], name


def test_an_allow_rule_with_a_pattern_opens_a_protected_folder(project: Path) -> None:
    rules = RuleSet(allow=["edit(.pi/**)"])
    assert Policy("accept-edits", rules, str(project)).decide("write", {"path": ".pi/settings.toml"}).action == "allow"
    bare = RuleSet(allow=["write"])
    assert Policy("ask", bare, str(project)).decide("write", {"path": ".git/config"}).action == "ask"


@pytest.mark.parametrize(
    "path",
    ["/proc/self/environ", "/proc/1/environ", "/proc/thread-self/environ", "@/proc/self/environ"],
)
def test_process_environments_are_secret(project: Path, path: str) -> None:
    decision = Policy("plan", RuleSet(), str(project)).decide("read", {"path": path})
    assert decision.action == "ask"
    assert "secret" in decision.reason and "ask rule covers" not in decision.reason


def test_config_key_files_are_secret_through_a_symlink(project: Path, tmp_path: Path) -> None:
    (tmp_path / "config" / "credentials.json").write_text("{}")
    (project / "creds").symlink_to(tmp_path / "config" / "credentials.json")
    for path in ("creds", "@creds", str(tmp_path / "config" / "models.toml")):
        assert Policy("ask", RuleSet(), str(project)).decide("read", {"path": path}).action == "ask", path
    assert Policy("auto", RuleSet(), str(project)).decide("read", {"path": "creds"}).action == "allow"


def test_reason_names_the_rule_that_asked(project: Path) -> None:
    secret = Policy("ask", RuleSet(), str(project)).decide("read", {"path": ".env"})
    assert secret.reason == "It may reveal or change a secret (built-in secret rule read(.env))."
    own = Policy("ask", RuleSet(ask=["read(*.md)"]), str(project)).decide("read", {"path": "a.md"})
    assert own.reason == "Your ask rule read(*.md) covers this call."


def test_allow_this_session_holds_for_a_secret_file(project: Path) -> None:
    policy = Policy("ask", RuleSet(), str(project))
    for tool, args in (("read", {"path": ".env"}), ("bash", {"command": "cat .env"})):
        first = policy.decide(tool, args)
        assert first.action == "ask" and first.rules
        for rule in first.rules:  # what "Allow this session" does
            policy.session_rules.add_allow(rule)
        assert policy.decide(tool, args).action == "allow", tool


def test_always_allow_for_a_secret_file_holds_next_time(project: Path) -> None:
    first = Policy("ask", RuleSet(), str(project))
    for tool, args in (("read", {"path": ".env"}), ("bash", {"command": "cat .env"})):
        saved = first.decide(tool, args).rules
        assert saved
        # the next session loads the saved rules from the settings
        assert Policy("ask", RuleSet(allow=saved), str(project)).decide(tool, args).action == "allow", tool
    # a bare allow rule does not open the secrets
    assert Policy("ask", RuleSet(allow=["read"]), str(project)).decide("read", {"path": ".env"}).action == "ask"


def test_always_allow_is_not_offered_when_your_ask_rule_asked(project: Path) -> None:
    """Your ask rule beats any allow rule, so a saved rule would not hold: only the session grant is offered."""
    own = Policy("ask", RuleSet(ask=["bash(git push*)"]), str(project)).decide("bash", {"command": "git push"})
    assert own.action == "ask" and not own.saveable
    secret = Policy("ask", RuleSet(), str(project)).decide("read", {"path": ".env"})
    assert secret.saveable
    write = Policy("ask", RuleSet(), str(project)).decide("write", {"path": "a.txt", "content": ""})
    assert write.saveable
