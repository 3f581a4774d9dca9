"""Starting a child in its own session so that a cancellation, even one landing mid-start, kills its whole group.

asyncio's ``create_subprocess_exec`` forks the child first, then connects its pipes over a few
turns of the event loop. On Python 3.11 a task cancelled in those turns makes asyncio kill only
the child's own pid and then wait for its pipes: a child the program put in the background keeps
them open, so the wait lasts until that child ends, and it is left running. :func:`start_in_session`
holds such a cancellation until the start completes, kills the new session's whole process group
(SIGKILL), waits briefly for it to be reaped, then re-raises. Used by hooks, ``pi.exec`` and MCP
stdio servers (docs/architecture.md, docs/extensions-runtime.md, docs/mcp.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping

__all__ = ["kill_group", "reaped", "start_in_session"]

REAP_GRACE = 1.0
"""Seconds to wait for a killed child's pipes (a child that left the group keeps them open)."""
_PIPE = asyncio.subprocess.PIPE


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def start_in_session(
    program: str,
    *args: str,
    cwd: str,
    env: Mapping[str, str] | None = None,
    stdin: int = _PIPE,
    limit: int = 2**16,
) -> asyncio.subprocess.Process:
    """``create_subprocess_exec`` with stdout and stderr piped and ``start_new_session=True``;
    cancelled while starting, the new group is killed once asyncio has the process (see above).
    Raises ``OSError`` when the program cannot be started."""
    start = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            program,
            *args,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=stdin,
            stdout=_PIPE,
            stderr=_PIPE,
            start_new_session=True,
            limit=limit,
        )
    )
    try:
        return await asyncio.shield(start)
    except asyncio.CancelledError:
        try:
            proc = await asyncio.shield(start)  # a few turns of the loop: the pipes are being connected
        except asyncio.CancelledError:
            start.add_done_callback(_kill_started)  # cancelled again: kill it once it exists
            raise
        except Exception:
            pass  # it did not start: nothing to kill
        else:
            kill_group(proc.pid)
            await reaped(proc)
        raise


async def reaped(proc: asyncio.subprocess.Process, grace: float = REAP_GRACE) -> None:
    """Wait (at most ``grace`` seconds) for a killed child to be reaped and its pipes closed, so
    asyncio closes its transport while the loop still runs."""
    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(proc.wait(), grace)


def _kill_started(start: asyncio.Future[asyncio.subprocess.Process]) -> None:
    if not start.cancelled() and start.exception() is None:
        kill_group(start.result().pid)
