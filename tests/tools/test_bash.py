"""The bash tool and run_shell_command with real processes."""

from __future__ import annotations

import asyncio
import os
import re
import signal as signals
import time
from pathlib import Path

import pytest

from pi_coder.agent.types import AgentToolResult
from pi_coder.ai.abort import AbortController
from pi_coder.errors import ToolError
from pi_coder.tools import ToolSettings, run_shell_command

from .conftest import ToolRunner, text_of


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group, read from /proc."""
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            data = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(name))
    return members


def wait_group_gone(pgid: int, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not group_members(pgid):
            return True
        time.sleep(0.05)
    return False


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signals.SIGKILL)
    except ProcessLookupError:
        pass


def read_and_remove(path: str | Path) -> str:
    """The text of a spilled output file, which is deleted."""
    file = Path(path)
    try:
        return file.read_text()
    finally:
        file.unlink()


def first_int(text: str) -> int:
    match = re.search(r"\d+", text)
    assert match is not None, text
    return int(match.group())


async def test_output_merged_in_order(run: ToolRunner, tmp_path: Path) -> None:
    result = await run("bash", command="echo a; echo b >&2; echo c; pwd")
    assert text_of(result) == f"a\nb\nc\n{tmp_path}"
    assert result.details is None


async def test_no_output_and_stdin_is_devnull(run: ToolRunner) -> None:
    start = time.monotonic()
    result = await run("bash", command="cat")
    assert text_of(result) == "(no output)"
    assert time.monotonic() - start < 30  # cat reading a terminal or pipe would never end


async def test_nonzero_exit_is_an_error(run: ToolRunner) -> None:
    with pytest.raises(ToolError) as info:
        await run("bash", command="echo oops; exit 3")
    assert str(info.value) == "oops\n\nCommand exited with code 3"
    with pytest.raises(ToolError) as info:
        await run("bash", command="false")
    assert str(info.value) == "(no output)\n\nCommand exited with code 1"


async def test_ansi_and_control_characters_are_stripped(run: ToolRunner) -> None:
    result = await run("bash", command=r"printf '\033[1;31mred\033[0m \033]0;title\007x\bz\r\nnext\n'")
    assert text_of(result) == "red xz\nnext"


async def test_timeout_kills_the_whole_tree(tmp_path: Path) -> None:
    """`sleep 100 & sleep 100; wait` times out and no process of its group survives."""
    runner = ToolRunner(tmp_path)
    start = time.monotonic()
    with pytest.raises(ToolError) as info:
        await runner("bash", command="echo $$; sleep 100 & sleep 100; wait", timeout=2)  # time to echo under load
    assert time.monotonic() - start < 30  # not the 100 s of the sleeps
    message = str(info.value)
    assert message.endswith("\n\nCommand timed out after 2 seconds")
    pgid = first_int(message)
    try:
        assert wait_group_gone(pgid), group_members(pgid)
    finally:
        kill_group(pgid)


async def test_abort_returns_at_once_even_if_term_is_ignored(run: ToolRunner, tmp_path: Path) -> None:
    controller = AbortController()
    ready = tmp_path / "ready"
    command = f"echo $$; trap '' TERM; touch {ready}; sleep 100"
    task = asyncio.ensure_future(run("bash", signal=controller.signal, command=command))
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:  # $$ echoed and TERM ignored
        await asyncio.sleep(0.02)
    aborted_at = time.monotonic()
    controller.abort()
    with pytest.raises(ToolError) as info:
        await task
    assert time.monotonic() - aborted_at < 30  # not the 100 s of the sleep that ignores TERM
    assert str(info.value).endswith("\n\nCommand aborted")
    pgid = first_int(str(info.value))
    try:
        assert wait_group_gone(pgid, timeout=6.0), "SIGKILL escalation did not clean the group"
    finally:
        kill_group(pgid)


async def test_background_grandchild_holding_stdout_does_not_hang(run: ToolRunner) -> None:
    start = time.monotonic()
    result = await run("bash", command="echo $$; (sleep 30; echo late) & echo early")
    elapsed = time.monotonic() - start
    text = text_of(result)
    kill_group(first_int(text))
    assert text.endswith("early") and "late" not in text
    assert elapsed < 20  # not the 30 s of the grandchild


async def test_one_megabyte_on_one_line(run: ToolRunner) -> None:
    result = await run("bash", command="head -c 1048576 /dev/zero | tr '\\0' x")
    text = text_of(result)
    body, notice = text.split("\n\n")
    assert body == "x" * 51200
    match = re.fullmatch(r"\[Showing last 50\.0KB of line 1 \(line is 1\.0MB\)\. Full output: (\S+)\]", notice)
    assert match is not None, notice
    assert result.details["fullOutputPath"] == match.group(1)
    assert result.details["truncation"]["lastLinePartial"] is True
    assert read_and_remove(match.group(1)) == "x" * 1048576


async def test_tail_truncation_by_lines_spills_full_output(run: ToolRunner) -> None:
    result = await run("bash", command="seq 1 3000")
    text = text_of(result)
    body, notice = text.split("\n\n")
    assert body.split("\n")[0] == "1001" and body.endswith("3000")
    match = re.fullmatch(r"\[Showing lines 1001-3000 of 3000\. Full output: (\S+)\]", notice)
    assert match is not None, notice
    assert read_and_remove(match.group(1)).split() == [str(i) for i in range(1, 3001)]


async def test_tail_truncation_by_bytes_notice(run: ToolRunner) -> None:
    result = await run("bash", command="for i in $(seq 1 1000); do printf '%099d\\n' $i; done")
    body, notice = text_of(result).split("\n\n")
    assert re.fullmatch(r"\[Showing lines 489-1000 of 1000 \(50\.0KB limit\)\. Full output: \S+\]", notice), notice
    assert len(body.encode()) <= 51200
    read_and_remove(result.details["fullOutputPath"])


async def test_binary_output_is_sanitised(run: ToolRunner) -> None:
    result = await run("bash", command="head -c 30000 /dev/urandom")
    text = text_of(result)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text)
    if result.details and "fullOutputPath" in result.details:
        read_and_remove(result.details["fullOutputPath"])


async def test_live_updates_are_throttled(run: ToolRunner) -> None:
    updates: list[AgentToolResult] = []
    start = time.monotonic()
    result = await run(
        "bash", on_update=updates.append, command="for i in $(seq 1 40); do echo line$i; sleep 0.02; done"
    )
    elapsed = time.monotonic() - start
    assert text_of(result).endswith("line40")
    assert 2 <= len(updates) <= elapsed / 0.1 + 2
    texts = [text_of(u) for u in updates]
    assert all(t.startswith("line1\n") or t == "line1" for t in texts)
    assert [len(t) for t in texts] == sorted(len(t) for t in texts)


async def test_default_and_maximum_timeout(tmp_path: Path) -> None:
    runner = ToolRunner(tmp_path, ToolSettings(bash_default_timeout=0.3, bash_max_timeout=0.6))
    with pytest.raises(ToolError, match=r"^Command timed out after 0\.3 seconds$"):
        await runner("bash", command="sleep 5")
    with pytest.raises(ToolError, match=r"^Command timed out after 0\.6 seconds$"):
        await runner("bash", command="sleep 5", timeout=500)
    description = runner.tools["bash"].description
    assert "default 0.3, maximum 0.6" in description


async def test_custom_shell_and_prefix(tmp_path: Path) -> None:
    runner = ToolRunner(tmp_path, ToolSettings(shell_path="/bin/sh", shell_command_prefix="GREETING=hi"))
    assert text_of(await runner("bash", command='echo "$GREETING"')) == "hi"
    missing = ToolRunner(tmp_path, ToolSettings(shell_path="/no/such/shell"))
    with pytest.raises(ToolError, match="^Custom shell path not found: /no/such/shell$"):
        await missing("bash", command="true")


async def test_run_shell_command_result(tmp_path: Path) -> None:
    chunks: list[str] = []
    result = await run_shell_command("echo out; kill -9 $$", tmp_path, on_output=chunks.append)
    assert result.exit_code == 137 and not result.cancelled and not result.timed_out
    assert result.output == "out" and "".join(chunks) == "out\n"
    with pytest.raises(ToolError, match="Working directory does not exist"):
        await run_shell_command("true", tmp_path / "missing")


async def test_run_shell_command_cancelled_by_task_cancel(tmp_path: Path) -> None:
    """Cancelling the awaiting task also terminates the process group."""
    marker = tmp_path / "pid"
    task = asyncio.ensure_future(run_shell_command(f"echo $$ > {marker}; sleep 100", tmp_path))
    for _ in range(100):
        if marker.exists() and marker.read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pgid = int(marker.read_text())
    try:
        assert wait_group_gone(pgid)
    finally:
        kill_group(pgid)
