"""Fixtures for extension tests: a PiHome and a helper writing extension files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, "anthropic")


def write_ext(folder: Path, name: str, body: str) -> Path:
    """Write ``<folder>/<name>.py`` holding ``body`` (dedented) and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path
