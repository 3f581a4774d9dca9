"""An OAuth-protected Streamable HTTP MCP server with its own authorization server, for the sign-in tests.

``python oauth_server.py PORT LOG [--expires S]`` serves on 127.0.0.1:PORT:

- ``/mcp``: the SDK's MCP server (tool ``whoami``); without a valid bearer token it answers 401
  with ``WWW-Authenticate: Bearer resource_metadata=".../.well-known/oauth-protected-resource/mcp"``;
- ``/.well-known/oauth-protected-resource/mcp`` (RFC 9728) naming the issuer ``/auth``;
- ``/.well-known/oauth-authorization-server/auth`` (RFC 8414) and under ``/auth``: ``register``
  (RFC 7591), ``authorize`` (approves at once: 302 to the redirect URI with code, state and iss;
  checks the client, the redirect URI and an S256 challenge), ``token`` (authorization_code with
  the PKCE verifier, refresh_token rotating the refresh token);
- ``POST /admin/revoke``: every access token stops working (their refresh tokens still do, unless
  ``?refresh=1``).

Access tokens live ``--expires`` seconds (default 3600). Each event is a JSON line in LOG.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import time
from typing import Any
from urllib.parse import urlencode

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

PORT = int(sys.argv[1])
LOG = sys.argv[2]
EXPIRES = int(sys.argv[sys.argv.index("--expires") + 1]) if "--expires" in sys.argv else 3600
BASE = f"http://127.0.0.1:{PORT}"
ISSUER = f"{BASE}/auth"

clients: dict[str, dict[str, Any]] = {}
codes: dict[str, dict[str, Any]] = {}
access: dict[str, float] = {}
refresh: dict[str, str] = {}


def log(event: str, **fields: Any) -> None:
    with open(LOG, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"event": event, **fields}) + "\n")


mcp = MCPServer("protected")


@mcp.tool()
def whoami() -> str:
    """Say who is signed in."""
    return "signed-in user"


async def resource_metadata(request: Request) -> Response:
    return JSONResponse({"resource": f"{BASE}/mcp", "authorization_servers": [ISSUER], "scopes_supported": ["mcp"]})


async def server_metadata(request: Request) -> Response:
    return JSONResponse(
        {
            "issuer": ISSUER,
            "authorization_endpoint": f"{ISSUER}/authorize",
            "token_endpoint": f"{ISSUER}/token",
            "registration_endpoint": f"{ISSUER}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ["mcp"],
            "authorization_response_iss_parameter_supported": True,
        }
    )


async def register(request: Request) -> Response:
    body = await request.json()
    client_id = "client-" + secrets.token_hex(4)
    clients[client_id] = {**body, "client_id": client_id, "token_endpoint_auth_method": "none"}
    log("register", client_id=client_id, client_name=body.get("client_name"), redirect_uris=body.get("redirect_uris"))
    return JSONResponse(clients[client_id], status_code=201)


async def authorize(request: Request) -> Response:
    q = request.query_params
    client = clients.get(q.get("client_id", ""))
    if client is None or q.get("redirect_uri") not in client.get("redirect_uris", []):
        return JSONResponse({"error": "invalid_client"}, status_code=400)
    if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
        return JSONResponse({"error": "invalid_request", "error_description": "PKCE S256 required"}, status_code=400)
    code = secrets.token_urlsafe(16)
    codes[code] = {"client_id": q["client_id"], "redirect_uri": q["redirect_uri"], "challenge": q["code_challenge"]}
    log("authorize", client_id=q["client_id"], resource=q.get("resource"), scope=q.get("scope"))
    target = q["redirect_uri"] + "?" + urlencode({"code": code, "state": q.get("state", ""), "iss": ISSUER})
    return RedirectResponse(target, status_code=302)


def _tokens() -> dict[str, Any]:
    token, again = "at-" + secrets.token_urlsafe(16), "rt-" + secrets.token_urlsafe(16)
    access[token] = time.time() + EXPIRES
    refresh[again] = token
    return {"access_token": token, "token_type": "Bearer", "expires_in": EXPIRES, "refresh_token": again, "scope": "mcp"}


async def token(request: Request) -> Response:
    form = await request.form()
    grant = form.get("grant_type")
    if grant == "authorization_code":
        entry = codes.pop(str(form.get("code")), None)
        verifier = str(form.get("code_verifier", ""))
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        if entry is None or entry["challenge"] != challenge or entry["redirect_uri"] != form.get("redirect_uri"):
            log("token_refused", grant=grant)
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        log("token", grant=grant, client_id=form.get("client_id"))
        return JSONResponse(_tokens())
    if grant == "refresh_token":
        old = str(form.get("refresh_token"))
        if old not in refresh:
            log("token_refused", grant=grant)
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        access.pop(refresh.pop(old), None)
        log("token", grant=grant, client_id=form.get("client_id"), resource=form.get("resource"))
        return JSONResponse(_tokens())
    return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)


async def revoke(request: Request) -> Response:
    access.clear()
    if request.query_params.get("refresh"):
        refresh.clear()
    log("revoke", refresh=bool(request.query_params.get("refresh")))
    return JSONResponse({})


oauth_app = Starlette(
    routes=[
        Route("/.well-known/oauth-protected-resource/mcp", resource_metadata),
        Route("/.well-known/oauth-authorization-server/auth", server_metadata),
        Route("/auth/register", register, methods=["POST"]),
        Route("/auth/authorize", authorize),
        Route("/auth/token", token, methods=["POST"]),
        Route("/admin/revoke", revoke, methods=["POST"]),
    ]
)
mcp_app = mcp.streamable_http_app(json_response=True)


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await mcp_app(scope, receive, send)
        return
    if scope["type"] != "http" or scope["path"] != "/mcp":
        await oauth_app(scope, receive, send)
        return
    header = dict(scope["headers"]).get(b"authorization", b"").decode()
    given = header[7:] if header.startswith("Bearer ") else ""
    if access.get(given, 0) < time.time():
        log("unauthorized", method=scope["method"], had_token=bool(given))
        challenge = f'Bearer resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp", scope="mcp"'
        await Response(status_code=401, headers={"WWW-Authenticate": challenge})(scope, receive, send)
        return
    await mcp_app(scope, receive, send)


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
