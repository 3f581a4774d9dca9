"""The credentials file (pi auth login/logout/check, /login) and the key resolution order."""

from __future__ import annotations

import io
import json
import stat
from pathlib import Path

import pytest

from pi_coder.ai.credentials import load_credentials, remove_credential, save_credential
from pi_coder.ai.models import create_models
from pi_coder.errors import ConfigError
from pi_coder.modes.subcommands import run_subcommand


def test_save_load_remove_keeps_the_file_private_and_other_entries(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "credentials.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"github-copilot": {"type": "oauth", "refresh": "r"}}))
    save_credential("Anthropic", "sk-ant-1", path)
    save_credential("openai", " sk-2 \n", path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_credentials(path) == {"anthropic": "sk-ant-1", "openai": "sk-2"}
    assert remove_credential("anthropic", path) is True
    assert remove_credential("anthropic", path) is False
    data = json.loads(path.read_text())
    assert data == {
        "github-copilot": {"type": "oauth", "refresh": "r"},
        "openai": {"type": "api_key", "key": "sk-2"},
    }
    assert [p.name for p in path.parent.iterdir()] == ["credentials.json"]  # no temporary file left
    with pytest.raises(ValueError):
        save_credential("openai", "a\nb", path)


def test_a_broken_file_is_a_config_error_without_the_key(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text('{"openai": {"key": "sk-secret"')
    with pytest.raises(ConfigError) as info:
        load_credentials(path)
    assert "sk-secret" not in str(info.value)


def test_resolution_order_api_key_env_file_models_toml(tmp_path: Path) -> None:
    toml = tmp_path / "models.toml"
    toml.write_text('[providers.openai]\napi_key = "from-toml"\n')
    save_credential("openai", "from-file", tmp_path / "credentials.json")
    assert create_models(env={}, models_toml=toml).get_api_key("openai") == "from-file"
    assert (
        create_models(env={"OPENAI_API_KEY": "from-env"}, models_toml=toml).get_api_key("openai")
        == "from-env"
    )
    cli = create_models(
        env={"OPENAI_API_KEY": "from-env"}, models_toml=toml, api_key_override={"openai": "from-flag"}
    )
    assert cli.get_api_key("openai") == "from-flag"
    remove_credential("openai", tmp_path / "credentials.json")
    assert create_models(env={}, models_toml=toml).get_api_key("openai") == "from-toml"


def test_pi_auth_login_check_logout(tmp_path: Path) -> None:
    env = {"PI_CODER_HOME": str(tmp_path)}
    out, err = io.StringIO(), io.StringIO()
    assert (
        run_subcommand(["auth", "login", "google"], stdin=io.StringIO("gk-123\n"), out=out, err=err, env=env)
        == 0
    )
    assert "gk-123" not in out.getvalue() + err.getvalue()
    assert load_credentials(tmp_path / "credentials.json") == {"google": "gk-123"}
    out = io.StringIO()
    assert run_subcommand(["auth", "check"], out=out, err=err, env={**env, "OPENAI_API_KEY": "sk-e"}) == 0
    lines = dict(line.split(None, 1) for line in out.getvalue().splitlines())
    assert lines["google"].startswith("key stored in") and lines["openai"] == "key from $OPENAI_API_KEY"
    assert lines["anthropic"].startswith("no key")
    assert "gk-123" not in out.getvalue() and "sk-e" not in out.getvalue()
    assert run_subcommand(["auth", "logout", "google"], out=io.StringIO(), err=err, env=env) == 0
    assert load_credentials(tmp_path / "credentials.json") == {}
    assert run_subcommand(["auth", "login"], out=io.StringIO(), err=io.StringIO(), env=env) == 2


def test_pi_update_models_reads_pis_catalog_format_offline(tmp_path: Path) -> None:
    catalog = {
        "anthropic-messages": {
            "chat:claude-next": {
                "id": "claude-next",
                "name": "Claude Next",
                "api": "anthropic-messages",
                "provider": "anthropic",
                "baseUrl": "https://api.anthropic.com",
                "reasoning": True,
                "input": ["text", "image"],
                "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
                "contextWindow": 2000000,
                "maxTokens": 256000,
                "type": "chat",
            },
            "classifier:x": {
                "id": "x",
                "api": "anthropic-messages",
                "provider": "anthropic",
                "type": "classifier",
            },
        }
    }
    source = tmp_path / "anthropic.json"
    source.write_text(json.dumps(catalog))
    env = {"PI_CODER_HOME": str(tmp_path / "home")}
    out = io.StringIO()
    assert run_subcommand(["update", "--models", str(source)], out=out, err=io.StringIO(), env=env) == 0
    assert "Saved 1 models (anthropic)" in out.getvalue()
    models = create_models(env={}, models_toml=tmp_path / "home" / "models.toml")
    model = models.get_model("anthropic", "claude-next")
    assert model is not None and (model.context_window, model.max_tokens, model.cost.cache_write) == (
        2_000_000,
        256_000,
        3.75,
    )
    assert models.get_model("anthropic", "claude-opus-5-5") is not None  # built-ins stay
    bad = tmp_path / "bad.json"
    bad.write_text('{"nothing": 1}')
    err = io.StringIO()
    assert run_subcommand(["update", "--models", str(bad)], out=io.StringIO(), err=err, env=env) == 1
    assert "no model records" in err.getvalue()


@pytest.mark.parametrize(
    ("content", "mode", "problem"),
    [
        ('{"anthropic": {"type": "api_key", "key": "sk-ant-secret"', 0o600, "is not valid JSON (line 1: "),
        ('["sk-ant-secret"]', 0o600, "holds a JSON list, not an object of providers"),
        ('{"anthropic": {"type": "api_key", "key": "sk-ant-secret"}}', 0o000, "Permission denied (fix its permissions"),
    ],
    ids=["invalid-json", "a-list", "mode-000"],
)
def test_a_broken_file_is_named_with_what_is_wrong(tmp_path: Path, content: str, mode: int, problem: str) -> None:
    """Not "No API key ... Set ANTHROPIC_API_KEY": the file and its fault, in one line (issue 33)."""
    import os
    import subprocess

    from tests.modes.pirun import PI, clean_env

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    path = home / "credentials.json"
    path.write_text(content)
    path.chmod(mode)
    command = [*PI, "-p", "--no-session", "--model", "anthropic/claude-sonnet-4-5", "hi"]
    if mode == 0 and os.geteuid() == 0:  # root reads anything: drop the capabilities that allow it
        if not Path("/usr/bin/setpriv").exists():
            pytest.skip("running as root without setpriv")
        command = ["/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    run = subprocess.run(
        command, cwd=project, env=clean_env(home), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('pi: No API key for provider "anthropic": '), run.stderr
    assert str(path) in lines[0] and problem in lines[0] and "sk-ant-secret" not in run.stderr
    no_model = subprocess.run(
        [*command[: command.index("--model")], "hi"], cwd=project, env=clean_env(home), capture_output=True, text=True,
        timeout=60, stdin=subprocess.DEVNULL,
    )
    first = no_model.stderr.splitlines()[0]
    assert no_model.returncode == 1 and str(path) in first and problem in first, no_model.stderr
    assert "No model configured" in no_model.stderr and "sk-ant-secret" not in no_model.stderr
