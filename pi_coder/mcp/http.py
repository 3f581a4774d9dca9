"""The HTTP side of a connection (docs/mcp.md#reconnect-and-logs): the streamable-HTTP transport
with the configured headers, the status and body of the last failed POST (the SDK reduces it to
a bare JSON-RPC error), and which connect failures are tried again.

Imported by :mod:`pi_coder.mcp.client` only; ``httpx2`` and the SDK's HTTP client are imported
inside the functions.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pi_coder.mcp.config import ServerConfig

__all__ = ["RETRY_DELAYS", "HttpStatus", "http_transport", "retriable"]


class HttpStatus:
    """The error status and body of the last POST, if it failed (the SDK turns it into a bare JSON-RPC error)."""

    def __init__(self) -> None:
        self.code: int | None = None
        self.body = ""

    async def hook(self, response: Any) -> None:
        if response.request.method != "POST":
            return
        self.code = response.status_code if response.status_code >= 400 else None
        self.body = ""
        if self.code is not None:
            with contextlib.suppress(Exception):
                data = await response.aread()
                self.body = data.decode("utf-8", "replace").strip()[:500]

    def describe(self) -> str:
        """``HTTP 400: <body>`` for the last failed POST ("" when it did not fail)."""
        if self.code is None:
            return ""
        return f"HTTP {self.code}" + (f": {self.body}" if self.body else "")


RETRY_DELAYS = (0.25, 1.0)
"""Waits before the second and third attempt of an HTTP connect (docs/mcp.md#reconnect-and-logs)."""


def retriable(exc: BaseException, status: int | None) -> bool:
    """A network error, 408, 429 or 5xx other than 501."""
    import httpx2

    if status is not None:
        return status in (408, 429) or (500 <= status < 600 and status != 501)
    if isinstance(exc, BaseExceptionGroup):
        return any(retriable(e, None) for e in exc.exceptions)
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
