"""Fixtures for package tests: a PiHome whose package installs never reach the network."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer, monkeypatch: pytest.MonkeyPatch) -> PiHome:
    home = PiHome(tmp_path, sse_server, "anthropic")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    # pip finds distributions only in the test's own folder: never an index, never the network.
    for name, value in {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_CONFIG_FILE": "/dev/null",
                        "PI_CODER_HOME": str(home.home)}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    return home
