"""One configured MCP server's state, and the process groups of the stdio servers (docs/mcp.md#lifetime-and-shutdown).

:class:`McpServer` is what the manager (connections) and the toolset (agent tools) share about
one server. Every live stdio server's process group is recorded here so that every exit path
(``close``, a signal, ``atexit``) can kill what is left (:func:`kill_leftovers`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_coder.mcp.config import ServerConfig

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentTool
    from pi_coder.mcp.client import Connection, Tail

__all__ = ["McpServer", "describe_error", "import_client", "kill_leftovers", "track_group"]

_LIVE_GROUPS: set[int] = set()


def track_group(old: int | None, new: int | None) -> None:
    """A server's process group changed from ``old`` to ``new`` (either may be None)."""
    if old is not None:
        _LIVE_GROUPS.discard(old)
    if new is not None:
        _LIVE_GROUPS.add(new)


def kill_leftovers() -> None:
    """SIGKILL every stdio server's process group still recorded."""
    for pgid in list(_LIVE_GROUPS):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    _LIVE_GROUPS.clear()


atexit.register(kill_leftovers)


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


_CLIENT_IMPORT: asyncio.Future[Any] | None = None
_CLIENT: Any = None


async def import_client() -> Any:
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


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return describe_error(inner)
    text = str(exc).strip()
    if not text or "Connection closed" in text:
        return "the server exited during the handshake" if not text else text
    return text.splitlines()[0]
