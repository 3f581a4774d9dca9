"""Running hook commands: stdin JSON in, bounded stdout/stderr out, process group killed at the end.

Each command runs in ``bash -c`` (``sh`` without bash) in its own session, so on a timeout, an
abort or a cancelled await the whole process group gets SIGKILL. Each stream keeps its first
``MAX_OUTPUT`` bytes and discards the rest while the pipe is drained, so a chatty or stuck hook
never blocks pi: everything ends by the hook's timeout.

The hook's process runs before ``run_hook`` has it: asyncio connects the pipes over a few turns of
the event loop, and a Ctrl+C can land there. An abort then still kills the hook (whether the run
was aborted is read before the start: a hook started after the abort, e.g. a Stop hook of an
aborted run, runs to its end). A cancellation there is held until the start completes, then the
group is killed (``pi_coder._spawn``): asyncio alone would kill only the shell and wait for its
pipes, which a child the hook put in the background keeps open (``pi -p`` hung on Ctrl+C until
that child ended).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_coder._spawn import kill_group, reaped, start_in_session
from pi_coder.hooks.config import HookCommand

if TYPE_CHECKING:
    from pi_coder.ai.abort import AbortSignal

__all__ = ["MAX_OUTPUT", "HookRun", "run_hook", "run_hooks"]

MAX_OUTPUT = 256 * 1024
"""Bytes kept of each of a hook's stdout and stderr."""

_GRACE = 1.0
"""Seconds to wait for the pipes after the hook's group was killed (a child that left the group)."""


@dataclass(slots=True, kw_only=True)
class HookRun:
    """What one hook command did."""

    hook: HookCommand
    exit_code: int | None
    """None when it timed out, was aborted or could not start."""
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    aborted: bool = False
    error: str | None = None
    """Why it could not start."""

    def json(self) -> dict[str, Any] | None:
        """stdout as Claude Code's JSON answer (exit 0 only), or None when it is plain text."""
        text = self.stdout.strip()
        if self.exit_code != 0 or not text.startswith("{"):
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None
        return data if isinstance(data, dict) else None

    def problem(self) -> str | None:
        """One line for the user when the hook failed without blocking (not exit 0 or 2)."""
        name = f'{self.hook.event} hook "{_short(self.hook.command)}"'
        if self.error is not None:
            return f"{name} could not start: {self.error}"
        if self.timed_out:
            return f"{name} timed out after {self.hook.timeout:g} s and was stopped"
        if self.aborted or self.exit_code in (0, 2):
            return None
        detail = self.stderr.strip().splitlines()
        return f"{name} failed (exit {self.exit_code})" + (f": {detail[0]}" if detail else "")


def _short(command: str, limit: int = 60) -> str:
    command = " ".join(command.split())
    return command if len(command) <= limit else command[: limit - 1] + "…"


def _shell() -> list[str]:
    bash = shutil.which("bash")
    return [bash, "-c"] if bash else ["/bin/sh", "-c"]


async def _drain(stream: asyncio.StreamReader | None) -> str:
    if stream is None:
        return ""
    kept = bytearray()
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            break
        if len(kept) < MAX_OUTPUT:
            kept.extend(chunk[: MAX_OUTPUT - len(kept)])
    return kept.decode("utf-8", "replace")


async def run_hook(
    hook: HookCommand,
    payload: bytes,
    *,
    cwd: str,
    env: Mapping[str, str],
    abort: AbortSignal | None = None,
) -> HookRun:
    """Run ``hook`` with ``payload`` on stdin; never raises for the hook's own failures."""
    aborted_before = abort is not None and abort.aborted
    try:
        proc = await start_in_session(*_shell(), hook.command, cwd=cwd, env=env)
    except OSError as exc:
        return HookRun(hook=hook, exit_code=None, error=str(exc))

    async def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(payload)
            await proc.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.close()

    async def whole() -> tuple[str, str, int]:
        out, err, _, code = await asyncio.gather(
            _drain(proc.stdout), _drain(proc.stderr), feed(), proc.wait()
        )
        return out, err, code

    work = asyncio.ensure_future(whole())
    waiters: set[asyncio.Future[Any]] = {work}
    stop = asyncio.ensure_future(abort.wait()) if abort is not None and not aborted_before else None
    if stop is not None:
        waiters.add(stop)
    try:
        done, _ = await asyncio.wait(waiters, timeout=hook.timeout, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        kill_group(proc.pid)
        work.cancel()
        await reaped(proc)
        raise
    finally:
        if stop is not None:
            stop.cancel()
    if work in done:
        out, err, code = work.result()
        kill_group(proc.pid)  # anything the hook left running in its group
        return HookRun(hook=hook, exit_code=code, stdout=out, stderr=err)
    kill_group(proc.pid)
    aborted = abort is not None and abort.aborted
    try:
        out, err, _ = await asyncio.wait_for(asyncio.shield(work), _GRACE)
    except TimeoutError:
        work.cancel()
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        out = err = ""
    return HookRun(hook=hook, exit_code=None, stdout=out, stderr=err, timed_out=not aborted, aborted=aborted)


async def run_hooks(
    hooks: Sequence[HookCommand],
    payload: Mapping[str, Any],
    *,
    cwd: str,
    env: Mapping[str, str],
    abort: AbortSignal | None = None,
) -> list[HookRun]:
    """Run ``hooks`` in parallel with the same stdin JSON; results in ``hooks`` order."""
    if not hooks:
        return []
    data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
    return list(await asyncio.gather(*(run_hook(h, data, cwd=cwd, env=env, abort=abort) for h in hooks)))
