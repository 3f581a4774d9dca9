"""The real ``pi`` keeps keys to itself: process listing, command environments, output files.

Each test runs ``pi`` against the scripted server with a throw-away ``PI_CODER_HOME``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.modes.pirun import PI, PiHome, RpcClient, all_text
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and process groups")

KEY = "sk-test-SECRET-d41d8cd98f00b204"
ENV_KEYS = {"ANTHROPIC_API_KEY": "sk-ant-ENVSECRET-1", "OPENAI_API_KEY": "sk-ENVSECRET-2",
            "GITHUB_TOKEN": "ghp_ENVSECRET_3", "AWS_SECRET_ACCESS_KEY": "ENVSECRET-4"}  # fmt: skip


class KeyedHome(PiHome):
    """A PiHome whose runs also get ``extra_env`` (keys the test puts in pi's environment)."""

    extra_env: dict[str, str] = {}

    def env(self, **extra: str) -> dict[str, str]:
        return super().env(**self.extra_env) | extra


@pytest.fixture
def pi_a(tmp_path: Path, sse_server: SSEServer) -> KeyedHome:
    home = KeyedHome(tmp_path, sse_server, "anthropic")
    home.extra_env = dict(ENV_KEYS)
    _settings(home)
    return home


def _settings(home: PiHome, extra: str = "") -> None:
    """settings.toml starting on the scripted model (the keys in the environment would pick Anthropic's)."""
    (home.home / "settings.toml").write_text(f'default_provider = "local"\ndefault_model = "test-model"\n{extra}')


def _tool_result_text(request_json: dict[str, object]) -> str:
    return all_text(request_json)


def _alive(pid: int) -> bool:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def test_api_key_flag_is_not_in_the_process_listing(pi_a: KeyedHome) -> None:
    """While a run streams, /proc/PID/cmdline of `pi --api-key KEY` shows only "pi"; the key is still used."""
    pi_a.server.enqueue(Turn([Text("slow answer")], hang=4))
    proc = subprocess.Popen(
        [*PI, "--model", "local/test-model", "--api-key", KEY, "-p", "hello"], cwd=pi_a.project, env=pi_a.env(),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert pi_a.server.wait_for_requests(1, timeout=30)
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        ps = subprocess.run(["ps", "-ww", "-o", "args=", "-p", str(proc.pid)], capture_output=True, text=True).stdout
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert KEY.encode() not in cmdline
    assert cmdline.rstrip(b"\0") == b"pi"
    assert KEY not in ps and ps.strip() == "pi"
    assert proc.returncode == 0, err
    assert b"slow answer" in out
    assert pi_a.server.requests[0].headers.get("x-api-key") == KEY


def test_bash_tool_sees_no_key_and_the_agent_markers(pi_a: KeyedHome) -> None:
    """`env` and the parent's command line through the real bash tool: no key; markers and the allow-listed variable are there."""
    _settings(pi_a, '[bash]\nenv_allow = ["GITHUB_TOKEN"]\n')
    command = "env; echo \"PARENT=[$(tr '\\0' ' ' < /proc/$PPID/cmdline | sed 's/ *$//')]\""
    pi_a.server.enqueue(Turn([ToolCall("bash", {"command": command}, id="c1")]), Turn([Text("done")]))
    result = pi_a.run("--model", "local/test-model", "--api-key", KEY, "--thinking", "low", "-p", "show env")
    assert result.returncode == 0, result.stderr
    tool_output = json.loads(_tool_result_text(pi_a.server.requests[1].json))
    text = json.dumps(tool_output)
    assert KEY not in text
    for name, value in ENV_KEYS.items():
        assert (value in text) == (name == "GITHUB_TOKEN"), name
    [session] = pi_a.session_files()
    header = json.loads(session.read_text().splitlines()[0])
    for marker in ("AI_AGENT=pi", "PI_CODING_AGENT=true", f"PI_SESSION_ID={header['id']}",
                   f"PI_SESSION_FILE={session}", "PI_PROVIDER=local", "PI_MODEL=test-model"):  # fmt: skip
        assert marker in text, marker
    assert "PI_REASONING_LEVEL=" in text
    assert "PARENT=[pi]" in text


def test_bang_command_over_rpc_sees_no_key(pi_a: KeyedHome) -> None:
    """A user `!` command (RPC `bash`) gets the same clean environment with the markers."""
    client = RpcClient(pi_a)
    try:
        response = client.call({"type": "bash", "command": "env"}, timeout=30)
        assert response["success"] is True, response
        output = response["data"]["output"]
        for value in ENV_KEYS.values():
            assert value not in output
        assert "AI_AGENT=pi" in output and "PI_CODING_AGENT=true" in output and "PI_SESSION_ID=" in output
    finally:
        client.close()


def test_output_file_is_deleted_when_pi_exits(pi_a: KeyedHome) -> None:
    """The bash tool's full-output file (0600 while pi runs) is gone after `pi -p` ends."""
    pi_a.server.enqueue(Turn([ToolCall("bash", {"command": "seq 1 100000"}, id="c1")]), Turn([Text("done")]))
    result = pi_a.run("-p", "count")
    assert result.returncode == 0, result.stderr
    [session] = pi_a.session_files()
    results = [json.loads(line)["message"] for line in session.read_text().splitlines()
               if '"toolResult"' in line]  # fmt: skip
    path = results[0]["details"]["fullOutputPath"]
    assert path.startswith("/") and "pi-bash-" in path
    assert not os.path.exists(path)


@pytest.mark.parametrize("keep", [False, True])
def test_keep_background_setting(pi_a: KeyedHome, keep: bool) -> None:
    """By default a `nohup cmd &` the agent started dies with pi; `bash.keep_background = true` keeps it."""
    if keep:
        _settings(pi_a, "[bash]\nkeep_background = true\n")
    pidfile = pi_a.project / "bg.pid"
    command = f"nohup sleep 300 > /dev/null 2>&1 & echo $! > {pidfile}"
    pi_a.server.enqueue(Turn([ToolCall("bash", {"command": command}, id="c1")]), Turn([Text("started")]))
    result = pi_a.run("-p", "start it")
    assert result.returncode == 0, result.stderr
    pid = int(pidfile.read_text())
    try:
        deadline = time.monotonic() + 10
        while not keep and _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        assert _alive(pid) == keep
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("variable", ["PI_CODER_SESSION_DIR", "PI_CODING_AGENT_SESSION_DIR"])
def test_session_folder_from_the_environment(pi_a: KeyedHome, tmp_path: Path, variable: str) -> None:
    """The session file goes to the folder the variable names (Pi's name works too)."""
    folder = tmp_path / "elsewhere"
    pi_a.server.enqueue(Turn([Text("hi")]))
    result = pi_a.run("-p", "hello", **{variable: str(folder)})
    assert result.returncode == 0, result.stderr
    assert len(list(folder.glob("*.jsonl"))) == 1
    assert pi_a.session_files() == []
