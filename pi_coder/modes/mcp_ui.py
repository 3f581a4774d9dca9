"""What MCP servers ask of the user in a session: elicitation (docs/mcp.md#elicitation) and ``/mcp login|logout``
outside the TUI (docs/mcp.md#oauth-sign-in).

:func:`elicitation_handler` asks through the extension UI of the mode: a UI that shows forms
(the TUI) gets the whole request, one with dialogs only (RPC mode: ``extension_ui_request``
select and input) gets one dialog per field, and no UI (print and json mode, or no extension
runner) declines. :func:`account_command` signs in or out from ``/mcp login|logout <server>``
in print or RPC mode: the authorization URL comes as a notice, the browser is opened, the
command returns once the redirect arrived (or the sign-in timed out).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.mcp.elicit import ElicitHandler
    from pi_coder.mcp.manager import McpManager

__all__ = ["account_command", "elicitation_handler"]


def elicitation_handler(session: AgentSession) -> ElicitHandler:
    async def ask(server: str, request: dict[str, object]) -> dict[str, object]:
        from pi_coder.extensions.runner import ExtensionRunner
        from pi_coder.mcp.elicit import DECLINE, FormUI, ask_with_dialogs

        runner = session.extensions
        ui = runner.ui if isinstance(runner, ExtensionRunner) else None
        if ui is None or not getattr(ui, "has_ui", False):  # NoUI says so with has_ui = False
            return dict(DECLINE)
        if isinstance(ui, FormUI):
            return await ui.elicitation_form(server, request)
        return await ask_with_dialogs(ui, server, request)

    return ask


async def account_command(session: AgentSession, manager: McpManager, action: str, name: str) -> str:
    """``/mcp login|logout <name>`` without the TUI; the outcome as one line."""
    from pi_coder.core.events import Notice
    from pi_coder.mcp.oauth import LoginError, login, logout

    server = manager.servers.get(name)
    if server is None:
        return f'No MCP server "{name}". Servers: {", ".join(manager.servers) or "none"}'
    if action == "logout":
        forgot = logout(server.config)
        await manager.reconnect(name, wait=True)
        return f"Signed out of {name}." if forgot else f"{name} had no stored sign-in."

    def show(url: str) -> None:
        # A warning, so text print mode shows it on stderr too (it prints no info notices).
        session.emit_nowait(Notice(level="warning", text=f"Open this URL to sign in to {name}: {url}"))

    try:
        message = await login(server.config, show_url=show)
    except LoginError as exc:
        return str(exc)
    await manager.reconnect(name, wait=True)
    return message
