"""``/export file.jsonl`` writes a session Pi 1.6 continues with ``pi --session`` (and pi_coder too)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pi_coder.export.jsonl import export_branch_jsonl
from pi_coder.session.store import SessionStore
from tests.modes.pirun import PiHome, all_text
from tests.modes.rpc_capture import PI16, PI16_PROGRAM
from tests.support.sse_server import SSEServer, Text, Turn
from tests.tui.screens_support import branchy_session


def _exported(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    source = branchy_session(str(project))
    return export_branch_jsonl(SessionStore.open(source), tmp_path / "exported.jsonl")


def _branch_only(request: dict) -> None:
    text = all_text(request)
    assert "hello there" in text and "try plan B" in text and "Plan B is done." in text
    assert "try plan A" not in text and "Plan A is done." not in text


def test_pi_coder_continues_the_export(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    exported = _exported(tmp_path)
    sse_server.enqueue(Turn([Text("continued")]))
    run = pi.run("--session", str(exported), "--model", "local/test-model", "-p", "next")
    assert run.returncode == 0, run.stderr
    assert "continued" in run.stdout
    _branch_only(sse_server.requests[-1].json)


@pytest.mark.skipif(not PI16.is_dir(), reason="Pi 1.6 is not installed in /tmp/pi16")
def test_pi16_continues_the_export(tmp_path: Path, sse_server: SSEServer) -> None:
    exported = _exported(tmp_path)
    agent = tmp_path / "pi16home" / ".pi" / "agent"
    agent.mkdir(parents=True)
    model = {"id": "test-model", "contextWindow": 32768, "maxTokens": 4096}
    provider = {"baseUrl": sse_server.anthropic_base_url, "api": "anthropic-messages", "apiKey": "none", "models": [model]}
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.update(HOME=str(tmp_path / "pi16home"), PI_OFFLINE="1")
    sse_server.enqueue(Turn([Text("continued by pi")]))
    run = subprocess.run(
        [*PI16_PROGRAM, "--session", str(exported), "--model", "local/test-model", "-p", "next"],
        cwd=tmp_path / "project",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr
    assert "continued by pi" in run.stdout
    _branch_only(sse_server.requests[-1].json)
