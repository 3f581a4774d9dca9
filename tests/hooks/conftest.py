"""Fixtures for hook tests: a PiHome (both wire formats) with a private HOME, and hook file helpers."""

from __future__ import annotations

import json
import stat
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer


class HookHome(PiHome):
    """A PiHome whose ``pi`` runs with ``HOME`` in the test folder (``~/.claude`` is ours)."""

    def __init__(self, tmp_path: Path, server: SSEServer, wire: str) -> None:
        super().__init__(tmp_path, server, wire)
        self.user_home = tmp_path / "user"
        self.user_home.mkdir()

    def run(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        kwargs.setdefault("HOME", str(self.user_home))
        return super().run(*args, **kwargs)

    def script(self, name: str, body: str) -> Path:
        """An executable hook script in the project's ``.claude/hooks/``."""
        folder = self.project / ".claude" / "hooks"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    def claude_settings(
        self, hooks: dict[str, Any], *, where: str = "project", name: str = "settings.json"
    ) -> Path:
        """Write Claude Code's settings file with ``hooks`` (project ``.claude/`` or ``~/.claude/``)."""
        root = self.project if where == "project" else self.user_home
        path = root / ".claude" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"hooks": hooks}, indent=2), encoding="utf-8")
        return path


def hook(command: str, matcher: str | None = None, timeout: float | None = None) -> list[dict[str, Any]]:
    """One ``{matcher, hooks: [{type: "command", ...}]}`` entry list."""
    entry: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        entry["timeout"] = timeout
    group: dict[str, Any] = {"hooks": [entry]}
    if matcher is not None:
        group["matcher"] = matcher
    return [group]


@pytest.fixture(params=["anthropic", "openai"])
def pi(request: pytest.FixtureRequest, tmp_path: Path, sse_server: SSEServer) -> HookHome:
    return HookHome(tmp_path, sse_server, request.param)
