"""The MCP servers of one process (docs/mcp.md#start-up): background connections, reload, shutdown.

``McpManager(config, cwd)`` is built at start-up (no SDK import); ``attach(session, notify)``
names the session whose tools the servers' tools join, and ``start()`` (called once a loop runs, or by the first
prompt) connects every enabled server in parallel in background tasks. Each connected server's
tools join the session's tool list as they arrive; a server that fails, hangs or exits is
``failed`` (one notice with its stderr tail) and blocks nothing. ``close()`` stops them all within
3 s; an ``atexit`` backstop kills any process group still alive.

The agent tools built from the servers' tool lists are :class:`~pi_coder.mcp.toolset.McpToolset`'s
(``manager.toolset``); the per-server state is :class:`~pi_coder.mcp.server.McpServer`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_coder.mcp.config import ConfigResult, ignored_note
from pi_coder.mcp.server import McpServer, describe_error, import_client, kill_leftovers, track_group
from pi_coder.mcp.toolset import DIRECT_LIMIT, SEARCH_TOOL, McpToolset

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentTool
    from pi_coder.mcp.elicit import ElicitHandler

Notify = Callable[[str, str], None]
"""``notify(level, text)``: one notice for the user (level ``info``, ``warning`` or ``error``)."""

__all__ = ["DIRECT_LIMIT", "SEARCH_TOOL", "McpManager", "McpServer", "Notify"]


class McpManager:
    """Owns the connections of the configured servers (see the module docstring)."""

    def __init__(
        self,
        config: ConfigResult,
        cwd: str,
        *,
        startup_wait: float = 10.0,
        tool_filter: list[str] | None = None,
        tool_exclude: list[str] | None = None,
    ) -> None:
        self.cwd = cwd
        self.config = config
        self.startup_wait = startup_wait
        self.tool_filter = tool_filter
        """``--tools`` entries starting with ``mcp__`` (None: every MCP tool may be declared)."""
        self.tool_exclude = list(tool_exclude or [])
        """``--exclude-tools`` names or ``*`` patterns: MCP tools (and ``tool_search``) they match are dropped."""
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
        self.toolset = McpToolset(self)
        self.elicit: ElicitHandler | None = None
        """Puts a server's ``elicitation/create`` to the user (set by the mode; None: declined)."""

    # ------------------------------------------------------------------ wiring

    def attach(self, session: Any, notify: Notify) -> None:
        self.session = session
        self._notify_fn = notify
        self.toolset.attach(session)

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
            self.notify(*notice)
        for server in self.servers.values():
            cfg = server.config
            if cfg.enabled and "codemode" in (cfg.exposure, *cfg.tool_exposure.values()):
                self.notify(
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
            client = await import_client()
            Connection, Tail = client.Connection, client.Tail  # noqa: N806

            server.tail = Tail()
            connection = Connection(
                server.config,
                self.cwd,
                tail=server.tail,
                on_pid=lambda pid: self._set_pid(server, pid),
                on_tools_changed=lambda: self._relist_soon(server),
                on_log=lambda level, logger, text: self._log(server, level, logger, text),
                on_elicit=lambda _name, request: self._elicit(server, request),
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
                self.notify("warning", f'MCP server "{server.name}" disconnected; the next call reconnects')
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
                self.notify("warning", f'MCP server "{server.name}" needs sign-in: {exc}')
                return
            server.state = "failed"
            server.error = describe_error(exc)
            self._install(server, [])
            tail = server.stderr_tail.strip()
            more = f"\n{tail[-500:]}" if tail else ""
            self.notify("warning", f'MCP server "{server.name}" failed: {server.error}{more}')
        finally:
            self._settle(server)

    @staticmethod
    def _settle(server: McpServer) -> None:
        if server.settled is not None:
            server.settled.set()

    def _set_pid(self, server: McpServer, pid: int | None) -> None:
        track_group(server.pid, pid)
        server.pid = pid

    def _connected(self, server: McpServer, tools: list[dict[str, Any]]) -> None:
        server.state = "connected"
        server.tools = tools
        if server.connection is not None:
            server.capabilities = server.connection.capabilities
            server.instructions = server.connection.instructions
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

    # ------------------------------------------------------------------ tools (McpToolset)

    async def before_search(self) -> None:
        await self.toolset.before_search()

    def deferred_tools(self) -> list[AgentTool]:
        return self.toolset.deferred_tools()

    def declare(self, names: list[str]) -> None:
        self.toolset.declare(names)

    async def call(self, server_name: str, tool: str, arguments: dict[str, Any], signal: Any, on_update: Any) -> Any:
        """Run ``tools/call`` on ``server_name`` (see :meth:`McpToolset.call`)."""
        return await self.toolset.call(server_name, tool, arguments, signal, on_update)

    async def expand_prompt(self, text: str) -> tuple[str, list[Any]] | None:
        """``/mcp__<server>__<prompt> args`` as ``(prompt text, images)`` (:mod:`pi_coder.mcp.prompts`);
        None for other text. Raises ``PromptError`` (a ``ValueError``) with the one line to show."""
        from pi_coder.mcp.prompts import expand

        return await expand(self, text)

    def _install(self, server: McpServer, tools: list[dict[str, Any]]) -> None:
        self.toolset.install(server, tools)

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

    async def retry_sign_ins(self, timeout: float) -> None:
        """Reconnect the servers that need sign-in and have tokens now (``pi mcp login`` in another
        shell); wait at most ``timeout`` s for them (docs/mcp.md#oauth-sign-in)."""
        waiting = [s for s in self.servers.values() if s.state == "needs sign-in" and s.config.url]
        if not waiting or self._closed:
            return
        from pi_coder.mcp.auth_store import signed_in

        ready = [s for s in waiting if signed_in(s.name, s.config.url or "")]
        tasks = [asyncio.ensure_future(self.reconnect(s.name, wait=True)) for s in ready]
        for task in tasks:  # held until done, also past the wait
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def set_exposure(self, name: str, exposure: str) -> None:
        """Change the exposure of ``name`` now and in its file (an extension's server: this session only)."""
        from pi_coder.mcp.config import set_exposure

        server = self.servers[name]
        if server.config.source != "extension":
            set_exposure(server.config.path, name, exposure)
        server.config.exposure = exposure
        self._install(server, server.tools if server.state == "connected" else [])

    async def _elicit(self, server: McpServer, request: dict[str, Any]) -> dict[str, Any]:
        """A server's ``elicitation/create`` (docs/mcp.md#elicitation); its tool calls wait meanwhile."""
        if self.elicit is None or self._closed:
            return {"action": "decline"}
        server.asking += 1
        try:
            return await self.elicit(server.name, request)
        finally:
            server.asking -= 1

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
        kill_leftovers()

    @property
    def closed(self) -> bool:
        """``close()`` was called: nothing reconnects any more."""
        return self._closed

    def notify(self, level: str, text: str) -> None:
        """Pass a notice to the mode (dropped before ``attach``)."""
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
            return ["Usage: /mcp [reconnect|enable|disable|login|logout <server>]"]
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
        out.extend(ignored_note(path) for path in self.config.ignored)
        return out or ["No MCP servers configured."]
