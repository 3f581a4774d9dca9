"""One connection to one MCP server over the SDK's ``ClientSession`` (docs/mcp.md#connections).

This is the only module that imports the ``mcp`` SDK; :mod:`pi_coder.mcp.manager` imports it
inside the background task that connects. stdio uses a transport of our own (the server in its
own process group, stderr kept as a tail, non-JSON stdout lines skipped, the group stopped as
docs/mcp.md#lifetime-and-shutdown describes); HTTP uses the SDK's streamable-HTTP client with the configured headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.message import SessionMessage

from pi_coder.mcp.config import ServerConfig
from pi_coder.mcp.elicit import ElicitHandler
from pi_coder.mcp.logfile import capture_sdk_logging

__all__ = ["Connection", "NeedsSignIn", "Tail"]

TAIL_CHARS = 2000

capture_sdk_logging()


class Tail:
    """The last ``TAIL_CHARS`` characters of a server's stderr."""

    def __init__(self) -> None:
        self.text = ""

    def add(self, chunk: str) -> None:
        self.text = (self.text + chunk)[-TAIL_CHARS:]


class ServerGone(Exception):
    """The server closed the connection or exited."""


def _parse(line: str) -> SessionMessage | None:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        return None


async def stop_process(proc: asyncio.subprocess.Process) -> None:
    """Close stdin, 0.5 s, SIGTERM the group, 2 s, SIGKILL the group, reap (docs/mcp.md#lifetime-and-shutdown)."""
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
    for sig, wait in ((None, 0.5), (signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), wait)
        except TimeoutError:
            continue
        if sig is None:  # exited on its own: children left in its group go too
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        return


@asynccontextmanager
async def stdio_transport(
    config: ServerConfig, cwd: str, tail: Tail, on_pid: Callable[[int | None], None]
) -> AsyncIterator[tuple[Any, Any, asyncio.Event]]:
    env = {**os.environ, **config.resolved_env()}
    proc = await asyncio.create_subprocess_exec(
        config.command or "",
        *config.args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=config.working_dir(cwd),
        start_new_session=True,
        limit=64 * 1024 * 1024,
    )
    on_pid(proc.pid)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](16)
    gone = asyncio.Event()
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    stdout, stdin, stderr = proc.stdout, proc.stdin, proc.stderr

    async def read_stdout() -> None:
        try:
            async with read_writer:
                while line := await stdout.readline():
                    text = line.decode("utf-8", "replace").strip()
                    if not text:
                        continue
                    message = _parse(text)
                    if message is None:  # garbage on stdout: keep it for the error notice, go on
                        tail.add(f"[stdout] {text[:200]}\n")
                        continue
                    await read_writer.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError, ValueError):
            pass
        finally:
            gone.set()

    async def read_stderr() -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := await stderr.read(4096):
                tail.add(chunk.decode("utf-8", "replace"))

    async def write_stdin() -> None:
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    stdin.write(data.encode("utf-8"))
                    await stdin.drain()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError, ConnectionError):
            gone.set()

    tasks = [asyncio.ensure_future(t()) for t in (read_stdout, read_stderr, write_stdin)]
    try:
        yield read_stream, write_stream, gone
    finally:
        for task in tasks[::2]:
            task.cancel()
        await asyncio.shield(stop_process(proc))
        tasks[1].cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        on_pid(None)


class NeedsSignIn(Exception):
    """HTTP 401 without an ``Authorization`` header: the server wants OAuth sign-in (docs/mcp.md#oauth-sign-in)."""


class HttpStatus:
    """The error status of the last POST, if it failed (the SDK turns it into a bare JSON-RPC error)."""

    def __init__(self) -> None:
        self.code: int | None = None

    async def hook(self, response: Any) -> None:
        if response.request.method == "POST":
            self.code = response.status_code if response.status_code >= 400 else None


RETRY_DELAYS = (0.25, 1.0)
"""Waits before the second and third attempt of an HTTP connect (docs/mcp.md#reconnect-and-logs)."""


def _retriable(exc: BaseException, status: int | None) -> bool:
    """A network error, 408, 429 or 5xx other than 501."""
    import httpx2

    if status is not None:
        return status in (408, 429) or (500 <= status < 600 and status != 501)
    if isinstance(exc, BaseExceptionGroup):
        return any(_retriable(e, None) for e in exc.exceptions)
    return isinstance(exc, httpx2.TransportError | ConnectionError)


@asynccontextmanager
async def http_transport(config: ServerConfig, status: HttpStatus) -> AsyncIterator[tuple[Any, Any, asyncio.Event]]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    from pi_coder.mcp.oauth_tokens import stored_auth

    client = httpx2.AsyncClient(
        headers=config.resolved_headers(),
        auth=stored_auth(config),  # the tokens of `pi mcp login`, refreshed as needed (docs/mcp.md#oauth-sign-in)
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        event_hooks={"response": [status.hook]},
    )
    async with client, streamable_http_client(config.url or "", http_client=client) as streams:
        yield streams[0], streams[1], asyncio.Event()


class Connection:
    """A live session with one server; :meth:`run` is the task that owns it."""

    def __init__(
        self,
        config: ServerConfig,
        cwd: str,
        *,
        tail: Tail,
        on_pid: Callable[[int | None], None],
        on_tools_changed: Callable[[], None],
        on_log: Callable[[str, str, str], None],
        on_elicit: ElicitHandler | None = None,
    ) -> None:
        self.config = config
        self.cwd = cwd
        self._root = os.path.realpath(cwd)
        self.tail = tail
        self.session: ClientSession | None = None
        self._on_pid = on_pid
        self._on_tools_changed = on_tools_changed
        self._on_log = on_log
        self._on_elicit = on_elicit
        self._stop = asyncio.Event()
        self._status: HttpStatus | None = None
        self.gone = asyncio.Event()

    async def run(self, ready: asyncio.Future[list[dict[str, Any]]]) -> None:
        """Connect, initialize, list the tools (``ready`` gets them), then hold until stopped or gone.

        An HTTP connect failing with a network error, 408, 429 or 5xx (not 501) is tried again
        after 0.25 s and 1 s (the caller bounds the whole by the server's ``timeout``); 401
        without an ``Authorization`` header raises :class:`NeedsSignIn`.
        """
        if self.config.transport == "stdio":
            await self._run_once(ready, None)
            return
        for attempt in range(len(RETRY_DELAYS) + 1):
            status = self._status = HttpStatus()
            try:
                await self._run_once(ready, status)
                return
            except Exception as exc:
                if ready.done():
                    raise
                code = status.code
                if code == 401 and not any(k.lower() == "authorization" for k in self.config.headers):
                    raise NeedsSignIn(
                        f"HTTP 401: run /mcp login {self.config.name} (or pi mcp login {self.config.name}) to sign in"
                    ) from None
                if attempt == len(RETRY_DELAYS) or not _retriable(exc, code):
                    if code is not None:
                        raise ConnectionError(f"HTTP {code} from {self.config.url}") from None
                    raise
            await asyncio.sleep(RETRY_DELAYS[attempt])

    def session_expired(self, exc: BaseException) -> bool:
        """An HTTP 404 to a call on a live session: the server forgot it (restarted, expired)."""
        from mcp.shared.exceptions import MCPError

        if not isinstance(exc, MCPError) or self._status is None:
            return False
        return self._status.code == 404 or exc.error.message == "Session terminated"

    async def _run_once(self, ready: asyncio.Future[list[dict[str, Any]]], status: HttpStatus | None) -> None:
        from pi_coder import __version__

        async with AsyncExitStack() as stack:
            if status is None:
                read, write, gone = await stack.enter_async_context(
                    stdio_transport(self.config, self.cwd, self.tail, self._on_pid)
                )
            else:
                read, write, gone = await stack.enter_async_context(http_transport(self.config, status))
            session = await stack.enter_async_context(
                ClientSession(
                    read,
                    write,
                    list_roots_callback=self._roots,
                    logging_callback=self._log,
                    message_handler=self._message,
                    elicitation_callback=self._elicit,
                    client_info=types.Implementation(name="pi-coder", version=str(__version__)),
                )
            )
            await session.initialize()
            tools = await self.list_tools(session)
            self.session = session
            if not ready.done():
                ready.set_result(tools)
            stop = asyncio.ensure_future(self._stop.wait())
            dropped = asyncio.ensure_future(gone.wait())
            try:
                await asyncio.wait({stop, dropped}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
                dropped.cancel()
                self.session = None
            if gone.is_set() and not self._stop.is_set():
                self.gone.set()

    def stop(self) -> None:
        self._stop.set()

    async def list_tools(self, session: ClientSession | None = None) -> list[dict[str, Any]]:
        session = session or self.session
        if session is None:
            raise ServerGone("not connected")
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any], on_progress: Callable[[float, float | None, str | None], None]
    ) -> dict[str, Any]:
        """``tools/call``; the result's JSON form. Raises ``MCPError``/``ServerGone`` on failure."""
        session = self.session
        if session is None:
            raise ServerGone("not connected")

        async def report(progress: float, total: float | None, message: str | None) -> None:
            on_progress(progress, total, message)

        result = await session.call_tool(name, arguments, progress_callback=report)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def _roots(self, context: Any) -> types.ListRootsResult:
        folder = self._root
        return types.ListRootsResult(roots=[types.Root(uri="file://" + folder, name=os.path.basename(folder))])

    async def _elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        """``elicitation/create`` (docs/mcp.md#elicitation): the user's answer, or a decline without a UI."""
        if self._on_elicit is None:
            return types.ElicitResult(action="decline")
        try:
            answer = await self._on_elicit(self.config.name, params.model_dump(by_alias=True, mode="json", exclude_none=True))
        except Exception:  # noqa: BLE001 - a UI that failed: the user could not answer
            return types.ElicitResult(action="cancel")
        action = answer.get("action")
        if action not in ("accept", "decline", "cancel"):
            action = "decline"
        return types.ElicitResult(action=action, content=answer.get("content") if action == "accept" else None)

    async def _log(self, params: Any) -> None:
        data = params.data if isinstance(params.data, str) else repr(params.data)
        self._on_log(str(params.level), str(params.logger or ""), data)

    async def _message(self, message: Any) -> None:
        inner = getattr(message, "root", message)
        if getattr(inner, "method", None) == "notifications/tools/list_changed":
            self._on_tools_changed()
