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
