"""Project-wide pytest fixtures."""

import os
from pathlib import Path

import pytest

# No local-server discovery on the real default ports in tests (tests that want it set their own).
os.environ.setdefault("PI_CODER_DISCOVERY_PORTS", "")

from pi_coder.ai.keys import ENV_API_KEYS  # noqa: E402
from tests.support.clients import close_shared_clients  # noqa: E402, F401  (fixture: closes the shared HTTP clients)
from tests.support.sse_server import sse_server  # noqa: E402, F401  (fixture: scripted model API server)

KEY_VARS = tuple(var for names in ENV_API_KEYS.values() for var in names)
"""Every environment variable that can hold a provider key (cleared by ``cwd``)."""


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``project`` folder; PI_CODER_HOME is ``home`` next to it and no provider key is set."""
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path / "home"))
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    project = tmp_path / "project"
    project.mkdir()
    return project


SLOW: dict[str, str] = {
    # Path prefix (from the repository root) -> why its tests are in the slow lane.
    "tests/tui/": "a real Textual app per test (pilot), tmux terminals, SVG snapshots",
    "tests/real_server/": "a real llama.cpp server",
    "tests/export/test_viewer_browser.py": "headless Chromium",
    "tests/mcp/": "real MCP servers in subprocesses",
    "tests/modes/test_json_pi16.py": "side by side with Pi 1.6",
    "tests/modes/test_rpc_pi16.py": "side by side with Pi 1.6 (Node)",
    "tests/modes/test_export_jsonl_pi16.py": "side by side with Pi 1.6",
    "tests/test_readme_parity.py": "Pi 1.6's help (Node)",
    # `pi` run as a process per test
    "tests/test_cli.py": "a pi process per test",
    "tests/test_cli_parity_flags.py": "a pi process per test",
    "tests/test_startup_imports.py": "a pi process per test",
    "tests/modes/": "a pi process per test",
    "tests/extensions/test_events.py": "a pi process per test",
    "tests/extensions/test_loading.py": "a pi process per test",
    "tests/extensions/test_registration_ui.py": "a pi process per test",
    "tests/extensions/test_events_catalogue.py": "a pi process per test",
    "tests/extensions/test_prompt_tools.py": "a pi process per test",
    "tests/extensions/test_builtin.py": "a pi process per test",
    "tests/extensions/test_help_flags.py": "a pi process per test",
    "tests/permissions/test_modes_rpc.py": "a pi process per test",
    "tests/permissions/test_sandbox.py": "bubblewrap processes",
    "tests/permissions/test_read_only_tools.py": "pi processes with extensions and MCP servers",
    "tests/session/test_crash.py": "processes killed at random points",
    "tests/export/test_export_html.py": "a pi process per test",
    "tests/core/test_attachments.py": "a pi process per test",
    "tests/hooks/": "pi processes with hook scripts; tmux",
    "tests/subagents/": "pi processes with child agents; Pi 1.6 side by side",
    "tests/packages/": "pip installs into package environments",
    "tests/sdk/test_examples.py": "the SDK examples as processes",
    "tests/extensions/test_examples.py": "the ported examples through pi processes",
    "tests/extensions/test_print_signals.py": "pi processes and signals",
    "tests/extensions/test_api_fixes.py": "a pi process per test",
    "tests/extensions/test_command_ctx_pi16.py": "a pi process per test",
    "tests/permissions/test_redaction.py": "pi processes",
    "tests/permissions/test_user_bash_rpc.py": "a pi process per test",
    "tests/permissions/test_git_hardening.py": "git and pi processes",
    "tests/permissions/test_sandbox_attack.py": "bubblewrap processes as root and nobody",
    "tests/permissions/test_confinement.py": "pi processes under bubblewrap",
    "tests/permissions/test_corpus_run.py": "each read-only command of the corpus run for real",
    "tests/session/test_pi16_compat.py": "a pi process per case",
}
"""The slow lane: ``pytest -m "not slow"`` (README, "Run the tests") leaves these out; plain ``pytest`` runs all."""

_ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: left out of the quick lane (tests/conftest.py SLOW lists why)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path.resolve().relative_to(_ROOT).as_posix()
        if any(path.startswith(prefix) for prefix in SLOW):
            item.add_marker(pytest.mark.slow)
