"""OAuth sign-in for Streamable HTTP servers (docs/mcp.md#oauth-sign-in): the flow, and stored tokens on requests.

:func:`login` runs the MCP authorization flow with the SDK's ``OAuthClientProvider``: an
unauthenticated ``initialize`` is answered 401, the provider reads the protected-resource
metadata the ``WWW-Authenticate`` header names (RFC 9728), the authorization server's metadata
(RFC 8414), registers a client (RFC 7591) unless one is configured or stored, and sends the user
to the authorization page with a PKCE challenge; the browser comes back to a loopback listener
on 127.0.0.1 (:class:`Loopback`), the code is exchanged for tokens, and the ``initialize`` is
sent again with them. Client and tokens go to ``mcp-auth.json`` (:mod:`pi_coder.mcp.auth_store`).

Later connections use :mod:`pi_coder.mcp.oauth_tokens`. This module is imported only by
``login``/``logout`` (the shell commands, ``/mcp login|logout``).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2

from pi_coder.mcp import auth_store
from pi_coder.mcp.config import ServerConfig

if TYPE_CHECKING:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

__all__ = ["LoginError", "Loopback", "login", "logout", "show_in_browser"]

LOGIN_TIMEOUT = 300.0
"""Seconds the whole sign-in may take, the user's time in the browser included."""


class LoginError(Exception):
    """Sign-in failed; the message says why in one line."""


def _check(config: ServerConfig) -> str:
    if config.transport != "http" or not config.url:
        raise LoginError(f'"{config.name}" is not an HTTP server; OAuth sign-in applies to HTTP servers only')
    if any(k.lower() == "authorization" for k in config.headers):
        raise LoginError(f'"{config.name}" sends its own Authorization header; remove it from mcp.json to sign in with OAuth')
    return config.url


# ---------------------------------------------------------------------------------------- loopback


_PAGE = (
    "<!doctype html><meta charset=utf-8><title>pi</title>"
    "<body style='font-family:sans-serif;margin:3em'><h2>{title}</h2><p>{text}</p></body>"
)


class Loopback:
    """The redirect target of the authorization page: ``http://127.0.0.1:<port>/callback``.

    :meth:`wait` returns the code, state and issuer of the first request to ``/callback`` (or
    of a redirected URL the user pasted, :meth:`complete`); an ``error`` in it raises
    :class:`LoginError`. Other paths get 404.
    """

    def __init__(self, server_name: str) -> None:
        self.server_name = server_name
        self.port = 0
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def start(self, port: int, *, fixed: bool) -> None:
        """Listen on ``port`` (0: any); when it is taken, on any port unless ``fixed``."""
        for candidate in (port, 0) if port and not fixed else (port,):
            try:
                self._server = await asyncio.start_server(self._serve, "127.0.0.1", candidate)
            except OSError as exc:
                error = exc
                continue
            self.port = self._server.sockets[0].getsockname()[1]
            return
        raise LoginError(f"cannot listen on 127.0.0.1:{port} for the sign-in redirect: {error.strerror or error}")

    def complete(self, url: str) -> bool:
        """Take a redirected URL the user pasted; False when it carries no code or error."""
        query = parse_qs(urlsplit(url.strip()).query)
        if "code" not in query and "error" not in query:
            return False
        self._take(query)
        return True

    def _take(self, query: dict[str, list[str]]) -> None:
        if self._result.done():
            return
        if "error" in query:
            detail = (query.get("error_description") or [""])[0]
            self._result.set_exception(
                LoginError(f"the authorization server refused: {query['error'][0]}" + (f" ({detail})" if detail else ""))
            )
            return
        self._result.set_result({k: v[0] for k, v in query.items() if v})

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("ascii", "replace")
            parts = urlsplit(target)
            query = parse_qs(parts.query)
            if parts.path != "/callback" or ("code" not in query and "error" not in query):
                status, page = "404 Not Found", _PAGE.format(title="Not found", text="")
            else:
                self._take(query)
                ok = "error" not in query
                status = "200 OK"
                title = "Signed in" if ok else "Sign-in failed"
                text = (
                    f"pi is signed in to {html.escape(self.server_name)}; you can close this tab."
                    if ok
                    else html.escape(query["error"][0])
                )
                page = _PAGE.format(title=title, text=text)
            body = page.encode("utf-8")
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("ascii") + body
            )
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, IndexError):
            pass
        finally:
            writer.close()

    async def wait(self) -> dict[str, str]:
        return await asyncio.shield(self._result)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()


# ------------------------------------------------------------------------------------------ login


class _Memory:
    """The SDK's ``TokenStorage`` for one sign-in: starts with the reusable client, keeps what the flow sets."""

    def __init__(self, client: OAuthClientInformationFull | None) -> None:
        self.client = client
        self.tokens: OAuthToken | None = None
        self.received_at = 0.0

    async def get_tokens(self) -> OAuthToken | None:
        return None  # a sign-in always asks the user again

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.received_at = time.time()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def _reusable_client(config: ServerConfig, record: dict[str, Any] | None, redirect_uri: str) -> OAuthClientInformationFull | None:
    """The configured client, or the stored one if registered for ``redirect_uri``."""
    from mcp.shared.auth import OAuthClientInformationFull

    options = config.oauth
    if options is not None and options.client_id:
        secret = None
        if options.client_secret:
            from pi_coder.mcp.config import expand_value

            secret = expand_value(options.client_secret) or None
        return OAuthClientInformationFull(
            client_id=options.client_id,
            client_secret=secret,
            redirect_uris=[redirect_uri],
            token_endpoint_auth_method="client_secret_post" if secret else "none",
        )
    stored = (record or {}).get("client")
    if not isinstance(stored, dict) or redirect_uri not in (stored.get("redirect_uris") or []):
        return None
    try:
        return OAuthClientInformationFull.model_validate(stored)
    except ValueError:
        return None


def _port(config: ServerConfig, record: dict[str, Any] | None) -> tuple[int, bool]:
    """``callbackPort`` (fixed), else the port of the stored client's redirect URI (to keep using that client)."""
    if config.oauth is not None and config.oauth.callback_port:
        return config.oauth.callback_port, True
    stored = (record or {}).get("client")
    for uri in (stored.get("redirect_uris") or []) if isinstance(stored, dict) else []:
        port = urlsplit(str(uri)).port
        if port:
            return port, False
    return 0, False


async def login(
    config: ServerConfig,
    *,
    show_url: Callable[[str], None],
    open_browser: bool = True,
    timeout: float = LOGIN_TIMEOUT,
    on_loopback: Callable[[Loopback], None] | None = None,
) -> str:
    """Sign in to ``config``'s server; the line to show on success.

    ``show_url`` gets the authorization URL (also opened in a browser unless ``open_browser`` is
    False); ``on_loopback`` gets the listener, for a pasted redirect URL. ``timeout`` bounds the
    whole sign-in.

    Raises:
        LoginError: Not an HTTP server, or sign-in failed or timed out (one line).
    """
    url = _check(config)
    from pi_coder.mcp.server import import_client

    # The SDK through the one shared import (in a thread): importing it here while a connecting
    # server's thread imports it would deadlock on the module locks.
    await import_client()
    record = auth_store.load(config.name, url)
    loopback = Loopback(config.name)
    port, fixed = _port(config, record)
    await loopback.start(port, fixed=fixed)
    if on_loopback is not None:
        on_loopback(loopback)
    try:
        async with asyncio.timeout(timeout):
            storage, provider = await _flow(config, url, record, loopback, show_url, open_browser)
    except TimeoutError:
        raise LoginError(f"sign-in to {config.name} did not finish within {timeout:g} s") from None
    except ValueError as exc:  # a header or client secret that does not expand
        raise LoginError(f"sign-in to {config.name} failed: {exc}") from None
    finally:
        await loopback.close()
    if storage.tokens is None:
        return f'MCP server "{config.name}" did not ask for sign-in; nothing stored'
    _store(config, url, storage, provider)
    return f'Signed in to MCP server "{config.name}"; tokens stored in {auth_store.auth_path()}'


async def _flow(
    config: ServerConfig,
    url: str,
    record: dict[str, Any] | None,
    loopback: Loopback,
    show_url: Callable[[str], None],
    open_browser: bool,
) -> tuple[_Memory, OAuthClientProvider]:
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    from pi_coder import __version__

    storage = _Memory(_reusable_client(config, record, loopback.redirect_uri))
    metadata = OAuthClientMetadata(
        client_name=(config.oauth.client_name if config.oauth else None) or "pi",
        redirect_uris=[loopback.redirect_uri],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        software_version=str(__version__),
    )

    async def redirect(auth_url: str) -> None:
        show_url(auth_url)
        if open_browser:
            await asyncio.to_thread(show_in_browser, auth_url)

    async def callback() -> AuthorizationCodeResult:
        answer = await loopback.wait()
        return AuthorizationCodeResult(code=answer.get("code", ""), state=answer.get("state"), iss=answer.get("iss"))

    provider = OAuthClientProvider(url, metadata, storage, redirect_handler=redirect, callback_handler=callback)
    failure: list[BaseException] = []
    try:
        async with (
            httpx2.AsyncClient(headers=config.resolved_headers(), auth=provider, timeout=30) as client,
            streamable_http_client(url, http_client=client) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
    except LoginError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        failure.append(exc)
    if failure:
        raise LoginError(f"sign-in to {config.name} failed: {_reason(failure[0])}")
    return storage, provider


def _reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def show_in_browser(url: str) -> None:
    """Open ``url`` in a graphical browser (or ``$BROWSER``), never a text browser in pi's terminal;
    without one, nothing (the URL is shown to the user anyway). Blocking: call it in a thread."""
    import os
    import sys
    import webbrowser

    graphical = sys.platform == "darwin" or any(os.environ.get(k) for k in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"))
    if not graphical or not url.startswith(("https://", "http://")):
        return
    with contextlib.suppress(Exception):
        webbrowser.open(url)


def _store(config: ServerConfig, url: str, storage: _Memory, provider: OAuthClientProvider) -> None:
    tokens = storage.tokens
    assert tokens is not None
    context = provider.context
    record: dict[str, Any] = {
        "tokens": tokens.model_dump(mode="json", exclude_none=True),
        "token_endpoint": (
            str(context.oauth_metadata.token_endpoint)
            if context.oauth_metadata is not None
            else urljoin(url, "/token")  # no metadata: the SDK's fallback, the server's origin
        ),
    }
    if tokens.expires_in:
        record["expires_at"] = auth_store.expires_at(storage.received_at, tokens.expires_in)
    if storage.client is not None:
        record["client"] = storage.client.model_dump(mode="json", exclude_none=True)
    if context.should_include_resource_param(context.protocol_version):
        record["resource"] = context.get_resource_url()
    auth_store.save(config.name, url, record)


def logout(config: ServerConfig) -> bool:
    """Forget ``config``'s client and tokens; False when none were stored."""
    if not config.url:
        return False
    return auth_store.delete(config.name, config.url)
