"""Tools never destroy a file, never block on a FIFO or device, and say what went wrong in words.

Crash and size-limit cases run the real tool in a child process (SIGKILL, RLIMIT_FSIZE), so
what is checked is what a user's file looks like afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_coder.errors import ToolError

from .conftest import ToolRunner, text_of

CHILD = r"""
import asyncio, json, sys
from pi_coder.errors import ToolError
from pi_coder.tools import create_tool

name, cwd, params = sys.argv[1], sys.argv[2], json.loads(sys.stdin.readline())
if "repeat" in params:  # a huge content is built here rather than sent through the pipe
    params["content"] = params.pop("content") * params.pop("repeat")
tool = create_tool(name, cwd)

async def main():
    raw = tool.prepare_arguments(params) if tool.prepare_arguments else params
    args = tool.parameters.model_validate(raw)
    print("READY", flush=True)
    try:
        result = await tool.execute("c1", args, None, None)
    except ToolError as exc:
        print(json.dumps({"ok": False, "text": str(exc)}), flush=True)
        return
    print(json.dumps({"ok": True, "text": "".join(getattr(b, "text", "") for b in result.content)}), flush=True)

asyncio.run(main())
"""


def run_child(
    name: str, cwd: Path, params: dict[str, object], *, prefix: list[str] | None = None, fsize: int | None = None
) -> dict[str, object]:
    """Run one tool call in a fresh interpreter; its JSON outcome."""

    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    proc = subprocess.run(
        [*(prefix or []), sys.executable, "-c", CHILD, name, str(cwd)],
        input=json.dumps(params) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit,
    )
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and lines[:1] == ["READY"], proc.stderr
    return json.loads(lines[-1])


def temp_files(folder: Path) -> list[str]:
    return [name for name in os.listdir(folder) if name.endswith(".pi-tmp")]


# ---------------------------------------------------------------------------- read: texts


async def test_read_keeps_the_final_newline(run: ToolRunner, tmp_path: Path) -> None:
    """The model sees the file as it is: with its final newline, and without one when it has none."""
    (tmp_path / "nl.txt").write_text("a\nb\n")
    (tmp_path / "bare.txt").write_text("a\nb")
    (tmp_path / "blank.txt").write_text("\n")
    assert text_of(await run("read", path="nl.txt")) == "a\nb\n"
    assert text_of(await run("read", path="bare.txt")) == "a\nb"
    assert text_of(await run("read", path="blank.txt")) == "\n"
    assert text_of(await run("read", path="nl.txt", offset=2)) == "b\n"
    assert text_of(await run("read", path="nl.txt", limit=1)) == "a\n\n[1 more lines in file. Use offset=2 to continue.]"


async def test_read_missing_file_and_folder_are_sentences(run: ToolRunner, tmp_path: Path) -> None:
    with pytest.raises(ToolError) as missing:
        await run("read", path="nope.txt")
    assert str(missing.value) == "File not found: nope.txt"
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError) as folder:
        await run("read", path="d")
    assert str(folder.value) == "Path is a directory: d. Use ls (or bash) to list it."
    (tmp_path / "f").write_text("x")
    with pytest.raises(ToolError) as below_file:
        await run("read", path="f/inner.txt")
    assert str(below_file.value) == "Not a directory: a parent of f/inner.txt is a file"


def _without_dac_override() -> list[str]:
    """A command prefix under which file permissions apply (root bypasses them otherwise)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file permissions cannot be made to apply")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]


def test_read_permission_denied_is_a_sentence(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("x\n")
    secret.chmod(0)
    outcome = run_child("read", tmp_path, {"path": "secret.txt"}, prefix=_without_dac_override())
    assert outcome == {"ok": False, "text": "Permission denied: secret.txt"}


# ---------------------------------------------------------------------------- FIFOs and devices


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    yield path
    # Should a tool still be stuck in an open() of the FIFO (the bug), give it a peer so the
    # worker thread ends and the test run can exit.
    for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
        with contextlib.suppress(OSError):
            os.close(os.open(path, flags))


@pytest.mark.parametrize(
    ("tool", "params", "message"),
    [
        ("read", {}, "pipe is not a regular file (a FIFO); read only opens regular files"),
        ("write", {"content": "x"}, "pipe is not a regular file (a FIFO); write only replaces regular files."),
        ("edit", {"oldText": "a", "newText": "b"}, "pipe is not a regular file (a FIFO); edit only changes regular files."),
        ("grep", {"pattern": "x"}, "pipe is not a regular file (a FIFO); grep searches files and folders only."),
    ],
)
async def test_fifo_is_refused_at_once(run: ToolRunner, fifo: Path, tool: str, params: dict[str, str], message: str) -> None:
    """No writer on the other end: the tool answers within seconds instead of blocking for good."""
    started = time.monotonic()
    with pytest.raises(ToolError) as info:
        await asyncio.wait_for(run(tool, path="pipe", **params), timeout=30)
    assert time.monotonic() - started < 30
    assert str(info.value).startswith(message)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # write did not replace the FIFO with a file


async def test_devices_and_sockets_are_refused(run: ToolRunner, tmp_path: Path) -> None:
    for tool, params in (("read", {}), ("write", {"content": "x"})):
        with pytest.raises(ToolError, match=r"^/dev/null is not a regular file \(a character device\)"):
            await asyncio.wait_for(run(tool, path="/dev/null", **params), timeout=30)
    with pytest.raises(ToolError, match=r"^/dev/zero is not a regular file \(a character device\)"):
        await asyncio.wait_for(run("read", path="/dev/zero"), timeout=30)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "sock"))
        with pytest.raises(ToolError, match=r"^sock is not a regular file \(a socket\)"):
            await asyncio.wait_for(run("read", path="sock"), timeout=30)
    finally:
        sock.close()


@pytest.mark.parametrize(("tool", "params"), [("write", {"content": "x"}), ("edit", {"oldText": "a", "newText": "b"})])
async def test_a_pipe_named_through_dev_fd_is_not_a_regular_file(run: ToolRunner, tool: str, params: dict[str, str]) -> None:
    """``/dev/stdin`` in RPC mode is a symlink to ``pipe:[N]``: it is a FIFO, not a missing file (issue 33)."""
    read_end, write_end = os.pipe()
    try:
        with pytest.raises(ToolError) as info:
            await asyncio.wait_for(run(tool, path=f"/dev/fd/{read_end}", **params), timeout=30)
        assert str(info.value).startswith(f"/dev/fd/{read_end} is not a regular file (a FIFO)"), str(info.value)
    finally:
        os.close(read_end)
        os.close(write_end)


# ---------------------------------------------------------------------------- safe replacement


async def test_write_keeps_mode_and_symlink(run: ToolRunner, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o754)
    await run("write", path="run.sh", content="echo new\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o754
    assert script.read_text() == "echo new\n"

    real = tmp_path / "real.txt"
    real.write_text("old\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    await run("write", path="link.txt", content="through the link\n")
    assert (tmp_path / "link.txt").is_symlink() and os.readlink(tmp_path / "link.txt") == "real.txt"
    assert real.read_text() == "through the link\n"
    await run("edit", path="link.txt", oldText="through", newText="still through")
    assert (tmp_path / "link.txt").is_symlink() and real.read_text() == "still through the link\n"
    assert temp_files(tmp_path) == []


async def test_new_file_gets_the_umask_mode_and_edit_keeps_mode(run: ToolRunner, tmp_path: Path) -> None:
    umask = os.umask(0o027)
    try:
        await run("write", path="new.txt", content="x\n")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    (tmp_path / "tool.py").write_text("A = 1\n")
    (tmp_path / "tool.py").chmod(0o700)
    await run("edit", path="tool.py", oldText="A = 1", newText="A = 2")
    assert stat.S_IMODE((tmp_path / "tool.py").stat().st_mode) == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can hand a file to another owner")
async def test_write_keeps_owner_and_group(run: ToolRunner, tmp_path: Path) -> None:
    f = tmp_path / "owned.txt"
    f.write_text("old\n")
    os.chown(f, 12345, 23456)
    await run("write", path="owned.txt", content="new\n")
    await run("edit", path="owned.txt", oldText="new", newText="newer")
    st = f.stat()
    assert (st.st_uid, st.st_gid) == (12345, 23456)
    assert f.read_text() == "newer\n"


OLD = "".join(f"old line {i:05d}\n" for i in range(1300))  # about 20 KB


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_file_size_limit_leaves_the_original_untouched(tmp_path: Path, tool: str) -> None:
    """A real EFBIG (RLIMIT_FSIZE) mid-write: the original is intact, no temp file, one clear sentence."""
    target = tmp_path / "f.txt"
    target.write_text(OLD)
    big = "n" * 200_000
    params: dict[str, object] = (
        {"path": "f.txt", "content": big}
        if tool == "write"
        else {"path": "f.txt", "edits": [{"oldText": "old line 00000\n", "newText": big}]}
    )
    outcome = run_child(tool, tmp_path, params, fsize=64 * 1024)
    assert outcome == {
        "ok": False,
        "text": "File too large: f.txt (the size limit for files was reached); the file was not changed",
    }
    assert target.read_text() == OLD
    assert temp_files(tmp_path) == []


def test_sigkill_during_a_big_write_never_leaves_a_partial_file(tmp_path: Path) -> None:
    """Killed at the moment the write starts, five times: the old file or the whole new one, never a fragment."""
    target = tmp_path / "f.txt"
    piece = "new content line\n"
    repeat = 4_000_000  # 68 MB: long enough to be caught in the middle
    new_size = len(piece) * repeat
    caught_mid_write = 0
    for _ in range(5):
        target.write_text(OLD)
        before = target.stat()
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, "write", str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps({"path": "f.txt", "content": piece, "repeat": repeat}) + "\n")
            proc.stdin.close()
            assert proc.stdout.readline() == "READY\n"
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and proc.poll() is None:
                now = os.stat(target)
                if temp_files(tmp_path) or (now.st_ino, now.st_size) != (before.st_ino, before.st_size):
                    break
                time.sleep(0.001)
            alive = proc.poll() is None
            proc.kill()
        finally:
            proc.wait(timeout=30)
        size = target.stat().st_size
        if size == new_size:
            with open(target) as f:
                assert f.read(len(piece)) == piece
        else:
            assert target.read_text() == OLD, f"partial file of {size} bytes"
            caught_mid_write += alive
        for name in temp_files(tmp_path):  # a killed process cannot clean up; the next run must not care
            os.unlink(tmp_path / name)
    assert caught_mid_write >= 1, "no run was killed in the middle of the write; the test proves nothing"


def _kill_mid_write(folder: Path) -> str:
    """A child writing 68 MB to ``folder/f.txt``, SIGKILLed once its temporary file exists; that file's name."""
    for _ in range(5):
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, "write", str(folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps({"path": "f.txt", "content": "new content line\n", "repeat": 4_000_000}) + "\n")
            proc.stdin.close()
            assert proc.stdout.readline() == "READY\n"
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and proc.poll() is None and not temp_files(folder):
                time.sleep(0.001)
            proc.kill()
        finally:
            proc.wait(timeout=30)
        left = temp_files(folder)
        if left:
            return left[0]
        (folder / "f.txt").unlink(missing_ok=True)
    pytest.fail("no run was killed while its temporary file existed; the test proves nothing")


def test_the_next_write_sweeps_what_a_killed_write_left(tmp_path: Path) -> None:
    """SIGKILL mid-write leaves a big ``.pi-tmp``; the next write in that folder removes it, and only
    stale files of pi's own naming: not a live writer's (it holds a lock), not a fresh one, not
    other names (issue 33)."""
    folder = tmp_path / "work"
    folder.mkdir()
    left = _kill_mid_write(folder)
    live = folder / ".g.txt.0123456789ab.pi-tmp"
    fresh = folder / ".h.txt.ba9876543210.pi-tmp"
    others = [folder / ".i.txt.pi-tmp", folder / "notes.pi-tmp", folder / ".j.txt.0123456789ab.tmp"]
    for path in (live, fresh, *others):
        path.write_text("x")
    old = time.time() - 60
    for path in (folder / left, live, *others):
        os.utime(path, (old, old))  # as if the kill was a minute ago
    # Fresh whatever the load: starting the lock holder and the child pi can take longer than
    # MIN_AGE (2 s) on a busy machine, so its time is set ahead rather than left at "now".
    ahead = time.time() + 600
    os.utime(fresh, (ahead, ahead))
    holder = subprocess.Popen(  # another pi still writing: holds its temporary file locked
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX);"
         " print('locked', flush=True); time.sleep(60)", str(live)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        outcome = run_child("write", folder, {"path": "other.txt", "content": "hello"})
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert outcome["ok"], outcome
    assert sorted(temp_files(folder)) == sorted(p.name for p in (live, fresh, others[0], others[1]))
    assert all(p.exists() for p in others)
    assert (folder / "other.txt").read_text() == "hello"
