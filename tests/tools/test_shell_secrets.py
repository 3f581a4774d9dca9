"""What the agent's shell commands can see and leave behind: environment, output files, background processes."""

from __future__ import annotations

import os
import re
import signal as signals
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from pi_coder.errors import ToolError
from pi_coder.tools import ToolSettings, is_secret_name, run_shell_command, safe_environment
from pi_coder.tools._shell import sweep_old_output_files

from .conftest import ToolRunner, text_of

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shells and process groups")

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-secret-1",
    "OPENAI_API_KEY": "sk-openai-secret-2",
    "HF_TOKEN": "hf-secret-3",
    "GITHUB_TOKEN": "ghp-secret-4",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-5",
    "MY_SERVICE_PASSWORD": "pw-secret-6",
    "LOCAL_LLM_CRED": "local-secret-7",  # only known because models.toml reads it
}


def _env_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HARMLESS_SETTING", "visible")


@pytest.mark.usefixtures("secret_env")
async def test_env_in_the_bash_tool_shows_no_key(tmp_path: Path) -> None:
    """`env` through the bash tool lists none of the keys; ordinary variables and the agent markers stay."""
    runner = ToolRunner(tmp_path, ToolSettings(secret_env_names=("LOCAL_LLM_CRED",)))
    out = text_of(await runner("bash", command="env"))
    for value in SECRETS.values():
        assert value not in out
    seen = _env_lines(out)
    assert seen["HARMLESS_SETTING"] == "visible"
    assert seen["AI_AGENT"] == "pi" and seen["PI_CODING_AGENT"] == "true"
    assert "PATH" in seen and "HOME" in seen


@pytest.mark.usefixtures("secret_env")
async def test_allow_listed_variable_reaches_the_command(tmp_path: Path) -> None:
    """bash.env_allow passes a named variable (or a glob) through; the other keys stay hidden."""
    runner = ToolRunner(tmp_path, ToolSettings(env_allow=("GITHUB_TOKEN", "MY_*_PASSWORD")))
    seen = _env_lines(text_of(await runner("bash", command="env")))
    assert seen["GITHUB_TOKEN"] == "ghp-secret-4"
    assert seen["MY_SERVICE_PASSWORD"] == "pw-secret-6"
    assert "ANTHROPIC_API_KEY" not in seen and "HF_TOKEN" not in seen


@pytest.mark.usefixtures("secret_env")
async def test_session_markers_are_read_for_every_command(tmp_path: Path) -> None:
    """env_extra is called per command, so a model switch shows in the next command; it beats inherited values."""
    markers = {"PI_MODEL": "first", "PI_SESSION_ID": "abc"}
    runner = ToolRunner(tmp_path, ToolSettings(env_extra=lambda: dict(markers)))
    first = _env_lines(text_of(await runner("bash", command="env")))
    markers["PI_MODEL"] = "second"
    second = _env_lines(text_of(await runner("bash", command="env")))
    assert (first["PI_MODEL"], second["PI_MODEL"]) == ("first", "second")
    assert second["PI_SESSION_ID"] == "abc"


def test_secret_names() -> None:
    """Credential-looking names are caught; look-alikes that are not secrets are kept."""
    for name in ("ANTHROPIC_API_KEY", "GROQ_API_KEY", "HF_TOKEN", "AWS_SESSION_TOKEN", "CLIENT_SECRET",
                 "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS", "OPENAI_APIKEY"):  # fmt: skip
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "TOKENIZERS_PARALLELISM", "PASSWORD_STORE_DIR", "SSH_AUTH_SOCK", "KEYMAP"):
        assert not is_secret_name(name), name
    env = safe_environment({"A": "1", "X_TOKEN": "t"}, extra={"PI_MODEL": "m", "A": "2"})
    assert env == {"A": "2", "AI_AGENT": "pi", "PI_CODING_AGENT": "true", "PI_MODEL": "m"}


# ---------------------------------------------------------------------------- full-output files


async def test_output_file_is_private(tmp_path: Path) -> None:
    """The full-output file in the temp folder is readable by its owner only (0600)."""
    result = await run_shell_command("seq 1 5000", tmp_path)
    assert result.full_output_path is not None
    try:
        assert stat.S_IMODE(os.stat(result.full_output_path).st_mode) == 0o600
    finally:
        os.unlink(result.full_output_path)


def _read_capped(path: str, cap: int) -> bytes:
    """The file's bytes (it is deleted), after checking its size against the cap."""
    file = Path(path)
    try:
        assert 0 < file.stat().st_size <= cap
        return file.read_bytes()
    finally:
        file.unlink(missing_ok=True)


async def test_endless_output_stays_under_the_cap(tmp_path: Path) -> None:
    """`yes` until the timeout (a few seconds): the file never grows past its cap."""
    cap = 2 * 1024 * 1024
    runner = ToolRunner(tmp_path, ToolSettings(output_file_max_bytes=cap, bash_default_timeout=3))
    with pytest.raises(ToolError) as caught:
        await runner("bash", command="yes")
    message = str(caught.value)
    assert "Command timed out" in message and "only its last" in message
    data = _read_capped(re.findall(r"(/\S+/pi-bash-[0-9a-f]{16}\.log)", message)[-1], cap)
    assert data.endswith(b"y\n")


async def test_capped_file_holds_the_tail(tmp_path: Path) -> None:
    """30 MB of noise, then numbered lines: the capped file starts with a note and ends with the last lines."""
    cap = 1024 * 1024
    runner = ToolRunner(tmp_path, ToolSettings(output_file_max_bytes=cap))
    result = await runner("bash", command="yes | head -c 30000000; seq 1 200000 | sed 's/^/line-/'; echo the-end")
    path = result.details["fullOutputPath"]  # type: ignore[index]
    assert "only its last" in text_of(result) and path in text_of(result)
    data = _read_capped(path, cap)
    assert data.startswith(b"[Earlier output dropped")
    assert data.endswith(b"line-199999\nline-200000\nthe-end\n")
    assert b"y\ny\n" not in data  # the 30 MB head was dropped


def test_output_files_are_deleted_when_pi_exits(tmp_path: Path) -> None:
    """A real process that spilled output deletes its files at exit."""
    script = textwrap.dedent(
        f"""
        import asyncio
        from pi_coder.tools import run_shell_command
        result = asyncio.run(run_shell_command("seq 1 10000", {str(tmp_path)!r}))
        print(result.full_output_path, flush=True)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    path = Path(out.stdout.strip())
    assert path.name.startswith("pi-bash-")
    assert not path.exists()


def test_old_output_files_are_swept(tmp_path: Path) -> None:
    """Files a killed pi left behind are deleted once they are a day old; newer ones stay."""
    folder = Path(tempfile.gettempdir())
    old = folder / f"pi-bash-{os.getpid():08x}dead0001.log"
    new = folder / f"pi-bash-{os.getpid():08x}dead0002.log"
    for file in (old, new):
        file.write_text("output\n")
    day_ago = time.time() - 25 * 3600
    os.utime(old, (day_ago, day_ago))
    try:
        assert sweep_old_output_files(force=True) >= 1
        assert not old.exists()
        assert new.exists()
    finally:
        old.unlink(missing_ok=True)
        new.unlink(missing_ok=True)


# ---------------------------------------------------------------------------- background processes

_BACKGROUND_SCRIPT = """
import asyncio, sys
from pi_coder.tools import run_shell_command
command, keep = sys.argv[1], sys.argv[2] == "keep"
result = asyncio.run(run_shell_command(command, sys.argv[3], keep_background=keep))
print(result.exit_code, flush=True)
"""


def _alive(pid: int) -> bool:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _background_pid_after_exit(tmp_path: Path, command: str, mode: str) -> int:
    pidfile = tmp_path / "bg.pid"
    full = command.replace("PIDFILE", str(pidfile))
    subprocess.run(
        [sys.executable, "-c", _BACKGROUND_SCRIPT, full, mode, str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return int(pidfile.read_text().strip())


def _wait_dead(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("command", ["sleep 300 > /dev/null 2>&1 & echo $! > PIDFILE",
                                     "nohup sleep 300 > /dev/null 2>&1 & echo $! > PIDFILE"])  # fmt: skip
def test_background_processes_die_with_pi_by_default(tmp_path: Path, command: str) -> None:
    """`cmd &` and nohup are killed when the process that ran them exits (the safe default)."""
    pid = _background_pid_after_exit(tmp_path, command, "kill")
    try:
        assert _wait_dead(pid), "the background process outlived pi"
    finally:
        if _alive(pid):
            os.kill(pid, signals.SIGKILL)


def test_keep_background_leaves_them_running(tmp_path: Path) -> None:
    """With bash.keep_background a finished command's background process survives pi's exit."""
    pid = _background_pid_after_exit(tmp_path, "nohup sleep 300 > /dev/null 2>&1 & echo $! > PIDFILE", "keep")
    try:
        time.sleep(0.3)
        assert _alive(pid)
    finally:
        os.kill(pid, signals.SIGKILL)


def test_setsid_process_survives_by_default(tmp_path: Path) -> None:
    """The idiom the tool description gives for servers: `setsid cmd > log 2>&1 &` outlives pi."""
    command = (  # the command ends once the new session's shell has written its pid (not after a fixed time)
        "setsid sh -c 'echo $$ > PIDFILE; exec sleep 300' > /dev/null 2>&1 < /dev/null &"
        " while [ ! -s PIDFILE ]; do sleep 0.05; done"
    )
    pid = _background_pid_after_exit(tmp_path, command, "kill")
    try:
        time.sleep(0.3)
        assert _alive(pid)
    finally:
        os.kill(pid, signals.SIGKILL)


def test_description_names_the_setsid_idiom(tmp_path: Path) -> None:
    """The model is told that background processes die with pi and how to keep a server running."""
    description = ToolRunner(tmp_path).tools["bash"].description
    assert "setsid" in description and "killed when pi exits" in description
