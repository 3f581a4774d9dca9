"""Stored OAuth tokens on a connection's requests (docs/mcp.md#oauth-sign-in); no SDK needed.

:class:`StoredTokenAuth` sends the access token ``login`` stored, refreshes it
(``grant_type=refresh_token`` at the stored token endpoint, with the stored client and resource)
when it has expired or the server answers 401, saves the new tokens, and otherwise lets the 401
through, which marks the server ``needs sign-in``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator
from typing import Any

import httpx2

from pi_coder.mcp import auth_store
from pi_coder.mcp.config import ServerConfig

__all__ = ["StoredTokenAuth", "stored_auth"]



def stored_auth(config: ServerConfig) -> StoredTokenAuth | None:
    """The auth of a connection to ``config`` when tokens are stored for it (and it sets no Authorization header)."""
    if config.transport != "http" or not config.url or any(k.lower() == "authorization" for k in config.headers):
        return None
    record = auth_store.load(config.name, config.url)
    if record is None or not isinstance(record.get("tokens"), dict):
        return None
    return StoredTokenAuth(config.name, config.url, record)


class StoredTokenAuth(httpx2.Auth):
    """Bearer the stored access token; refresh it when expired or refused (see the module docstring)."""

    def __init__(self, name: str, url: str, record: dict[str, Any]) -> None:
        self.name, self.url, self.record = name, url, record
        self._lock = asyncio.Lock()

    @property
    def _access(self) -> str:
        return str(self.record["tokens"].get("access_token", ""))

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        used = self._access
        if auth_store.expired(self.record) and self._can_refresh():
            async with self._lock:
                if self._access == used:  # no other request refreshed meanwhile
                    self._adopt(used)
                    if auth_store.expired(self.record):
                        refreshed = yield self._refresh_request()
                        await self._take(refreshed)
        request.headers["Authorization"] = f"Bearer {self._access}"
        response = yield request
        if response.status_code != 401 or not self._can_refresh():
            return
        async with self._lock:
            # Refused, and no other request (nor another pi process) refreshed meanwhile.
            if self._access == used and not self._adopt(used):
                refreshed = yield self._refresh_request()
                if not await self._take(refreshed):
                    # Sent again as it was, so its 401 (not the refusal) is the answer: needs sign-in.
                    yield request
                    return
        request.headers["Authorization"] = f"Bearer {self._access}"
        yield request

    def _adopt(self, used: str) -> bool:
        """Take the file's tokens when another pi process refreshed them since ``used`` (its
        refresh rotated ours away, so ours would be refused); True when it did."""
        on_disk = auth_store.load(self.name, self.url)
        tokens = on_disk.get("tokens") if on_disk else None
        if not on_disk or not isinstance(tokens, dict) or tokens.get("access_token") in (None, used):
            return False
        self.record = on_disk
        return True

    def _can_refresh(self) -> bool:
        return bool(self.record["tokens"].get("refresh_token") and self.record.get("token_endpoint"))

    def _refresh_request(self) -> httpx2.Request:
        client = self.record.get("client") or {}
        data = {
            "grant_type": "refresh_token",
            "refresh_token": str(self.record["tokens"]["refresh_token"]),
            "client_id": str(client.get("client_id", "")),
        }
        if self.record.get("resource"):
            data["resource"] = str(self.record["resource"])
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if client.get("client_secret") and client.get("token_endpoint_auth_method") == "client_secret_basic":
            import base64
            from urllib.parse import quote

            pair = f"{quote(str(client['client_id']), safe='')}:{quote(str(client['client_secret']), safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif client.get("client_secret"):
            data["client_secret"] = str(client["client_secret"])
        return httpx2.Request("POST", str(self.record["token_endpoint"]), data=data, headers=headers)

    async def _take(self, response: httpx2.Response) -> bool:
        """Keep and save the refreshed tokens; False when the refresh was refused."""
        await response.aread()
        if response.status_code != 200:
            return False
        try:
            tokens = response.json()
        except ValueError:
            return False
        if not isinstance(tokens, dict) or not isinstance(tokens.get("access_token"), str):
            return False
        old = self.record["tokens"]
        tokens.setdefault("refresh_token", old.get("refresh_token"))
        tokens.setdefault("scope", old.get("scope"))
        self.record["tokens"] = {k: v for k, v in tokens.items() if v is not None}
        expires_in = tokens.get("expires_in")
        if isinstance(expires_in, int | float) and expires_in > 0:
            self.record["expires_at"] = auth_store.expires_at(time.time(), expires_in)
        else:
            self.record.pop("expires_at", None)
        with contextlib.suppress(OSError):
            auth_store.save(self.name, self.url, self.record)
        return True
