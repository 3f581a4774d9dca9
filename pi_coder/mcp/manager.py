"""The MCP servers of one process (extensions §6.4-6.8): background connections, tools, shutdown.

``McpManager(config, cwd)`` is built at start-up (no SDK import); ``attach(session, notify)``
names the session whose tools the servers' tools join, and ``start()`` (called once a loop runs, or by the first
prompt) connects every enabled server in parallel in background tasks. Each connected server's
tools join the session's tool list as they arrive; a server that fails, hangs or exits is
``failed`` (one notice with its stderr tail) and blocks nothing. ``close()`` stops them all within
3 s; an ``atexit`` backstop kills any process group still alive.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_coder.mcp.config import ConfigResult, ServerConfig

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentTool
    from pi_coder.mcp.client import Connection, Tail

Notify = Callable[[str, str], None]
"""``notify(level, text)``: one notice for the user (level ``info``, ``warning`` or ``error``)."""

__all__ = ["McpManager", "McpServer"]

_LIVE_GROUPS: set[int] = set()


def _kill_leftovers() -> None:
    for pgid in list(_LIVE_GROUPS):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    _LIVE_GROUPS.clear()


atexit.register(_kill_leftovers)


@dataclass(slots=True, kw_only=True)
class McpServer:
    """One configured server and what is known about it."""

    config: ServerConfig
    state: str = "connecting"
    """connecting, connected, failed, disconnected, disabled."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """The server's tools as listed (JSON form)."""
    tool_names: dict[str, str] = field(default_factory=dict)
    """Agent tool name -> MCP tool name."""
    error: str | None = None
    tail: Tail | None = None
    pid: int | None = None
    connection: Connection | None = None
    task: asyncio.Task[None] | None = None
    ready: asyncio.Future[list[dict[str, Any]]] | None = None
    settled: asyncio.Event | None = None
    """Set once a connection attempt has ended in ``connected`` or ``failed``."""

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def stderr_tail(self) -> str:
        return self.tail.text if self.tail is not None else ""

    def status(self) -> str:
        if self.state == "connected":
            return f"connected, {len(self.tools)} tool{'' if len(self.tools) == 1 else 's'}"
        return self.state


class McpManager:
    """Owns the connections of the configured servers (see the module docstring)."""

    def __init__(
        self,
        config: ConfigResult,
        cwd: str,
        *,
        startup_wait: float = 10.0,
        tool_filter: list[str] | None = None,
    ) -> None:
        self.cwd = cwd
        self.config = config
        self.startup_wait = startup_wait
        self.tool_filter = tool_filter
        self.servers: dict[str, McpServer] = {
            name: McpServer(config=cfg, state="connecting" if cfg.enabled else "disabled")
            for name, cfg in config.servers.items()
        }
        self.session: Any = None
        """The AgentSession whose tool list the servers' tools join (``attach``)."""
        self._notify_fn: Notify | None = None
        self._started = False
        self._notices: list[tuple[str, str]] = [("warning", f"MCP: {e}") for e in config.errors]
        self._closed = False

    # ------------------------------------------------------------------ wiring

    def attach(self, session: Any, notify: Notify) -> None:
        self.session = session
        self._notify_fn = notify

    def start(self) -> None:
        """Connect every enabled server in the background (idempotent; needs a running loop)."""
        if self._started or self._closed:
            return
        self._started = True
        for notice in self._notices:
            self._notify(*notice)
        for server in self.servers.values():
            if server.config.enabled:
                self._connect(server)

    def _connect(self, server: McpServer) -> None:
        loop = asyncio.get_running_loop()
        server.state = "connecting"
        server.error = None
        server.ready = loop.create_future()
        server.settled = asyncio.Event()
        server.task = loop.create_task(self._run(server), name=f"mcp:{server.name}")

    async def _run(self, server: McpServer) -> None:
        assert server.ready is not None
        ready = server.ready
        try:
            # The SDK (about 0.5 s to import) is imported only here, in a thread, so the loop runs on.
            client = await _import_client()
            Connection, Tail = client.Connection, client.Tail  # noqa: N806

            server.tail = Tail()
            connection = Connection(
                server.config,
                self.cwd,
                tail=server.tail,
                on_pid=lambda pid: self._set_pid(server, pid),
                on_tools_changed=lambda: self._relist_soon(server),
                on_log=lambda level, logger, text: self._log(server, level, logger, text),
            )
            server.connection = connection
            runner = asyncio.ensure_future(connection.run(ready))
            try:
                await asyncio.wait({ready, runner}, timeout=server.config.timeout, return_when=asyncio.FIRST_COMPLETED)
            except BaseException:
                runner.cancel()
                await asyncio.gather(runner, return_exceptions=True)
                raise
            if not ready.done():
                if not runner.done():
                    runner.cancel()
                    await asyncio.gather(runner, return_exceptions=True)
                    raise TimeoutError(f"did not finish connecting within {server.config.timeout:g} s")
                runner.result()  # its failure is the server's
                raise ConnectionError("the server exited during the handshake")
            self._connected(server, ready.result())
            self._settle(server)
            await runner
            if connection.gone.is_set() and not self._closed and server.state == "connected":
                server.state = "disconnected"
                server.error = "the server closed the connection"
                self._install(server, [])
                self._notify("warning", f'MCP server "{server.name}" disconnected; the next call reconnects')
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            self._settle(server)
            raise
        except BaseException as exc:  # noqa: BLE001 - any failure of one server is its own
            if not ready.done():
                ready.set_exception(exc)
                ready.exception()  # mark retrieved
            if self._closed:
                return
            server.state = "failed"
            server.error = _describe(exc)
            self._install(server, [])
            tail = server.stderr_tail.strip()
            more = f"\n{tail[-500:]}" if tail else ""
            self._notify("warning", f'MCP server "{server.name}" failed: {server.error}{more}')
        finally:
            self._settle(server)

    @staticmethod
    def _settle(server: McpServer) -> None:
        if server.settled is not None:
            server.settled.set()

    def _set_pid(self, server: McpServer, pid: int | None) -> None:
        if server.pid is not None:
            _LIVE_GROUPS.discard(server.pid)
        server.pid = pid
        if pid is not None:
            _LIVE_GROUPS.add(pid)

    def _connected(self, server: McpServer, tools: list[dict[str, Any]]) -> None:
        server.state = "connected"
        server.tools = tools
        self._install(server, tools)

    def _relist_soon(self, server: McpServer) -> None:
        async def relist() -> None:
            if server.connection is None:
                return
            with contextlib.suppress(Exception):
                tools = await server.connection.list_tools()
                server.tools = tools
                self._install(server, tools)

        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().create_task(relist())

    def _log(self, server: McpServer, level: str, logger: str, text: str) -> None:
        from pi_coder.paths import logs_dir

        with contextlib.suppress(OSError):
            folder = logs_dir()
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / "mcp.log"
            if path.exists() and path.stat().st_size > 5 * 1024 * 1024:
                os.replace(path, path.with_suffix(".log.1"))
            with path.open("a", encoding="utf-8") as fh:
                fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{server.name}] {level} {logger}: {text}\n")

    # ------------------------------------------------------------------ tools

    def _install(self, server: McpServer, tools: list[dict[str, Any]]) -> None:
        """Replace ``server``'s agent tools in the session by those of ``tools``."""
        from pi_coder.mcp.tools import tool_name

        old = set(server.tool_names)
        taken = {n for s in self.servers.values() if s is not server for n in s.tool_names}
        if self.session is not None:
            taken |= {t.name for t in self.session.agent.state.tools if t.name not in old}
        server.tool_names = {}
        built: list[AgentTool] = []
        for tool in tools:
            if server.config.exposure_of(str(tool.get("name"))) == "hidden":
                continue
            name = tool_name(server.name, str(tool.get("name")), taken)
            taken.add(name)
            server.tool_names[name] = str(tool.get("name"))
            if self.tool_filter is not None and name not in self.tool_filter:
                continue
            built.append(self._agent_tool(server, name, tool))
        session = self.session
        if session is None:
            return
        if session.extensions is not None:
            session.extensions.add_host_tools(built, remove=sorted(old))
        kept = [t for t in session.agent.state.tools if t.name not in old]
        session.agent.state.tools = [*kept, *built]

    def _agent_tool(self, server: McpServer, name: str, tool: dict[str, Any]) -> AgentTool:
        from pi_coder.agent.types import AgentTool
        from pi_coder.mcp.tools import params_model

        mcp_name = str(tool.get("name"))
        description = tool.get("description") or tool.get("title") or f"MCP tool {mcp_name} from server {server.name}"

        async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            return await self.call(server.name, mcp_name, params.model_dump(), signal, on_update)

        return AgentTool(
            name=name,
            label=f"{server.name}/{mcp_name}",
            description=str(description),
            parameters=params_model(tool.get("inputSchema"), name),
            execute=execute,
            read_only=bool((tool.get("annotations") or {}).get("readOnlyHint")),
        )

    async def call(self, server_name: str, tool: str, arguments: dict[str, Any], signal: Any, on_update: Any) -> Any:
        """Run ``tools/call`` with the server's timeout (restarted by progress); abort cancels it."""
        from pi_coder.agent.types import AgentToolResult
        from pi_coder.ai.types import TextContent
        from pi_coder.mcp.tools import convert_result

        server = self.servers[server_name]
        live = server.connection is not None and server.connection.session is not None
        if server.state == "connected" and not live and server.task is not None:
            # The server has just dropped; let its task record that before reconnecting.
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(server.task), 3.0)
        if server.state in ("disconnected", "failed") and server.config.enabled and not self._closed:
            await self.reconnect(server_name, wait=True)  # a dropped server: reconnect once
        connection = server.connection
        if server.state != "connected" or connection is None:
            raise RuntimeError(f'MCP server "{server_name}" is {server.state}' + (f": {server.error}" if server.error else ""))
        timeout = server.config.timeout
        deadline = [time.monotonic() + timeout]

        def progress(value: float, total: float | None, message: str | None) -> None:
            deadline[0] = time.monotonic() + timeout
            if on_update is not None:
                shown = f"{value:g}/{total:g}" if total else f"{value:g}"
                text = f"{message} ({shown})" if message else f"progress {shown}"
                with contextlib.suppress(Exception):
                    on_update(AgentToolResult(content=[TextContent(text=text)], details={"progress": value, "total": total}))

        task = asyncio.ensure_future(connection.call_tool(tool, arguments, progress))
        aborted = asyncio.Event()
        listener = None
        if signal is not None:
            if signal.aborted:
                task.cancel()
            def listener(*_args: Any) -> None:
                aborted.set()
                task.cancel()
            signal.add_listener(listener)
        try:
            while True:
                remaining = deadline[0] - time.monotonic()
                done, _ = await asyncio.wait({task}, timeout=max(remaining, 0))
                if done:
                    break
                if time.monotonic() >= deadline[0]:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                    raise RuntimeError(f'MCP server "{server_name}" did not answer tools/call within {timeout:g} s')
            try:
                result = task.result()
            except asyncio.CancelledError:
                raise RuntimeError("Aborted") from None
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            if signal is not None and listener is not None:
                with contextlib.suppress(Exception):
                    signal.remove_listener(listener)
        content, details, is_error = convert_result(server_name, tool, result)
        if is_error:
            raise _ToolError(content, details)
        return AgentToolResult(content=content, details=details)

    # ------------------------------------------------------------------ control

    async def wait_connecting(self, timeout: float) -> list[str]:
        """Wait up to ``timeout`` s for connecting servers; the names of those still connecting."""
        pending = [
            asyncio.ensure_future(s.settled.wait())
            for s in self.servers.values()
            if s.state == "connecting" and s.settled is not None
        ]
        if pending:
            await asyncio.wait(pending, timeout=timeout)
            for waiter in pending:
                waiter.cancel()
        return [s.name for s in self.servers.values() if s.state == "connecting"]

    async def reconnect(self, name: str, *, wait: bool = False) -> None:
        server = self.servers[name]
        await self._stop_server(server)
        if self._closed:
            return
        self._started = True
        self._connect(server)
        if wait and server.settled is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(server.settled.wait(), server.config.timeout + 1)

    async def set_enabled(self, name: str, enabled: bool) -> None:
        """Enable or disable ``name`` now and in its file."""
        from pi_coder.mcp.config import set_enabled

        server = self.servers[name]
        server.config.enabled = enabled
        set_enabled(server.config.path, name, enabled)
        if enabled:
            await self.reconnect(name)
        else:
            await self._stop_server(server)
            server.state = "disabled"
            self._install(server, [])

    async def _stop_server(self, server: McpServer) -> None:
        if server.connection is not None:
            server.connection.stop()
        task = server.task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 3.0)
            except (TimeoutError, Exception):
                task.cancel()
                with contextlib.suppress(asyncio.TimeoutError, Exception, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.gather(task, return_exceptions=True), 3.0)
        server.connection = None
        server.task = None

    async def close(self) -> None:
        """Stop every server (within about 3 s), then kill any group still alive."""
        if self._closed:
            return
        self._closed = True
        servers = list(self.servers.values())
        for server in servers:
            if server.connection is not None:
                server.connection.stop()
            if server.state == "connecting" and server.task is not None:
                server.task.cancel()
        tasks = [s.task for s in servers if s.task is not None and not s.task.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=3.0)
        for task in tasks:
            if not task.done():
                task.cancel()
        _kill_leftovers()

    def _notify(self, level: str, text: str) -> None:
        if self._notify_fn is not None:
            self._notify_fn(level, text)

    # ------------------------------------------------------------------ reporting

    async def command(self, args: str) -> list[str]:
        """``/mcp [reconnect|enable|disable <server>]``: act, then the listing (``lines``)."""
        words = args.split()
        if not words:
            return self.lines()
        action, names = words[0], words[1:]
        if action not in ("reconnect", "enable", "disable") or len(names) != 1:
            return ["Usage: /mcp [reconnect|enable|disable <server>]"]
        name = names[0]
        if name not in self.servers:
            return [f'No MCP server "{name}". Servers: {", ".join(self.servers) or "none"}']
        if action == "reconnect":
            await self.reconnect(name, wait=True)
        else:
            try:
                await self.set_enabled(name, action == "enable")
            except (OSError, ValueError) as exc:
                return [f'Could not {action} "{name}": {exc}']
            settled = self.servers[name].settled
            if action == "enable" and settled is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(settled.wait(), self.servers[name].config.timeout + 1)
        return self.lines()

    def lines(self) -> list[str]:
        """The ``/mcp`` listing: failures first, one block per server."""
        order = {"failed": 0, "disconnected": 1, "connecting": 2, "connected": 3, "disabled": 4}
        out: list[str] = []
        for server in sorted(self.servers.values(), key=lambda s: (order.get(s.state, 5), s.name)):
            cfg = server.config
            out.append(f"{server.name}: {server.status()} ({cfg.exposure}, {cfg.source}) {cfg.describe()}")
            for agent_name in server.tool_names:
                out.append(f"  {agent_name}")
            if server.error:
                out.append(f"  error: {server.error}")
            tail = server.stderr_tail.strip()
            if tail and server.state in ("failed", "disconnected"):
                out.extend(f"  stderr: {line}" for line in tail.splitlines()[-5:])
        out.extend(f"config: {e}" for e in self.config.errors)
        return out or ["No MCP servers configured."]


class _ToolError(Exception):
    """An ``isError`` result: the loop turns the message into an error result."""

    def __init__(self, content: list[Any], details: dict[str, Any]) -> None:
        super().__init__("\n".join(getattr(b, "text", "") for b in content if getattr(b, "text", None)))
        self.content = content
        self.details = details


_CLIENT_IMPORT: asyncio.Future[Any] | None = None


async def _import_client() -> Any:
    """``pi_coder.mcp.client`` imported once, in a worker thread (shared by every server)."""
    global _CLIENT_IMPORT
    import sys

    module = sys.modules.get("pi_coder.mcp.client")
    if module is not None:
        return module
    if _CLIENT_IMPORT is None or _CLIENT_IMPORT.get_loop() is not asyncio.get_running_loop():
        import importlib

        _CLIENT_IMPORT = asyncio.ensure_future(asyncio.to_thread(importlib.import_module, "pi_coder.mcp.client"))
    return await asyncio.shield(_CLIENT_IMPORT)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return _describe(inner)
    text = str(exc).strip()
    if not text or "Connection closed" in text:
        return "the server exited during the handshake" if not text else text
    return text.splitlines()[0]
