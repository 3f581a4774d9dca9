"""``pi.exec``: run a program without a shell, in its own process group, with limits (docs/extensions-runtime.md#other-methods)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pi_coder._spawn import start_in_session

if TYPE_CHECKING:
    from pi_coder.ai.abort import AbortSignal

__all__ = ["ExecResult", "run_process"]

_KILL_GRACE = 5.0


@dataclass(slots=True, kw_only=True)
class ExecResult:
    stdout: str
    stderr: str
    code: int
    killed: bool = False
    truncated: bool = False


async def _read(
    stream: asyncio.StreamReader | None, limit: int, out: bytearray, flags: list[bool], stop: asyncio.Event
) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        room = limit - len(out)
        if room > 0:
            out.extend(chunk[:room])
        if len(chunk) > room:
            flags[0] = True
            stop.set()


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def run_process(
    cmd: str,
    args: list[str],
    *,
    cwd: str,
    timeout: float | None = None,
    signal: AbortSignal | None = None,
    max_output: int = 256 * 1024 * 1024,
) -> ExecResult:
    """Run ``cmd``; on timeout, abort or output over ``max_output``: SIGTERM, SIGKILL after 5 s.

    A program that cannot be started gives ``code=127`` and the reason in ``stderr``. Cancelled,
    even while the program is starting, its whole process group is killed (``pi_coder._spawn``).
    """
    try:
        proc = await start_in_session(cmd, *args, cwd=cwd, stdin=asyncio.subprocess.DEVNULL)
    except OSError as exc:
        return ExecResult(stdout="", stderr=str(exc), code=127)
    out, err = bytearray(), bytearray()
    over = [False]
    stop = asyncio.Event()
    readers = asyncio.gather(
        _read(proc.stdout, max_output, out, over, stop), _read(proc.stderr, max_output, err, over, stop)
    )
    waiter = asyncio.ensure_future(proc.wait())
    if signal is not None:
        signal.add_listener(lambda *_: stop.set())
        if signal.aborted:
            stop.set()
    stopper = asyncio.ensure_future(stop.wait())
    killed = False
    try:
        done, _ = await asyncio.wait({waiter, stopper}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done or over[0]:
            killed = True
            _signal_group(proc.pid, signals.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.shield(waiter), _KILL_GRACE)
            except TimeoutError:
                _signal_group(proc.pid, signals.SIGKILL)
                await waiter
        await readers
    finally:
        stopper.cancel()
        if proc.returncode is None:
            _signal_group(proc.pid, signals.SIGKILL)
    code = proc.returncode if proc.returncode is not None else -1
    if code < 0:
        code = 128 - code
    return ExecResult(
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        code=code,
        killed=killed,
        truncated=over[0],
    )
