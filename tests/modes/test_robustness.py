"""The real ``pi`` under hostile conditions: signals, broken configuration, unusable paths.

Each test is a regression test for a problem found by driving ``pi`` as a demanding user would:
a user mistake must end in one line on stderr and a non-zero exit (never a traceback), and a
stopped run must leave no process behind and a valid session file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.modes.pirun import PI, PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process groups")


@pytest.fixture
def pi_a(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, "anthropic")


def _wait_for_file(path: Path, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} was never written")


def _group_gone(pgid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _sleeper(pi: PiHome) -> tuple[str, Path]:
    """A bash command that records its process group id, then sleeps."""
    marker = pi.project / "pgid.txt"
    return f"echo $$ > {marker}; sleep 100", marker


def _session_lines(pi: PiHome) -> list[dict[str, object]]:
    [path] = pi.session_files()
    return [json.loads(line) for line in path.read_text().splitlines()]


# ---------------------------------------------------------------------------- signals


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_in_print_mode_kill_the_bash_command(pi_a: PiHome, sig: int) -> None:
    """The tool's process group does not outlive pi, and the session records the abort."""
    command, marker = _sleeper(pi_a)
    pi_a.server.enqueue(Turn([ToolCall("bash", {"command": command}, id="c1")]), Turn([Text("never")]))
    proc = subprocess.Popen(
        [*PI, "-p", "run it"], cwd=pi_a.project, env=pi_a.env(),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    pgid = int(_wait_for_file(marker))
    try:
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 128 + sig, err
        assert b"Traceback" not in err
        assert _group_gone(pgid), "the bash command survived pi"
    finally:
        if proc.poll() is None:
            proc.kill()
        _kill_group(pgid)
    lines = _session_lines(pi_a)
    results = [e["message"] for e in lines if e.get("type") == "message" and e["message"]["role"] == "toolResult"]  # type: ignore[index]
    assert results and results[0]["isError"] is True  # type: ignore[index]
    messages = [e for e in lines if e.get("type") == "message"]  # a checkpoint entry may follow
    assert messages[-1]["message"]["stopReason"] == "aborted"  # type: ignore[index]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_rpc_mode_stops_cleanly_on_a_signal(pi_a: PiHome, sig: int) -> None:
    """SIGTERM/SIGINT abort the run and its bash command; exit 128+N, no interpreter abort."""
    command, marker = _sleeper(pi_a)
    pi_a.server.enqueue(Turn([ToolCall("bash", {"command": command}, id="c1")]), Turn([Text("never")]))
    client = RpcClient(pi_a)
    pgid = 0
    try:
        assert client.call({"type": "prompt", "message": "run it"})["success"]
        pgid = int(_wait_for_file(marker))
        client.proc.send_signal(sig)
        assert client.proc.wait(30) == 128 + sig
        err = client.stderr()
        assert "Fatal Python error" not in err and "Traceback" not in err, err
        assert _group_gone(pgid), "the bash command survived pi"
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
        if pgid:
            _kill_group(pgid)
    assert [e for e in _session_lines(pi_a) if e.get("type") == "message"][-1]["message"]["stopReason"] == "aborted"  # type: ignore[index]


def test_backstop_kills_running_commands_when_sigterm_is_not_handled(tmp_path: Path) -> None:
    """Outside the print/RPC run loop (the TUI), SIGTERM still takes the command's group down."""
    marker = tmp_path / "pgid.txt"
    script = textwrap.dedent(
        f"""
        import asyncio
        from pi_coder.modes.stop_signals import install_backstop
        from pi_coder.tools import run_shell_command

        install_backstop()
        asyncio.run(run_shell_command("echo $$ > {marker}; sleep 100", {str(tmp_path)!r}))
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pgid = int(_wait_for_file(marker))
    try:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == -signal.SIGTERM
        assert _group_gone(pgid), "the command survived its parent"
    finally:
        if proc.poll() is None:
            proc.kill()
        _kill_group(pgid)


# ---------------------------------------------------------------------------- user mistakes


def _one_line_error(run: subprocess.CompletedProcess[str], pi: PiHome) -> str:
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert not (pi.home / "logs").exists(), "a user mistake wrote a crash log"
    return lines[0]


def test_session_that_is_a_folder(pi_a: PiHome) -> None:
    folder = pi_a.project / "somewhere"
    folder.mkdir()
    line = _one_line_error(pi_a.run("--session", f"{folder}/", "-p", "hi"), pi_a)
    assert "is a folder" in line and "session id" in line
    assert pi_a.server.requests == []


@pytest.mark.parametrize("flags", [["--session-dir", "{file}"], ["--session-dir", "{file}/sub", "-c"], ["--session", "{file}/s.jsonl"]])
def test_session_folder_that_cannot_hold_sessions_fails_before_the_run(pi_a: PiHome, flags: list[str]) -> None:
    """Not mid-run at the first save (that was an internal error after the model had answered)."""
    blocker = pi_a.project / "a-file"
    blocker.write_text("not a folder\n")
    pi_a.server.enqueue(Turn([Text("hello")]))
    args = [flag.format(file=blocker) for flag in flags]
    line = _one_line_error(pi_a.run(*args, "-p", "hi"), pi_a)
    assert "Cannot save sessions" in line and "is not a folder" in line and "--no-session" in line
    assert pi_a.server.requests == []
    assert pi_a.run(*args, "--no-session", "-p", "hi").returncode == 0


@pytest.mark.parametrize(
    ("api_key", "expected"),
    [
        ("$PI_QA_UNSET_VAR", "its api_key is $PI_QA_UNSET_VAR, which is not set. Export PI_QA_UNSET_VAR"),
        ("${PI_QA_UNSET_VAR}", "its api_key is $PI_QA_UNSET_VAR, which is not set"),
        ("!exit 3", "its api_key command failed or printed nothing"),
        ("!true", "its api_key command failed or printed nothing"),
    ],
)
def test_api_key_that_resolves_to_nothing_says_why(pi_a: PiHome, api_key: str, expected: str) -> None:
    """Not "add api_key to [providers.local]" when api_key is there but gives no key."""
    models = (pi_a.home / "models.toml").read_text().replace('api_key = "none"', f"api_key = {json.dumps(api_key)}")
    (pi_a.home / "models.toml").write_text(models)
    line = _one_line_error(pi_a.run("--model", "local/test-model", "-p", "hi"), pi_a)
    assert expected in line and "[providers.local]" in line
    assert pi_a.server.requests == []


def test_failing_key_command_output_is_never_shown(pi_a: PiHome) -> None:
    models = (pi_a.home / "models.toml").read_text().replace('api_key = "none"', 'api_key = "!echo sk-test-SECRET123; exit 1"')
    (pi_a.home / "models.toml").write_text(models)
    run = pi_a.run("--model", "local/test-model", "-p", "hi")
    assert run.returncode == 1
    assert "SECRET123" not in run.stderr + run.stdout


def _a_session(pi: PiHome) -> Path:
    pi.server.enqueue(Turn([Text("hello")]))
    assert pi.run("-p", "hi").returncode == 0
    [path] = pi.session_files()
    return path


def test_export_into_a_folder_uses_the_default_name(pi_a: PiHome, tmp_path: Path) -> None:
    source = _a_session(pi_a)
    out = tmp_path / "exports"
    out.mkdir()
    run = pi_a.run("--export", str(source), str(out))
    assert run.returncode == 0, run.stderr
    assert (out / f"pi-session-{source.stem}.html").is_file()


def test_export_errors_are_one_line(pi_a: PiHome, tmp_path: Path) -> None:
    source = _a_session(pi_a)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    line = _one_line_error(pi_a.run("--export", str(source), str(blocker / "out.html")), pi_a)
    assert line.startswith("pi: Cannot export") and str(blocker) in line
    line = _one_line_error(pi_a.run("--export", str(tmp_path)), pi_a)
    assert "is a folder" in line


def test_session_that_cannot_be_saved_mid_run_is_one_line(pi_a: PiHome) -> None:
    """A write failure (disk full, file replaced) is reported as such, not as an internal error."""
    sabotage = f'for f in {pi_a.home}/sessions/*/*.jsonl; do rm "$f"; mkdir "$f"; done'
    pi_a.server.enqueue(Turn([ToolCall("bash", {"command": sabotage}, id="c1")]), Turn([Text("done")]))
    line = _one_line_error(pi_a.run("-p", "go"), pi_a)
    assert "Cannot save the session" in line and "Is a directory" in line and "--no-session" in line


def test_unknown_session_id_says_how_to_find_one(pi_a: PiHome) -> None:
    line = _one_line_error(pi_a.run("--session", "deadbeef", "-p", "hi"), pi_a)
    assert "No session found matching 'deadbeef'" in line and "pi -r" in line


def test_rpc_rejects_an_empty_prompt_and_keeps_serving(pi_a: PiHome) -> None:
    pi_a.server.enqueue(Turn([Text("fine")]))
    client = RpcClient(pi_a)
    try:
        reply = client.call({"type": "prompt", "message": "  "})
        assert reply["success"] is False and "non-empty" in reply["error"]
        assert client.call({"type": "prompt", "message": "real"})["success"] is True
        assert client.event("agent_end")["type"] == "agent_end"
    finally:
        assert client.close() == 0
    assert len(pi_a.server.requests) == 1


# ---------------------------------------------------------------------------- secrets

SECRET = "sk-test-SECRET123"


def _key_from_env(pi: PiHome) -> None:
    models = (pi.home / "models.toml").read_text().replace('api_key = "none"', 'api_key = "$PI_QA_KEY"')
    (pi.home / "models.toml").write_text(models)


def _no_secret_anywhere(pi: PiHome, run: subprocess.CompletedProcess[str]) -> None:
    assert SECRET not in run.stdout + run.stderr
    for path in pi.home.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("key", [f"{SECRET}\nX-Injected: 1", f"{SECRET}\u00e9"])
def test_key_with_a_line_break_or_non_ascii_is_refused_without_showing_it(pi_a: PiHome, key: str) -> None:
    """httpx's "Illegal header value b'...\\n...'" used to carry the key past the redaction."""
    _key_from_env(pi_a)
    run = pi_a.run("-p", "hi", PI_QA_KEY=key)
    assert run.returncode == 1
    assert "contains a line break, a control character or a non-ASCII character" in run.stderr
    assert "[providers.local]" in run.stderr
    _no_secret_anywhere(pi_a, run)
    assert pi_a.server.requests == []


def test_key_with_surrounding_whitespace_is_trimmed(pi_a: PiHome) -> None:
    _key_from_env(pi_a)
    pi_a.server.enqueue(Turn([Text("ok")]))
    run = pi_a.run("-p", "hi", PI_QA_KEY=f" {SECRET}\r\n")
    assert run.returncode == 0, run.stderr
    assert pi_a.server.requests[0].headers["x-api-key"] == SECRET


def test_error_messages_scrub_escaped_forms_of_the_key() -> None:
    from pi_coder.ai.providers._common import StreamWriter
    from pi_coder.ai.types import Model

    writer = StreamWriter(Model(id="m", api="anthropic-messages", provider="p", base_url="http://127.0.0.1:9"))
    writer.secret = f"{SECRET}\tx\u00e9"
    writer.fail(f"Illegal header value {writer.secret.encode('utf-8', 'backslashreplace')!r} or {writer.secret!r}")
    assert "SECRET123" not in (writer.output.error_message or "")


def test_export_of_a_hand_damaged_session_still_writes_html(pi_a: PiHome, tmp_path: Path) -> None:
    source = _a_session(pi_a)
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    for entry in lines:
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "assistant":
            message["content"] = 5
            message["usage"] = {"input": [1], "output": "x", "cost": {"total": None}}
        elif isinstance(message, dict) and message.get("role") == "user":
            message["content"] = [{"type": "text", "text": ["not", "text"]}]
    source.write_text("".join(json.dumps(entry) + "\n" for entry in lines))
    out = tmp_path / "out.html"
    run = pi_a.run("--export", str(source), str(out))
    assert run.returncode == 0, run.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_session_that_is_not_a_regular_file_is_refused(pi_a: PiHome) -> None:
    """A FIFO blocked the start forever; a device (--session /dev/null) was replaced by a file."""
    fifo = pi_a.project / "pipe.jsonl"
    os.mkfifo(fifo)
    line = _one_line_error(pi_a.run("--session", str(fifo), "-p", "hi", timeout=20), pi_a)
    assert "is not a regular file" in line and "--no-session" in line
    assert fifo.is_fifo()
    assert pi_a.server.requests == []


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("127.0.0.1:8080/v1", "must start with http:// or https://"),
        ("ftp://127.0.0.1/v1", "must start with http:// or https://"),
        ("http://[::1/v1", "is not a valid URL"),
        ("http://127.0.0.1:99999/v1", "is not a valid URL"),
    ],
)
def test_bad_base_url_is_a_config_error_not_a_connection_error(pi_a: PiHome, base_url: str, expected: str) -> None:
    """It used to fail only at the request, after retries, as "Connection error: Invalid port"."""
    (pi_a.home / "models.toml").write_text(
        f'[providers.x]\napi = "openai-completions"\nbase_url = "{base_url}"\napi_key = "none"\nmodels = [{{ id = "m" }}]\n'
    )
    line = _one_line_error(pi_a.run("--model", "x/m", "-p", "hi"), pi_a)
    assert "models.toml" in line and "providers.x.base_url" in line and expected in line


# ---------------------------------------------------------------------------- runtime failures


def test_text_mode_notes_each_retry_on_stderr(pi_a: PiHome) -> None:
    """A retried request is not a silent wait (a dead local server took 40 s with no output)."""
    (pi_a.home / "settings.toml").write_text("[retry]\nbase_delay_ms = 10\n")
    pi_a.server.enqueue(Turn([Text("par")], error_event="Overloaded"), Turn([Text("recovered")]))
    run = pi_a.run("-p", "hi")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "recovered\n"
    assert "Overloaded" in run.stderr and "retry 1 of 3" in run.stderr


@pytest.mark.parametrize(("mode", "closed"), [("-p", 1), ("--mode=json", 1), ("--mode=rpc", 0)])
def test_closed_standard_streams_are_not_an_internal_error(pi_a: PiHome, mode: str, closed: int) -> None:
    """``pi -p x >&-`` (a daemon with no stdout) crashed on ``sys.stdout`` being None."""
    pi_a.server.enqueue(Turn([Text("hello")]))
    stdin = subprocess.DEVNULL if closed != 0 else None
    proc = subprocess.run(
        [*PI, mode, *(["hi"] if closed else [])], cwd=pi_a.project, env=pi_a.env(), stdin=stdin,
        stderr=subprocess.PIPE, timeout=60, preexec_fn=lambda: os.close(closed),  # noqa: PLW1509
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert b"internal error" not in proc.stderr
    for path in pi_a.session_files():
        for line in path.read_text().splitlines():
            json.loads(line)


def test_argument_that_is_not_utf8_reaches_the_model_as_replacement_characters(pi_a: PiHome) -> None:
    """Bytes of argv that are not UTF-8 became lone surrogates; JSON mode then lost the prompt."""
    pi_a.server.enqueue(Turn([Text("ok")]))
    proc = subprocess.run(
        [*PI, "--mode", "json", b"caf\xe9 \xff".decode("utf-8", "surrogateescape")],
        cwd=pi_a.project, env=pi_a.env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e for e in events if e["type"] == "message_end"][-1]["message"]["stopReason"] == "stop"
    assert pi_a.server.requests[0].json["messages"][0]["content"][0]["text"] == "caf\ufffd \ufffd"
    roles = [e["message"]["role"] for e in _session_lines(pi_a) if e.get("type") == "message"]  # type: ignore[index]
    assert roles == ["user", "assistant"]


def test_json_writer_escapes_lone_surrogates_instead_of_failing() -> None:
    import io

    from pi_coder.modes.jsonl import JsonLineWriter

    out = io.BytesIO()
    JsonLineWriter(out).write({"type": "x", "text": "a\udcffb"})
    assert json.loads(out.getvalue()) == {"type": "x", "text": "a\udcffb"}


def test_web_page_instead_of_the_api_says_to_check_base_url(pi_a: PiHome) -> None:
    """A 200 HTML page was read as a broken stream and retried for 14 s."""
    page = Turn(raw=b"<html><body>Welcome to nginx</body></html>", headers={"content-type": "text/html"})
    pi_a.server.enqueue(page, page, page, page)
    started = time.monotonic()
    run = pi_a.run("-p", "hi")
    assert run.returncode == 1
    assert "got a web page (text/html); check the provider's base_url" in run.stderr
    assert len(pi_a.server.requests) == 1 and time.monotonic() - started < 30


def test_404_page_says_to_check_base_url(pi_a: PiHome) -> None:
    from tests.support.sse_server import error_turn

    pi_a.server.enqueue(error_turn(404, body=b"<html>Not Found</html>", headers={"content-type": "text/html"}))
    run = pi_a.run("-p", "hi")
    assert run.returncode == 1
    assert "(404)" in run.stderr and "Check the provider's base_url." in run.stderr


def test_json_mode_stops_when_its_reader_goes_away(pi_a: PiHome) -> None:
    """``pi --mode json ... | head`` kept the model (and its tools) running with nobody reading."""
    pi_a.server.enqueue(Turn([Text("slow " * 200)], delay=0.05))
    proc = subprocess.Popen(
        [*PI, "--mode", "json", "hi"], cwd=pi_a.project, env=pi_a.env(),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        while b"message_update" not in proc.stdout.readline():
            pass
        proc.stdout.close()
        assert proc.wait(30) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
    assert pi_a.server.requests[0].wait_disconnected(10)
    assert not pi_a.server.requests[0].completed
    assert [e for e in _session_lines(pi_a) if e.get("type") == "message"][-1]["message"]["stopReason"] == "aborted"  # type: ignore[index]
