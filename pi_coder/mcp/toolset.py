"""The session's MCP tools (docs/mcp.md#tools): which are active or deferred, and the calls.

:class:`McpToolset` belongs to one :class:`~pi_coder.mcp.manager.McpManager` (which owns the
connections). As servers connect, reconnect or change their tool lists the manager hands their
listed tools to :meth:`McpToolset.install`; ``direct`` tools join the session's tool list,
``deferred`` ones wait for ``tool_search``. :meth:`McpToolset.call` runs ``tools/call`` with the
server's timeout, reconnecting once when the server dropped or forgot the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pi_coder.mcp.seams import RESOURCE_TOOLS

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentTool
    from pi_coder.mcp.client import Connection
    from pi_coder.mcp.seams import ServerHost
    from pi_coder.mcp.server import McpServer

__all__ = ["DIRECT_LIMIT", "SEARCH_TOOL", "McpToolset", "ToolError"]


SEARCH_TOOL = "tool_search"
"""The name of :func:`pi_coder.mcp.search.search_tool`'s tool."""

DIRECT_LIMIT = 40
"""More direct MCP tools than this: one notice suggests ``deferred`` (docs/mcp.md#tools)."""


class McpToolset:
    """The agent tools of one manager's servers (see the module docstring)."""

    def __init__(self, manager: ServerHost) -> None:
        self.manager = manager
        self._loaded: set[str] = set()
        """Deferred tools ``tool_search`` has declared (they stay active)."""
        self._search: AgentTool | None = None
        self._tools_changed = False
        self._suggested = False
        self._chained: Callable[[Any, Any], Any] | None = None
        self._resource_tools: list[AgentTool] | None = None
        self._resource_deferred: dict[str, AgentTool] = {}

    def attach(self, session: Any) -> None:
        """Chain the agent's between-turns hook so tool changes count from the next turn."""
        agent = getattr(session, "agent", None)
        if agent is not None and hasattr(agent, "prepare_next_turn_with_context"):
            self._chained = agent.prepare_next_turn_with_context
            agent.prepare_next_turn_with_context = self.next_turn
        if session is not None:
            self.place(set(), [], [])  # tool_search from the start if some server may defer tools

    def install(self, server: McpServer, tools: list[dict[str, Any]]) -> None:
        """Replace ``server``'s agent tools in the session by those of ``tools``.

        ``direct`` tools become active; ``deferred`` ones wait in ``server.deferred`` until
        ``tool_search`` finds them (then they stay active); ``hidden`` ones are left out.
        """
        from fnmatch import fnmatchcase

        from pi_coder.mcp.tools import tool_name

        old = set(server.tool_names)
        taken = {n for s in self.manager.servers.values() if s is not server for n in s.tool_names}
        if self.manager.session is not None:
            taken |= {t.name for t in self.manager.session.agent.state.tools if t.name not in old}
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
            if self.manager.tool_filter is not None and not any(fnmatchcase(name, p) for p in self.manager.tool_filter):
                continue
            if self.excluded(name):
                continue
            agent_tool = self.agent_tool(server, name, tool)
            if exposure == "deferred" and name not in self._loaded:
                server.deferred[name] = agent_tool
            else:
                built.append(agent_tool)
        self.place(old, built, [t for s in self.manager.servers.values() for t in s.deferred.values()])
        self.suggest_deferred()

    def excluded(self, name: str) -> bool:
        """Whether ``--exclude-tools`` removes the tool ``name`` (an exact name or a ``*`` pattern)."""
        from fnmatch import fnmatchcase

        return any(fnmatchcase(name, p) if "*" in p else name == p for p in self.manager.tool_exclude)

    def place(self, old: set[str], active: list[AgentTool], deferred: list[AgentTool]) -> None:
        """Put ``active`` in the session's tools (and the extensions' pool) instead of ``old``;
        ``tool_search`` is active while any ``deferred`` tool waits to be found."""
        session = self.manager.session
        if session is None:
            return
        remove = set(old) | set(RESOURCE_TOOLS)
        resource_active, resource_deferred = self._resources()
        active = [*active, *resource_active]
        deferred = [*deferred, *resource_deferred]
        searching = not self.excluded(SEARCH_TOOL) and (
            bool(deferred) or any(s.config.enabled and s.config.may_defer() for s in self.manager.servers.values())
        )
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

    def _resources(self) -> tuple[list[AgentTool], list[AgentTool]]:
        """The resource tools to make active and to defer (docs/mcp.md#resources)."""
        from pi_coder.mcp.resources import resource_exposure, resource_tools

        self._resource_deferred = {}
        exposure = resource_exposure(list(self.manager.servers.values()))
        if exposure is None:
            return [], []
        if self._resource_tools is None:
            self._resource_tools = resource_tools(self)
        tools = [t for t in self._resource_tools if self.mcp_tool_allowed(t.name)]
        if exposure == "direct":
            return tools, []
        self._resource_deferred = {t.name: t for t in tools if t.name not in self._loaded}
        return [t for t in tools if t.name in self._loaded], list(self._resource_deferred.values())

    def mcp_tool_allowed(self, name: str) -> bool:
        """For a tool that counts as an MCP tool without an ``mcp__`` name (the resource tools):
        ``--tools`` with ``mcp__`` entries must name or match it; ``--exclude-tools 'mcp__*'`` drops it."""
        from fnmatch import fnmatchcase

        allow = self.manager.tool_filter
        if allow is not None and not any(fnmatchcase(name, p) for p in allow):
            return False
        return not (self.excluded(name) or self.excluded(f"mcp__{name}"))

    def suggest_deferred(self) -> None:
        """One notice past ``DIRECT_LIMIT`` direct tools, counted once no enabled server is still connecting."""
        if any(s.config.enabled and s.state == "connecting" for s in self.manager.servers.values()):
            return
        names = {n for s in self.manager.servers.values() for n in s.tool_names}
        session = self.manager.session
        if session is not None:  # what is declared (not what --tools or --exclude-tools left out)
            count = sum(1 for t in session.agent.state.tools if t.name in names)
        else:
            count = sum(len(s.tool_names) - len(s.deferred) for s in self.manager.servers.values())
        if count > DIRECT_LIMIT and not self._suggested:
            self._suggested = True
            self.manager.notify(
                "warning",
                f"{count} MCP tools are declared to the model; give large servers "
                '"exposure": "deferred" in mcp.json so tool_search declares only the tools needed',
            )

    async def before_search(self) -> None:
        """``tool_search`` was called: connect now, wait for servers that may defer tools and still connect."""
        self.manager.start()
        waiting = [s for s in self.manager.servers.values() if s.config.may_defer() and s.state == "connecting"]
        if waiting:
            await self.manager.wait_connecting(max(s.config.timeout for s in waiting))

    def deferred_tools(self) -> list[AgentTool]:
        """The deferred tools ``tool_search`` has not declared yet."""
        return [*(t for s in self.manager.servers.values() for t in s.deferred.values()), *self._resource_deferred.values()]

    def declare(self, names: list[str]) -> None:
        """Make the deferred tools ``names`` active (``tool_search`` found them); from the next model call."""
        found: list[AgentTool] = []
        for server in self.manager.servers.values():
            for name in names:
                tool = server.deferred.pop(name, None)
                if tool is not None:
                    found.append(tool)
                    self._loaded.add(name)
        resources = [n for n in names if n in self._resource_deferred]
        self._loaded.update(resources)  # place() makes them active
        if found or resources:
            self.place(set(), found, self.deferred_tools())

    def next_turn(self, turn: Any, signal: Any) -> Any:
        """Between the turns of a run: tools that joined or left since (servers, ``tool_search``) count now."""
        update = self._chained(turn, signal) if self._chained is not None else None
        if self._tools_changed and self.manager.session is not None:
            self._tools_changed = False
            turn.context.tools = list(self.manager.session.agent.state.tools)
        return update

    def agent_tool(self, server: McpServer, name: str, tool: dict[str, Any]) -> AgentTool:
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

    async def live_connection(self, server_name: str) -> Connection:
        """The server's live connection; a dropped or failed server is reconnected once first."""
        server = self.manager.servers[server_name]
        live = server.connection is not None and server.connection.session is not None
        if server.state == "connected" and not live and server.task is not None:
            # The server has just dropped; let its task record that before reconnecting.
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(server.task), 3.0)
        if server.state in ("disconnected", "failed") and server.config.enabled and not self.manager.closed:
            await self.manager.reconnect(server_name, wait=True)  # a dropped server: reconnect once
        connection = server.connection
        if server.state != "connected" or connection is None:
            raise RuntimeError(f'MCP server "{server_name}" is {server.state}' + (f": {server.error}" if server.error else ""))
        return connection

    async def request(self, server_name: str, op: Callable[[Connection], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """A read-only request (``resources/*``, ``prompts/*``) bounded by the server's timeout.

        A lost HTTP session re-initializes once; a transient HTTP error (408, 429, 5xx) is tried
        once more (tool calls are not: the server may have run them). Errors name status and body.
        """
        server = self.manager.servers[server_name]
        connection = await self.live_connection(server_name)
        try:
            return await asyncio.wait_for(op(connection), server.config.timeout)
        except TimeoutError:
            raise RuntimeError(f'MCP server "{server_name}" did not answer within {server.config.timeout:g} s') from None
        except Exception as exc:
            if self.manager.closed:
                raise
            if connection.session_expired(exc):
                await self.manager.reconnect(server_name, wait=True)
                connection = await self.live_connection(server_name)
            elif not connection.transient_error():
                raise _with_status(exc, connection) from None
        try:
            return await asyncio.wait_for(op(connection), server.config.timeout)
        except TimeoutError:
            raise RuntimeError(f'MCP server "{server_name}" did not answer within {server.config.timeout:g} s') from None
        except Exception as exc:
            raise _with_status(exc, connection) from None

    async def call(self, server_name: str, tool: str, arguments: dict[str, Any], signal: Any, on_update: Any) -> Any:
        """Run ``tools/call`` with the server's timeout (restarted by progress); abort cancels it."""
        from pi_coder.agent.types import AgentToolResult
        from pi_coder.ai.types import TextContent
        from pi_coder.mcp.tools import convert_result

        server = self.manager.servers[server_name]
        connection = await self.live_connection(server_name)
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
            result = await self.call_once(server, connection, tool, arguments, progress, deadline, signal)
        except Exception as exc:
            if not connection.session_expired(exc) or self.manager.closed:
                raise _with_status(exc, connection) from None
            # The HTTP server forgot the session (restarted, expired): initialize again, retry once.
            await self.manager.reconnect(server_name, wait=True)
            renewed = server.connection
            if server.state != "connected" or renewed is None:
                raise RuntimeError(f'MCP server "{server_name}" is {server.state}' + (f": {server.error}" if server.error else "")) from None
            try:
                result = await self.call_once(server, renewed, tool, arguments, progress, deadline, signal)
            except Exception as again:
                raise _with_status(again, renewed) from None
        content, details, is_error = convert_result(server_name, tool, result)
        if is_error:
            raise ToolError(content, details)
        return AgentToolResult(content=content, details=details)

    async def call_once(
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
                if server.asking:  # the user is answering the server's question: no timeout meanwhile
                    deadline[0] = time.monotonic() + timeout
                elif time.monotonic() >= deadline[0]:
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


def _with_status(exc: Exception, connection: Connection) -> Exception:
    """``exc``, or for an HTTP error status an error that names the status and body."""
    from mcp.shared.exceptions import MCPError  # loaded: the connection imported the SDK

    status = connection.http_error()
    if not status or not isinstance(exc, MCPError):
        return exc
    return RuntimeError(f"{exc} ({status})")


class ToolError(Exception):
    """An ``isError`` result: the loop turns the message into an error result."""

    def __init__(self, content: list[Any], details: dict[str, Any]) -> None:
        super().__init__("\n".join(getattr(b, "text", "") for b in content if getattr(b, "text", None)))
        self.content = content
        self.details = details
