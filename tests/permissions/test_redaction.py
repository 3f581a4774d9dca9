"""Configured key values never reach a session file, an export, /debug or a log, whatever their shape.

Real ``pi -p`` runs against the scripted model server: the model "finds" the keys (a bash call
that prints them) and the session file must hold ``[redacted]`` instead, in the tool call's
arguments and in the tool result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

ENV_REF_KEY = "tk-envref-Q7w8e9r0t1y2u3i4"  # models.toml api_key = "$LOCAL_AUTH"
LITERAL_KEY = "ck-literal-A1s2d3f4g5h6j7k8"  # models.toml api_key of another provider
STORED_KEY = "gsk_stored9Z8x7c6v5b4n3m2"  # credentials.json
COMMAND_KEY = "ck-command-P0o9i8u7y6t5r4"  # models.toml api_key = "!printf ..." of the provider in use
CLI_KEY = "tk-cli-L1k2j3h4g5f6d7s8"  # --api-key


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server)
    home.write_models(
        '\n[providers.spare]\napi = "openai-completions"\nbase_url = "http://127.0.0.1:9"\n'
        f'api_key = "{LITERAL_KEY}"\nmodels = [{{ id = "m" }}]\n'
    )
    text = (home.home / "models.toml").read_text().replace('api_key = "none"', 'api_key = "$LOCAL_AUTH"', 1)
    (home.home / "models.toml").write_text(text)
    (home.home / "credentials.json").write_text(json.dumps({"groq": {"type": "api_key", "key": STORED_KEY}}))
    return home


def _leak(pi: PiHome, keys: list[str]) -> None:
    command = "echo " + " ".join(keys)
    pi.server.enqueue(Turn([ToolCall("bash", {"command": command}, id="c1")]), Turn([Text("Done: " + keys[0])]))


def _session_text(pi: PiHome) -> str:
    files = pi.session_files()
    assert files
    return "\n".join(f.read_text() for f in files)


def test_session_file_and_export_hold_no_configured_key(pi: PiHome) -> None:
    keys = [ENV_REF_KEY, LITERAL_KEY, STORED_KEY]
    _leak(pi, keys)
    run = pi.run("--model", "local/test-model", "-p", "find the keys", LOCAL_AUTH=ENV_REF_KEY)
    assert run.returncode == 0, run.stderr
    # the model saw them (the run is real), the file does not hold them
    assert ENV_REF_KEY in json.dumps(pi.server.requests[-1].json)
    text = _session_text(pi)
    for key in keys:
        assert key not in text, key
    assert "[redacted]" in text
    out = pi.project / "page.html"
    export = pi.run("--export", str(pi.session_files()[0]), str(out), LOCAL_AUTH=ENV_REF_KEY)
    assert export.returncode == 0, export.stderr
    page = out.read_text()
    assert not any(key in page for key in keys)


def test_command_and_cli_keys_are_redacted(pi: PiHome) -> None:
    text = (pi.home / "models.toml").read_text().replace('"$LOCAL_AUTH"', f'"!printf {COMMAND_KEY}"', 1)
    (pi.home / "models.toml").write_text(text)
    _leak(pi, [COMMAND_KEY])
    assert pi.run("--model", "local/test-model", "-p", "find it").returncode == 0
    assert COMMAND_KEY not in _session_text(pi)
    for f in pi.session_files():
        f.unlink()
    _leak(pi, [CLI_KEY])
    run = pi.run("--model", "local/test-model", "-p", "--api-key", CLI_KEY, "find it")
    assert run.returncode == 0, run.stderr
    assert CLI_KEY not in _session_text(pi)


def test_debug_report_redacts_every_known_key() -> None:
    from pi_coder.ai import secrets
    from pi_coder.core.debug_report import redact

    secrets.remember("tk-debug-Z1x2c3v4b5n6")
    assert redact("key tk-debug-Z1x2c3v4b5n6 and ck-given-1234567890", ["ck-given-1234567890"]) == (
        "key [redacted] and [redacted]"
    )
