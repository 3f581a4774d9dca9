"""``pi --mode rpc``: JSON commands on stdin, responses and events on stdout.

Framing is Pi's: one JSON object per LF-terminated line each way (a trailing CR is tolerated;
U+2028/U+2029 inside strings are not line breaks). Every command gets one response,
``{"type": "response", "command": ..., "success": ..., "id"?: ..., "data"?: ..., "error"?: ...}``;
events are written as in ``--mode json``. A line that is not a JSON object gets an error
response with ``command: "parse"`` and the server keeps going.

``prompt`` answers at once and the run continues in the background; a ``prompt`` sent once
``agent_end`` is out, while the previous prompt is still settling, is accepted and starts when
that one has settled (as Pi 1.6 accepts it); ``bash`` and ``compact``
answer when they finish, so ``abort``/``abort_bash`` can be sent meanwhile. stdin is read by a
thread that feeds an asyncio queue. At end of input the server waits for the current run (and
its queued follow-ups) to finish, then exits 0. SIGINT, SIGTERM and SIGHUP abort the run (and a
running bash command), then exit with 128 + the signal.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Awaitable
from typing import TYPE_CHECKING, BinaryIO

from pi_coder.agent.events import AgentEnd, AgentStart
from pi_coder.modes.jsonl import JsonLineWriter
from pi_coder.modes.rpc_protocol import HANDLED, NULL, Handler, RpcError
from pi_coder.modes.stop_signals import StopSignals, exit_code_for

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.modes.rpc_ui import RpcUI

__all__ = ["HANDLED", "NULL", "RpcError", "RpcServer", "run_rpc_mode"]


def run_rpc_mode(session: AgentSession, *, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Serve RPC commands until stdin ends; returns the exit code (0, or 128 + a stop signal)."""
    server = RpcServer(session, JsonLineWriter(stdout))
    source = stdin if stdin is not None else _private_stdin()
    return asyncio.run(server.serve(source))


def _private_stdin() -> BinaryIO:
    """A reader of its own on stdin's descriptor.

    The reader thread blocks in ``readline`` holding its reader's lock. Were that reader
    ``sys.stdin.buffer``, leaving before end of input (after SIGTERM) would abort the
    interpreter at shutdown, which closes ``sys.stdin``; a private reader is never touched.
    """
    try:
        return open(os.dup(sys.stdin.fileno()), "rb")  # noqa: SIM115 (lives until the process ends)
    except (AttributeError, OSError, ValueError):
        return sys.stdin.buffer


class RpcServer:
    """Dispatches command lines to handlers (``pi_coder.modes.rpc_commands``) and writes responses."""

    def __init__(self, session: AgentSession, writer: JsonLineWriter) -> None:
        from pi_coder.modes.rpc_commands import COMMANDS
        from pi_coder.modes.rpc_types import parse_command

        self.session = session
        self.writer = writer
        self._commands: dict[str, Handler] = COMMANDS
        self._parse = parse_command
        self._tasks: set[asyncio.Task[object]] = set()
        self.prompt_task: asyncio.Task[object] | None = None
        """The background task of the last started prompt."""
        self.ui: RpcUI | None = None
        """The extensions' ``ctx.ui`` (``pi_coder.modes.rpc_ui.RpcUI``) when extensions are loaded."""
        self.run_ended = False
        """``agent_end`` (with no retry to come) went out and no run started since: the prompt is
        only settling (checkpoint entry, saving, extensions' ``agent_settled``)."""
        self.aborts = 0
        """How many ``abort`` commands came: a prompt waiting for the previous one to settle is
        dropped when one comes while it waits."""

    # ------------------------------------------------------------------ output

    def respond(self, command: str, request_id: object, *, data: object = None, error: str | None = None) -> None:
        """Write one response line: ``data`` unless None (``NULL`` writes ``null``); ``error`` makes it a failure."""
        out: dict[str, object] = {}
        if request_id is not None:
            out["id"] = request_id
        out.update(type="response", command=command, success=error is None)
        if error is not None:
            out["error"] = error
        elif data is not None:
            out["data"] = None if data is NULL else data
        self.writer.write(out)

    def spawn(self, coro: Awaitable[object]) -> asyncio.Task[object]:
        """Run ``coro`` in the background; the server waits for it before exiting."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _track(self, event: object) -> None:
        """Subscribed before the writer, so ``run_ended`` is set before a client sees ``agent_end``."""
        if isinstance(event, AgentEnd):
            self.run_ended = not event.will_retry
        elif isinstance(event, AgentStart):
            self.run_ended = False

    def settling(self) -> bool:
        """The last prompt's run is over but the prompt has not settled yet: a new prompt waits for it."""
        return self.run_ended and self.prompt_task is not None and not self.prompt_task.done()

    def busy(self) -> bool:
        """A prompt is running (or was just started and has not reached the agent yet)."""
        return self.session.is_streaming or (self.prompt_task is not None and not self.prompt_task.done())

    # ------------------------------------------------------------------ input

    async def serve(self, source: BinaryIO) -> int:
        """Read and dispatch lines from ``source`` until it ends, then finish the current run."""
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        threading.Thread(target=_read_lines, args=(source, loop, queue), name="pi-rpc-stdin", daemon=True).start()
        untrack = self.session.subscribe(self._track)
        unsubscribe = self.session.subscribe(self.writer.write_event)
        stop = StopSignals(lambda _signum: self._stop(queue))
        stop.install()
        if self.session.mcp is not None:
            self.session.mcp.start()  # connect in the background
        self.session.checkpoints.warm_up()  # a new folder's first snapshot, in the background
        if self.session.extensions is not None:
            from pi_coder.modes import extension_host
            from pi_coder.modes.rpc_ui import RpcUI

            wait = self.session.settings.permissions.rpc_dialog_timeout
            self.ui = RpcUI(self.writer, default_timeout=wait or None)
            await extension_host.start(self.session, "rpc", self.ui)
        try:
            while (line := await queue.get()) is not None:
                await self.handle_line(line)
            if self.ui is not None:
                self.ui.cancel_all()
            while self._tasks:
                await asyncio.gather(*tuple(self._tasks), return_exceptions=True)
            await self.session.wait_for_idle()
        finally:
            stop.uninstall()
            if self.session.extensions is not None:
                await extension_host.stop(self.session)
            unsubscribe()
            untrack()
            await self.session.close()
        return exit_code_for(stop.received) if stop.received is not None else 0

    def _stop(self, queue: asyncio.Queue[bytes | None]) -> None:
        """SIGINT/SIGTERM/SIGHUP: abort the run and any bash command, read no more commands."""
        self.session.abort()
        queue.put_nowait(None)

    async def handle_line(self, line: bytes) -> None:
        """Parse one line and run its command; every failure becomes an error response."""
        import orjson

        line = line.rstrip(b"\r\n")
        if not line.strip():
            return
        try:
            command = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            self.respond("parse", None, error=f"Failed to parse command: {exc}")
            return
        if not isinstance(command, dict) or not isinstance(command.get("type"), str):
            self.respond("parse", None, error='Failed to parse command: expected a JSON object with a "type"')
            return
        kind, request_id = command["type"], command.get("id")
        if kind == "extension_ui_response":  # answers to extension dialogs, never responded to
            if self.ui is not None:
                self.ui.resolve(command)
            return
        handler = self._commands.get(kind)
        if handler is None:
            self.respond(kind, request_id, error=f"Unknown command: {kind}")
            return
        try:
            data = await handler(self, self._parse(command))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every failure is reported to the client, never fatal
            self.respond(kind, request_id, error=str(exc) or type(exc).__name__)
            return
        if data is not HANDLED:
            self.respond(kind, request_id, data=data)


def _read_lines(source: BinaryIO, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[bytes | None]) -> None:
    """Thread body: push each line of ``source`` to ``queue``; None at end of input."""
    try:
        for line in iter(source.readline, b""):
            loop.call_soon_threadsafe(queue.put_nowait, line)
    except (OSError, ValueError):
        pass
    finally:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, None)
        except RuntimeError:  # the loop is already closed
            pass
