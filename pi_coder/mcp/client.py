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

from pi_coder._spawn import start_in_session
from pi_coder.mcp.config import ServerConfig
from pi_coder.mcp.elicit import ElicitHandler
from pi_coder.mcp.http import RETRY_DELAYS, HttpStatus, http_transport, retriable
from pi_coder.mcp.logfile import capture_sdk_logging

__all__ = ["Connection", "NeedsSignIn", "Tail"]

TAIL_CHARS = 2000

AGENT_MARKERS = {"AI_AGENT": "pi", "PI_CODING_AGENT": "true"}
"""Set for every stdio server, as Pi 1.6 does (the bash tool sets the same); ``env`` entries win."""

capture_sdk_logging()


def inherited_environment() -> dict[str, str]:
    """pi's environment without the provider keys pi itself uses (``ANTHROPIC_API_KEY``, ...):
    a server gets one only when its ``env`` entry passes it (``"${OPENAI_API_KEY}"``). Other
    variables (``GITHUB_TOKEN``, ...) pass through, as servers commonly read them."""
    from pi_coder.ai.keys import ENV_API_KEYS

    keys = {name for names in ENV_API_KEYS.values() for name in names}
    return {name: value for name, value in os.environ.items() if name not in keys}


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
    env = {**inherited_environment(), **AGENT_MARKERS, **config.resolved_env()}
    # cancelled while the server starts (/reload, exit): its whole group is killed (pi_coder._spawn)
    proc = await start_in_session(
        config.command or "", *config.args, env=env, cwd=config.working_dir(cwd), limit=64 * 1024 * 1024
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
        with contextlib.suppress(OSError, RuntimeError):
            stdin.close()  # else the pipe stays open and asyncio never closes the process transport
        await asyncio.shield(stop_process(proc))
        tasks[1].cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        on_pid(None)


class NeedsSignIn(Exception):
    """HTTP 401 without an ``Authorization`` header: the server wants OAuth sign-in (docs/mcp.md#oauth-sign-in)."""



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
        self._relist = False
        self._background: set[asyncio.Task[None]] = set()
        self.prompts: list[dict[str, Any]] = []
        """The server's prompts (``prompts/list``, JSON form), kept up to date by ``prompts/list_changed``."""
        self.capabilities: dict[str, Any] = {}
        """The server's capabilities from ``initialize`` (JSON form: ``tools``, ``resources``, ``prompts``, ...)."""
        self.instructions = ""
        """The server's ``instructions`` from ``initialize`` ("" without)."""

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
                if attempt == len(RETRY_DELAYS) or not retriable(exc, code):
                    if code is not None:
                        raise ConnectionError(f"HTTP {code} from {self.config.url}") from None
                    raise
            await asyncio.sleep(RETRY_DELAYS[attempt])

    def session_expired(self, exc: BaseException) -> bool:
        """Whether ``exc`` (from a call on a live HTTP session) says the server lost the session.

        A 404 or 400 (a restarted server-everything answers 400 "No valid session ID"), any status
        whose body names the session, or the SDK's "Session terminated": initialize again. Other
        statuses are not retried (the server may have run the call).
        """
        from mcp.shared.exceptions import MCPError

        if not isinstance(exc, MCPError) or self._status is None:
            return False
        code = self._status.code
        if code in (404, 400) or exc.error.message == "Session terminated":
            return True
        return code is not None and "session" in self._status.body.lower()

    def http_error(self) -> str:
        """The status and body of the last failed POST (``HTTP 500: ...``), or ""."""
        return self._status.describe() if self._status is not None else ""

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
            init = await session.initialize()
            self.capabilities = init.capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)
            self.instructions = (init.instructions or "").strip()
            self._relist = False
            tools = await self.list_tools(session)
            for _ in range(10):  # tools/list_changed during the first listing: list again (bounded)
                if not self._relist:
                    break
                self._relist = False
                tools = await self.list_tools(session)
            if "prompts" in self.capabilities:
                await self._list_prompts(session)
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

    async def _list_prompts(self, session: ClientSession) -> None:
        """``prompts/list`` (every page) into :attr:`prompts`; a failure leaves the server usable."""
        prompts: list[dict[str, Any]] = []
        cursor: str | None = None
        try:
            for _ in range(100):
                params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_prompts(params=params)
                prompts.extend(p.model_dump(by_alias=True, mode="json", exclude_none=True) for p in page.prompts)
                cursor = page.next_cursor
                if not cursor:
                    break
        except Exception as exc:  # noqa: BLE001 - prompts are optional
            self.tail.add(f"[pi] prompts/list failed: {exc}\n")
            return
        self.prompts = prompts

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        """``prompts/get`` (JSON form: ``description``, ``messages``)."""
        result = await self._live().get_prompt(name, arguments or None)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    def _live(self) -> ClientSession:
        if self.session is None:
            raise ServerGone("not connected")
        return self.session

    async def list_resources(self, cursor: str | None = None) -> dict[str, Any]:
        """One page of ``resources/list`` (JSON form: ``resources``, ``nextCursor``)."""
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await self._live().list_resources(params=params)
        return page.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def list_resource_templates(self, cursor: str | None = None) -> dict[str, Any]:
        """One page of ``resources/templates/list`` (JSON form: ``resourceTemplates``, ``nextCursor``)."""
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await self._live().list_resource_templates(params=params)
        return page.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """``resources/read`` (JSON form: ``contents``)."""
        result = await self._live().read_resource(uri)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    def transient_error(self) -> bool:
        """Whether the last HTTP POST failed with 408, 429 or a 5xx (a read or list may be tried again)."""
        code = self._status.code if self._status is not None else None
        return code is not None and (code in (408, 429) or 500 <= code < 600)

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
        if getattr(inner, "method", None) == "notifications/prompts/list_changed" and self.session is not None:
            task = asyncio.ensure_future(self._list_prompts(self.session))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        if getattr(inner, "method", None) == "notifications/tools/list_changed":
            if self.session is None:  # still in the handshake: the first listing is listed again
                self._relist = True
            else:
                self._on_tools_changed()
