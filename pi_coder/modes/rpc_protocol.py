"""What the RPC command handlers and the server share: the error type, the markers, the server's face.

``rpc_mode`` (the server) imports the handlers of ``rpc_commands``; the handlers see the server
only through :class:`RpcHost`, so neither module imports the other's internals.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.modes.jsonl import JsonLineWriter
    from pi_coder.modes.rpc_types import Command

__all__ = ["HANDLED", "NULL", "Handler", "RpcError", "RpcHost"]


class RpcError(Exception):
    """A command failed; the message becomes the response's ``error``."""


HANDLED = object()
"""Returned by a handler that writes its own response (now or later)."""

NULL = object()
"""Response data that is JSON ``null`` (Pi's "nothing to cycle to"); a plain None means no ``data``."""


class RpcHost(Protocol):
    """The server as a command handler sees it."""

    session: AgentSession
    writer: JsonLineWriter
    prompt_task: asyncio.Task[object] | None
    run_ended: bool
    aborts: int

    def respond(self, command: str, request_id: object, *, data: object = None, error: str | None = None) -> None: ...

    def spawn(self, coro: Awaitable[object]) -> asyncio.Task[object]: ...

    def busy(self) -> bool: ...

    def settling(self) -> bool: ...


Handler = Callable[[RpcHost, "Command"], Awaitable[object]]
"""``handler(server, command)``, the command parsed (``pi_coder.modes.rpc_types``): the response data, ``HANDLED``, or raises for an error response."""
