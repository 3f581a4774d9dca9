"""Running shell commands: process groups, merged output, timeouts, abort and output spilling.

Used by the bash tool and by the core for the user's ``!cmd`` / ``!!cmd``. The command runs
as ``<shell> -c <command>`` in its own session (process group), stdin from /dev/null, stdout
and stderr on one pipe (arrival order). The call returns when the main process exits, after
draining what is left in the pipe for a short grace period, so a background grandchild that
keeps the pipe open cannot hang it. Timeout and abort terminate the whole group (SIGTERM,
then SIGKILL after two seconds). When pi exits, every group still running is killed, and so are
the processes a finished command left behind (``cmd &``, nohup) unless ``keep_background``;
``setsid`` starts a new group, which is never tracked.

Output beyond the limits is spilled to ``<tmp>/pi-bash-<16 hex>.log``: mode 0600, capped at
``max_file_bytes`` (past it the file keeps the tail), deleted when pi exits; files left by a
killed pi are swept once they are a day old.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import collections
import contextlib
import logging
import os
import re
import secrets
import shutil
import signal as signals
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO

from pi_coder.ai.abort import AbortSignal
from pi_coder.errors import ToolError
from pi_coder.tools._truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    format_size,
    truncate_tail,
)

__all__ = [
    "ShellResult",
    "kill_running_commands",
    "remove_output_files",
    "resolve_shell",
    "run_shell_command",
    "sanitize_output",
    "sweep_old_output_files",
]

_log = logging.getLogger(__name__)

DRAIN_GRACE = 0.25
"""Seconds to keep reading after the main process exited (late output of its children)."""
KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL for the process group."""
_TERM_WAIT = 0.25
"""Seconds an abort or timeout waits for the main process before returning anyway."""
DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024
"""Default cap of a full-output file."""
OUTPUT_FILE_MAX_AGE = 24 * 3600.0
"""Seconds after which a full-output file left by an earlier pi is deleted."""
OUTPUT_FILE_PREFIX = "pi-bash-"


@dataclass(slots=True, kw_only=True)
class ShellResult:
    """The outcome of ``run_shell_command``."""

    output: str
    """Sanitised output, tail-truncated (2,000 lines / 50 KB); no notices appended."""
    exit_code: int | None
    """The shell's exit status (128+N when killed by signal N); ``None`` if cancelled or timed out."""
    cancelled: bool = False
    timed_out: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    """Temporary file holding the whole output, written once the output passed the limits."""
    full_output_capped: bool = False
    """The output outgrew the file's cap: the file holds only its tail (``full_output_bytes``)."""
    full_output_bytes: int = 0
    """Size of the full-output file."""
    truncation: TruncationResult | None = None
    last_line_bytes: int = 0
    """UTF-8 size of the output's last line (for the partial-line notice)."""


def resolve_shell(shell_path: str | None = None) -> str:
    """The shell to run: ``shell_path`` (must exist), else bash, else sh.

    Raises:
        ToolError: ``shell_path`` is set but does not exist.
    """
    if shell_path:
        if os.path.isfile(shell_path) or shutil.which(shell_path):
            return shell_path
        raise ToolError(f"Custom shell path not found: {shell_path}")
    if os.path.isfile("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or shutil.which("sh") or "/bin/sh"


# ------------------------------------------------------------------ output sanitising

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS, SOS, PM, APC
    r"|\x1b[ -/]+[0-~]"  # nF escapes (charset selection)
    r"|\x1b[0-~]"  # two-character escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufff9-\ufffb]")


def sanitize_output(text: str) -> str:
    """Strip ANSI escapes and control characters; CRLF and lone CR become LF."""
    text = _ANSI.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


class _Sanitizer:
    """Incremental ``sanitize_output``: holds back escapes and CRs split across chunks."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str) -> str:
        buf = self._pending + text
        cut = len(buf)
        esc = buf.rfind("\x1b", max(0, cut - 256))
        if esc >= 0 and not _ANSI.match(buf, esc):
            cut = esc
        if cut and buf[cut - 1] == "\r":
            cut -= 1
        self._pending = buf[cut:]
        return sanitize_output(buf[:cut])

    def flush(self) -> str:
        buf, self._pending = self._pending, ""
        return sanitize_output(buf)


class _Collector:
    """Decodes and sanitises output; keeps a rolling tail and spills everything to a file."""

    def __init__(
        self, on_output: Callable[[str], object] | None, max_lines: int, max_bytes: int,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:  # fmt: skip
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._sanitizer = _Sanitizer()
        self._on_output = on_output
        self._max_lines = max_lines
        self._max_bytes = max_bytes
        self._tail: deque[str] = deque()
        self._tail_chars = 0
        self._file: IO[bytes] | None = None
        self._max_file_bytes = max(max_file_bytes, 4096)
        self.full_output_path: str | None = None
        self.file_bytes = 0
        self.file_capped = False
        self.total_bytes = 0
        self.newlines = 0
        self.changed = False
        self._line_bytes = 0
        self._prev_line_bytes = 0

    def feed(self, data: bytes) -> None:
        self._add(self._sanitizer.feed(self._decoder.decode(data)))

    def finish(self) -> None:
        self._add(self._sanitizer.feed(self._decoder.decode(b"", final=True)) + self._sanitizer.flush())
        if self._file is None and self.snapshot().truncated:
            self._open_spill_file()  # truncated by lines only: nothing was dropped, spill it all now
        if self._file is not None:
            self._file.close()
            self._file = None

    def _add(self, text: str) -> None:
        if not text:
            return
        self.total_bytes += _nbytes(text)
        self.newlines += text.count("\n")
        last_nl = text.rfind("\n")
        if last_nl < 0:
            self._line_bytes += _nbytes(text)
        else:
            prev_nl = text.rfind("\n", 0, last_nl)
            if prev_nl < 0:
                self._prev_line_bytes = self._line_bytes + _nbytes(text[:last_nl])
            else:
                self._prev_line_bytes = _nbytes(text[prev_nl + 1 : last_nl])
            self._line_bytes = _nbytes(text[last_nl + 1 :])
        if self._file is None and (self.total_bytes > self._max_bytes or self.newlines > self._max_lines):
            self._open_spill_file()
        if self._file is not None:
            self._write_file(text)
        self._tail.append(text)
        self._tail_chars += len(text)
        if self._tail_chars > 4 * self._max_bytes:
            kept = "".join(self._tail)[-2 * self._max_bytes :]
            self._tail.clear()
            self._tail.append(kept)
            self._tail_chars = len(kept)
        self.changed = True
        if self._on_output is not None:
            try:
                self._on_output(text)
            except Exception:
                _log.exception("on_output callback failed")

    def _open_spill_file(self) -> None:
        sweep_old_output_files()
        path = os.path.join(tempfile.gettempdir(), f"{OUTPUT_FILE_PREFIX}{secrets.token_hex(8)}.log")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        self._file = open(fd, "r+b")  # noqa: SIM115
        _output_files.add(path)
        self.full_output_path = path
        for text in self._tail:  # everything so far: nothing was dropped yet
            self._write_file(text)

    def _write_file(self, text: str) -> None:
        assert self._file is not None
        data = text.encode("utf-8", "surrogatepass")
        self._file.write(data)
        self.file_bytes += len(data)
        if self.file_bytes > self._max_file_bytes:
            self._keep_file_tail()

    def _keep_file_tail(self) -> None:
        """Cut the file down to the last half of its cap, starting at a line (or character) start."""
        assert self._file is not None
        keep = self._max_file_bytes // 2
        self._file.seek(self.file_bytes - keep)
        data = self._file.read(keep)
        newline = data.find(b"\n", 0, len(data) - 1)
        start = newline + 1 if newline >= 0 else 0
        while start < len(data) and 0x80 <= data[start] < 0xC0:  # inside a UTF-8 sequence
            start += 1
        header = (
            f"[Earlier output dropped: this file keeps the last {format_size(self._max_file_bytes // 2)}"
            f" to {format_size(self._max_file_bytes)} of the output]\n"
        ).encode()
        self._file.seek(0)
        self._file.write(header)
        self._file.write(memoryview(data)[start:])
        self._file.truncate()
        self.file_bytes = len(header) + len(data) - start
        self.file_capped = True

    @property
    def last_line_bytes(self) -> int:
        return self._line_bytes if self._line_bytes else self._prev_line_bytes

    def snapshot(self) -> TruncationResult:
        tail = "".join(self._tail)
        total_bytes = self.total_bytes
        newlines = self.newlines
        if tail.endswith("\n"):
            tail = tail[:-1]
            total_bytes -= 1
            newlines -= 1
        total_lines = newlines + 1 if total_bytes > 0 else 0
        if total_lines == 0:
            return truncate_tail("", max_lines=self._max_lines, max_bytes=self._max_bytes)
        return truncate_tail(
            tail, max_lines=self._max_lines, max_bytes=self._max_bytes,
            total_lines=total_lines, total_bytes=total_bytes,
        )  # fmt: skip


# ------------------------------------------------------------------ process groups

_live_groups: set[int] = set()
_output_files: set[str] = set()
_atexit_registered = False
_swept = False


def kill_running_commands() -> None:
    """pi is ending (exit, SIGTERM, SIGHUP): SIGKILL the tracked process groups, delete the output files.

    Tracked are the groups of commands still running and, unless the command ran with
    ``keep_background``, those of finished commands whose background processes live on.
    """
    for pgid in list(_live_groups):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signals.SIGKILL)
    remove_output_files()


def remove_output_files() -> None:
    """Delete the full-output files this process wrote."""
    for path in list(_output_files):
        with contextlib.suppress(OSError):
            os.unlink(path)
        _output_files.discard(path)


def sweep_old_output_files(max_age: float = OUTPUT_FILE_MAX_AGE, *, force: bool = False) -> int:
    """Delete this user's full-output files older than ``max_age`` seconds (once per process).

    A pi that was killed could not delete its files; this keeps them from piling up.

    Returns:
        How many files were deleted.
    """
    global _swept
    if _swept and not force:
        return 0
    _swept = True
    _register_atexit()
    cutoff = time.time() - max_age
    uid = os.getuid() if hasattr(os, "getuid") else None
    removed = 0
    try:
        entries = os.scandir(tempfile.gettempdir())
    except OSError:
        return 0
    with entries:
        for entry in entries:
            if not (entry.name.startswith(OUTPUT_FILE_PREFIX) and entry.name.endswith(".log")):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
                if (uid is None or info.st_uid == uid) and info.st_mtime < cutoff and entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
    return removed


_command_wrapper: Callable[[list[str]], list[str]] | None = None
"""Set by the sandbox (``pi_coder.permissions.sandbox``): turns ``[shell, "-c", source]`` into the argv to run."""


def set_command_wrapper(wrapper: Callable[[list[str]], list[str]] | None) -> None:
    """Run every later shell command through ``wrapper(argv)`` (None: directly)."""
    global _command_wrapper
    _command_wrapper = wrapper


_confine_wrapper: Callable[[list[str]], list[str] | None] | None = None
"""Set by ``pi_coder.permissions.sandbox.install_confinement``: the read-only sandbox argv (None: unavailable)."""
_confined: collections.Counter[str] = collections.Counter()


def set_confine_wrapper(wrapper: Callable[[list[str]], list[str] | None] | None) -> None:
    """How ``confine``d commands run (None: as any other command)."""
    global _confine_wrapper
    _confine_wrapper = wrapper
    _confined.clear()


def confine(command: str) -> None:
    """Run the next shell command whose source is exactly ``command`` in the read-only sandbox.

    The permission gate calls it for a command it allowed only because the parser judged it
    read-only; the bash tool or the ``!`` command that runs it next takes the mark."""
    if _confine_wrapper is not None:
        _confined[command] += 1


_CONFINED_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat", "PAGER": "cat"}
"""For confined commands, with or without bubblewrap: git refreshes no index, nothing pages."""
_CONFINED_UNSET = ("LESSOPEN", "LESSCLOSE", "GIT_EXTERNAL_DIFF", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS")


def _wrap(command: str, argv: list[str], env: Mapping[str, str] | None) -> tuple[list[str], dict[str, str] | None]:
    """The argv and environment ``command`` runs with (confined, sandboxed or as is)."""
    if _confined[command] > 0:
        _confined[command] -= 1
        if _confined[command] == 0:
            del _confined[command]
        quiet = {k: v for k, v in (os.environ if env is None else env).items() if k not in _CONFINED_UNSET}
        quiet.update(_CONFINED_ENV)
        confined = _confine_wrapper(argv) if _confine_wrapper is not None else None
        return (confined if confined is not None else argv), quiet
    return (_command_wrapper(argv) if _command_wrapper is not None else argv), (dict(env) if env is not None else None)


def _register_atexit() -> None:
    global _atexit_registered
    if not _atexit_registered:
        atexit.register(kill_running_commands)
        _atexit_registered = True


def _track(pgid: int) -> None:
    _register_atexit()
    _live_groups.add(pgid)


def _group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is left in the group."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _terminate_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group now; a daemon thread sends SIGKILL after ``KILL_GRACE`` and reaps."""
    pgid = proc.pid
    with contextlib.suppress(OSError):
        os.killpg(pgid, signals.SIGTERM)

    def escalate() -> None:
        deadline = time.monotonic() + KILL_GRACE
        while time.monotonic() < deadline:
            proc.poll()
            if not _group_alive(pgid):
                break
            time.sleep(0.05)
        else:
            with contextlib.suppress(OSError):
                os.killpg(pgid, signals.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        if not _group_alive(pgid):
            _live_groups.discard(pgid)

    threading.Thread(target=escalate, name=f"pi-shell-kill-{pgid}", daemon=True).start()


class _ExitWatch:
    """A future resolved with the return code when the main process exits (pidfd or thread)."""

    def __init__(self, proc: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self.proc = proc
        self.loop = loop
        self.future: asyncio.Future[int] = loop.create_future()
        self._pidfd: int | None = None
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            try:
                self._pidfd = pidfd_open(proc.pid)
            except OSError:
                self._pidfd = None
        if self._pidfd is not None:
            loop.add_reader(self._pidfd, self._check)
        else:
            threading.Thread(target=self._wait_thread, daemon=True).start()

    def _check(self) -> None:
        rc = self.proc.poll()
        if rc is None:
            # Another thread holds the wait lock or the process is still exiting: try again.
            self.loop.call_later(0.01, self._check_if_open)
            return
        self._close_pidfd()
        if not self.future.done():
            self.future.set_result(rc)

    def _check_if_open(self) -> None:
        if not self.future.done():
            self._check()

    def _wait_thread(self) -> None:
        rc = self.proc.wait()
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self._resolve, rc)

    def _resolve(self, rc: int) -> None:
        if not self.future.done():
            self.future.set_result(rc)

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            self.loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    def close(self) -> None:
        self._close_pidfd()
        if not self.future.done():
            self.future.cancel()


# ------------------------------------------------------------------ public entry point


async def run_shell_command(
    command: str,
    cwd: str | os.PathLike[str],
    *,
    signal: AbortSignal | None = None,
    on_output: Callable[[str], object] | None = None,
    on_update: Callable[[ShellResult], object] | None = None,
    update_interval: float = 0.1,
    timeout: float | None = None,
    shell_path: str | None = None,
    command_prefix: str | None = None,
    env: Mapping[str, str] | None = None,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    keep_background: bool = False,
) -> ShellResult:
    """Run ``command`` with the user's shell and collect its merged output.

    Args:
        command: Shell source, run as ``<shell> -c <command>``.
        cwd: Working directory (must exist).
        signal: Aborting it terminates the process group; the result has ``cancelled``.
        on_output: Called with each sanitised chunk as it arrives.
        on_update: Called at most every ``update_interval`` seconds with a partial result
            (tail-truncated output so far).
        timeout: Seconds before the process group is terminated (``timed_out``); ``None``: none.
        shell_path: Shell binary (see ``resolve_shell``).
        command_prefix: Prepended to the command on its own line.
        env: Environment (default: this process's).
        max_lines: Tail truncation limit in lines.
        max_bytes: Tail truncation limit in bytes.
        max_file_bytes: Cap of the full-output file (it keeps the tail past the cap).
        keep_background: Processes the command leaves running after it finished (``cmd &``)
            are not killed when pi exits.

    Raises:
        ToolError: the shell or the working directory does not exist.
    """
    shell = resolve_shell(shell_path)
    cwd = os.fspath(cwd)
    if not os.path.isdir(cwd):  # noqa: ASYNC240 (one stat call)
        raise ToolError(f"Working directory does not exist: {cwd}")
    if signal is not None and signal.aborted:
        return ShellResult(output="", exit_code=None, cancelled=True)
    source = f"{command_prefix}\n{command}" if command_prefix else command
    loop = asyncio.get_running_loop()
    collector = _Collector(on_output, max_lines, max_bytes, max_file_bytes)

    read_fd, write_fd = os.pipe()
    try:
        # Popen, not asyncio's subprocess: asyncio's wait() also waits for the pipes to close,
        # which a background grandchild can keep open forever.
        argv, run_env = _wrap(command, [shell, "-c", source], env)
        proc = subprocess.Popen(  # noqa: ASYNC220
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=write_fd, stderr=write_fd,
            start_new_session=True, env=run_env,
        )  # fmt: skip
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    _track(proc.pid)
    os.set_blocking(read_fd, False)
    eof: asyncio.Future[None] = loop.create_future()
    update_handle: asyncio.TimerHandle | None = None
    last_update = 0.0

    def emit_update() -> None:
        nonlocal update_handle, last_update
        update_handle = None
        last_update = loop.time()
        if on_update is not None and collector.changed:
            collector.changed = False
            try:
                on_update(_result(collector, None))
            except Exception:
                _log.exception("on_update callback failed")

    def on_readable() -> None:
        nonlocal update_handle
        while True:
            try:
                data = os.read(read_fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                loop.remove_reader(read_fd)
                if not eof.done():
                    eof.set_result(None)
                break
            collector.feed(data)
        if on_update is not None and update_handle is None and collector.changed:
            delay = max(0.0, last_update + update_interval - loop.time())
            update_handle = loop.call_later(delay, emit_update)

    loop.add_reader(read_fd, on_readable)
    watch = _ExitWatch(proc, loop)
    abort_wait = asyncio.ensure_future(signal.wait()) if signal is not None else None
    finished = False
    try:
        waiting: set[asyncio.Future[int] | asyncio.Future[None]] = {watch.future}
        if abort_wait is not None:
            waiting.add(abort_wait)
        await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if watch.future.done():
            rc = watch.future.result()
            if not eof.done():
                await asyncio.wait({eof}, timeout=DRAIN_GRACE)
            finished = True
            exit_code = rc if rc >= 0 else 128 - rc
            cancelled = timed_out = False
        else:
            cancelled = abort_wait is not None and abort_wait.done()
            timed_out = not cancelled
            exit_code = None
            _terminate_group(proc)
            await asyncio.wait({watch.future}, timeout=_TERM_WAIT)
            if not eof.done():
                await asyncio.wait({eof}, timeout=0.05)
            finished = True
    finally:
        if not finished:
            _terminate_group(proc)  # cancelled from outside: never leave the group running
        if abort_wait is not None:
            abort_wait.cancel()
        if update_handle is not None:
            update_handle.cancel()
        loop.remove_reader(read_fd)
        os.close(read_fd)
        watch.close()
        collector.finish()
        if finished and (not _group_alive_fast(proc.pid) or (keep_background and not (cancelled or timed_out))):
            _live_groups.discard(proc.pid)
    result = _result(collector, exit_code)
    result.cancelled = cancelled
    result.timed_out = timed_out
    return result


def _group_alive_fast(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _result(collector: _Collector, exit_code: int | None) -> ShellResult:
    truncation = collector.snapshot()
    return ShellResult(
        output=truncation.content,
        exit_code=exit_code,
        truncated=truncation.truncated,
        full_output_path=collector.full_output_path,
        full_output_capped=collector.file_capped,
        full_output_bytes=collector.file_bytes,
        truncation=truncation,
        last_line_bytes=collector.last_line_bytes,
    )


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
