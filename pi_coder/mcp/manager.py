"""The MCP servers of one process (docs/mcp.md#start-up): background connections, tools, shutdown.

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

SEARCH_TOOL = "tool_search"
"""The name of :func:`pi_coder.mcp.search.search_tool`'s tool."""

DIRECT_LIMIT = 40
"""More direct MCP tools than this: one notice suggests ``deferred`` (docs/mcp.md#tools)."""


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
    """connecting, connected, failed, disconnected, disabled, needs sign-in."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """The server's tools as listed (JSON form)."""
    tool_names: dict[str, str] = field(default_factory=dict)
    """Agent tool name -> MCP tool name (direct and deferred tools)."""
    deferred: dict[str, AgentTool] = field(default_factory=dict)
    """Deferred tools not declared yet, by agent tool name."""
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
        self._background: set[asyncio.Task[Any]] = set()
        self._loaded: set[str] = set()
        """Deferred tools ``tool_search`` has declared (they stay active)."""
        self._search: AgentTool | None = None
        self._tools_changed = False
        self._suggested = False
        self._chained: Callable[[Any, Any], Any] | None = None

    # ------------------------------------------------------------------ wiring

    def attach(self, session: Any, notify: Notify) -> None:
        self.session = session
        self._notify_fn = notify
        agent = getattr(session, "agent", None)
        if agent is not None and hasattr(agent, "prepare_next_turn_with_context"):
            self._chained = agent.prepare_next_turn_with_context
            agent.prepare_next_turn_with_context = self._next_turn
        if session is not None:
            self._place(set(), [], [])  # tool_search from the start if some server may defer tools

    @property
    def started(self) -> bool:
        return self._started

    def needs_wait(self) -> bool:
        """Whether the first prompt waits: ``startup_wait`` > 0 and an enabled server may give direct tools."""
        return self.startup_wait > 0 and any(
            s.config.enabled and s.config.may_be_direct() for s in self.servers.values()
        )

    def start(self) -> None:
        """Connect every enabled server in the background (idempotent; needs a running loop)."""
        if self._started or self._closed:
            return
        self._started = True
        for notice in self._notices:
            self._notify(*notice)
        for server in self.servers.values():
            cfg = server.config
            if cfg.enabled and "codemode" in (cfg.exposure, *cfg.tool_exposure.values()):
                self._notify(
                    "info",
                    f'MCP server "{server.name}": "codemode" exposure needs a script sandbox pi_coder does not have; '
                    "those tools are deferred (tool_search declares them)",
                )
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
            if type(exc).__name__ == "NeedsSignIn":
                server.state = "needs sign-in"
                server.error = str(exc)
                self._install(server, [])
                self._notify("warning", f'MCP server "{server.name}" needs sign-in: {exc}')
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
        from pi_coder.mcp.logfile import append

        append(server.name, level, logger, text)

    # ------------------------------------------------------------------ tools

    def _install(self, server: McpServer, tools: list[dict[str, Any]]) -> None:
        """Replace ``server``'s agent tools in the session by those of ``tools``.

        ``direct`` tools become active; ``deferred`` ones wait in ``server.deferred`` until
        ``tool_search`` finds them (then they stay active); ``hidden`` ones are left out.
        """
        from fnmatch import fnmatchcase

        from pi_coder.mcp.tools import tool_name

        old = set(server.tool_names)
        taken = {n for s in self.servers.values() if s is not server for n in s.tool_names}
        if self.session is not None:
            taken |= {t.name for t in self.session.agent.state.tools if t.name not in old}
        server.tool_names = {}
        server.deferred = {}
        built: list[AgentTool] = []
        for tool in tools:
            exposure = server.config.exposure_of(str(tool.get("name")))
            if exposure == "hidden":
                continue
            name = tool_name(server.name, str(tool.get("name")), taken)
            taken.add(name)
            server.tool_names[name] = str(tool.get("name"))
            if self.tool_filter is not None and not any(fnmatchcase(name, p) for p in self.tool_filter):
                continue
            agent_tool = self._agent_tool(server, name, tool)
            if exposure == "deferred" and name not in self._loaded:
                server.deferred[name] = agent_tool
            else:
                built.append(agent_tool)
        self._place(old, built, [t for s in self.servers.values() for t in s.deferred.values()])
        self._suggest_deferred()

    def _place(self, old: set[str], active: list[AgentTool], deferred: list[AgentTool]) -> None:
        """Put ``active`` in the session's tools (and the extensions' pool) instead of ``old``;
        ``tool_search`` is active while any ``deferred`` tool waits to be found."""
        session = self.session
        if session is None:
            return
        remove = set(old)
        searching = bool(deferred) or any(s.config.enabled and s.config.may_defer() for s in self.servers.values())
        search: list[AgentTool] = []
        if searching:
            from pi_coder.mcp.search import search_tool

            search = [self._search or search_tool(self)]
        self._search = search[0] if search else None
        remove.add(SEARCH_TOOL)
        if session.extensions is not None:
            session.extensions.add_host_tools([*active, *search, *deferred], remove=sorted(remove))
        kept = [t for t in session.agent.state.tools if t.name not in remove]
        session.agent.state.tools = [*kept, *active, *search]
        self._tools_changed = True

    def _suggest_deferred(self) -> None:
        count = sum(len(s.tool_names) - len(s.deferred) for s in self.servers.values())
        if count > DIRECT_LIMIT and not self._suggested:
            self._suggested = True
            self._notify(
                "warning",
                f"{count} MCP tools are declared to the model; give large servers "
                '"exposure": "deferred" in mcp.json so tool_search declares only the tools needed',
            )

    async def before_search(self) -> None:
        """``tool_search`` was called: connect now, wait for servers that may defer tools and still connect."""
        self.start()
        waiting = [s for s in self.servers.values() if s.config.may_defer() and s.state == "connecting"]
        if waiting:
            await self.wait_connecting(max(s.config.timeout for s in waiting))

    def deferred_tools(self) -> list[AgentTool]:
        """The deferred tools ``tool_search`` has not declared yet."""
        return [t for s in self.servers.values() for t in s.deferred.values()]

    def declare(self, names: list[str]) -> None:
        """Make the deferred tools ``names`` active (``tool_search`` found them); from the next model call."""
        found: list[AgentTool] = []
        for server in self.servers.values():
            for name in names:
                tool = server.deferred.pop(name, None)
                if tool is not None:
                    found.append(tool)
                    self._loaded.add(name)
        if found:
            self._place(set(), found, self.deferred_tools())

    def _next_turn(self, turn: Any, signal: Any) -> Any:
        """Between the turns of a run: tools that joined or left since (servers, ``tool_search``) count now."""
        update = self._chained(turn, signal) if self._chained is not None else None
        if self._tools_changed and self.session is not None:
            self._tools_changed = False
            turn.context.tools = list(self.session.agent.state.tools)
        return update

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

        try:
            result = await self._call_once(server, connection, tool, arguments, progress, deadline, signal)
        except Exception as exc:
            if not connection.session_expired(exc) or self._closed:
                raise
            # The HTTP server forgot the session (restarted, expired): initialize again, retry once.
            await self.reconnect(server_name, wait=True)
            connection = server.connection
            if server.state != "connected" or connection is None:
                raise RuntimeError(f'MCP server "{server_name}" is {server.state}' + (f": {server.error}" if server.error else "")) from None
            result = await self._call_once(server, connection, tool, arguments, progress, deadline, signal)
        content, details, is_error = convert_result(server_name, tool, result)
        if is_error:
            raise _ToolError(content, details)
        return AgentToolResult(content=content, details=details)

    async def _call_once(
        self,
        server: McpServer,
        connection: Connection,
        tool: str,
        arguments: dict[str, Any],
        progress: Callable[[float, float | None, str | None], None],
        deadline: list[float],
        signal: Any,
    ) -> dict[str, Any]:
        """One ``tools/call``: ``deadline[0]`` (pushed on by progress) bounds it; abort cancels it."""
        timeout = server.config.timeout
        deadline[0] = time.monotonic() + timeout
        task = asyncio.ensure_future(connection.call_tool(tool, arguments, progress))
        listener = None
        if signal is not None:
            if signal.aborted:
                task.cancel()

            def listener(*_args: Any) -> None:
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
                    raise RuntimeError(f'MCP server "{server.name}" did not answer tools/call within {timeout:g} s')
            try:
                return task.result()
            except asyncio.CancelledError:
                raise RuntimeError("Aborted") from None
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            if signal is not None and listener is not None:
                with contextlib.suppress(Exception):
                    signal.remove_listener(listener)

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

    def reload(self, config: ConfigResult) -> list[str]:
        """``/reload`` (docs/mcp.md#lifetime-and-shutdown): servers whose configuration changed reconnect, removed ones
        stop, new ones connect, unchanged ones keep their connection (an ``enabled``, ``exposure`` or
        ``toolExposure`` change acts without reconnecting where it can). Returns the new config errors;
        the stopping and connecting run in the background (:meth:`wait_reloaded`)."""
        errors = [f"MCP: {e}" for e in config.errors if e not in self.config.errors]
        self.config = config
        for name in [n for n in self.servers if n not in config.servers]:
            gone = self.servers.pop(name)
            self._install(gone, [])
            self._spawn(self._stop_server(gone))
        for name, cfg in config.servers.items():
            server = self.servers.get(name)
            if server is None:
                server = self.servers[name] = McpServer(config=cfg, state="connecting" if cfg.enabled else "disabled")
                if cfg.enabled and self._started:
                    self._connect(server)
                continue
            changed = cfg.key(self.cwd) != server.config.key(self.cwd)
            was_enabled = server.config.enabled
            server.config = cfg
            if not cfg.enabled:
                if was_enabled:
                    self._spawn(self._disable(server))
            elif changed or not was_enabled:
                if self._started:
                    self._spawn(self.reconnect(name))
                else:
                    server.state = "connecting"
            else:
                self._install(server, server.tools if server.state == "connected" else [])
        return errors

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def wait_reloaded(self) -> None:
        """Wait for what :meth:`reload` started to stop or begin connecting."""
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    async def _disable(self, server: McpServer) -> None:
        await self._stop_server(server)
        server.state = "disabled"
        server.error = None
        self._install(server, [])

    async def set_enabled(self, name: str, enabled: bool) -> None:
        """Enable or disable ``name`` now and in its file."""
        from pi_coder.mcp.config import set_enabled

        server = self.servers[name]
        server.config.enabled = enabled
        set_enabled(server.config.path, name, enabled)
        if enabled:
            await self.reconnect(name)
        else:
            await self._disable(server)

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
        order = {"failed": 0, "needs sign-in": 1, "disconnected": 2, "connecting": 3, "connected": 4, "disabled": 5}
        out: list[str] = []
        for server in sorted(self.servers.values(), key=lambda s: (order.get(s.state, 5), s.name)):
            cfg = server.config
            out.append(f"{server.name}: {server.status()} ({cfg.exposure}, {cfg.source}) {cfg.describe()}")
            for agent_name in server.tool_names:
                out.append(f"  {agent_name}" + (" (deferred)" if agent_name in server.deferred else ""))
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
_CLIENT: Any = None


async def _import_client() -> Any:
    """``pi_coder.mcp.client`` imported once, in a daemon thread (shared by every server).

    A daemon thread, not the loop's executor: an exit while the SDK is still importing does not
    wait for the import to finish. ``sys.modules`` is not consulted: it holds the module from the
    start of its import, before it is complete.
    """
    global _CLIENT_IMPORT
    if _CLIENT is not None:
        return _CLIENT
    loop = asyncio.get_running_loop()
    if _CLIENT_IMPORT is None or _CLIENT_IMPORT.get_loop() is not loop:
        import importlib
        import threading

        future: asyncio.Future[Any] = loop.create_future()
        _CLIENT_IMPORT = future

        def settle(result: Any, error: BaseException | None) -> None:
            global _CLIENT
            if error is None:
                _CLIENT = result
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)

        def work() -> None:
            try:
                result, error = importlib.import_module("pi_coder.mcp.client"), None
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting task
                result, error = None, exc
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
                loop.call_soon_threadsafe(settle, result, error)

        threading.Thread(target=work, name="mcp-import", daemon=True).start()
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
