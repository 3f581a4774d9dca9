"""``/mcp`` in the TUI (docs/mcp.md#commands): the servers, one server's details, and what can be done to it.

A bare ``/mcp`` opens a list of the servers (those needing attention first: failed, needing
sign-in, disconnected) with their state, exposure and source. Choosing one shows its details
(transport, file, error, stderr tail, tools with their exposure) and its actions: reconnect,
enable or disable (saved to its file), change the server's exposure (saved too), and sign in
or out for an HTTP server. ``/mcp <action> <server>`` does one action without the dialogs;
``login``/``logout`` are handled here, the others by the manager.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from pi_coder.tui.screens._picker import PickerEntry, PickerScreen

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from pi_coder.mcp.manager import McpManager, McpServer
    from pi_coder.mcp.oauth import Loopback
    from pi_coder.tui.context import CommandContext

__all__ = ["McpServerScreen", "McpServersScreen", "SignInScreen", "mcp_command"]

ORDER = {"failed": 0, "needs sign-in": 1, "disconnected": 2, "connecting": 3, "connected": 4, "disabled": 5}
EXPOSURES = ("direct", "deferred", "hidden")


class McpServersScreen(PickerScreen[str]):
    """The servers; Enter opens one, Esc closes."""

    CSS_PATH = "screens/picker.tcss"

    def __init__(self, manager: McpManager, initial: str | None = None) -> None:
        super().__init__("MCP servers", placeholder="Filter...", hint="↑↓ move · Enter details · Esc close", initial_key=initial)
        self.manager = manager

    def load_entries(self) -> Sequence[PickerEntry[str]]:
        servers = sorted(self.manager.servers.values(), key=lambda s: (ORDER.get(s.state, 6), s.name))
        return [
            PickerEntry(
                key=s.name,
                value=s.name,
                prompt=(Text(f"{s.name}: {s.status()}"), Text(f"{s.config.exposure}, {s.config.source}", style="dim")),
                search=s.name,
            )
            for s in servers
        ]

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(0.5, self._refresh_states)  # servers connect and fail while the list is open

    def _refresh_states(self) -> None:
        entries = list(self.load_entries())
        if [e.prompt for e in entries] != [e.prompt for e in self.entries]:
            self.reload()

    def order(self, query: str, entries: Sequence[PickerEntry[str]]) -> list[PickerEntry[str]]:
        return [e for e in entries if query.lower() in e.key.lower()]

    def detail(self, entry: PickerEntry[str] | None) -> RenderableType:
        server = self.manager.servers.get(entry.value) if entry is not None else None
        if server is None:
            return Text("  No MCP servers", style="dim")
        return Text(f"  {server.config.describe()}" + (f"\n  error: {server.error}" if server.error else ""), style="dim")


def details(server: McpServer) -> str:
    """The text of one server's details."""
    cfg = server.config
    lines = [
        f"State: {server.status()}",
        f"Transport: {cfg.describe()}",
        f"Source: {cfg.source} ({cfg.path})" if cfg.source != "extension" else "Source: an extension",
        f"Exposure: {cfg.exposure}",
    ]
    if cfg.description:
        lines.append(f"Description: {cfg.description}")
    if server.error:
        lines.append(f"Error: {server.error}")
    tail = server.stderr_tail.strip()
    if tail:
        lines += ["", "stderr (last lines):", *("  " + line for line in tail.splitlines()[-8:])]
    if server.tools:
        lines += ["", f"Tools ({len(server.tools)}):"]
        names = {mcp: agent for agent, mcp in server.tool_names.items()}
        for tool in server.tools:
            name = str(tool.get("name"))
            exposure = cfg.exposure_of(name)
            shown = names.get(name, "not declared" if exposure != "hidden" else "")
            lines.append(f"  {name} ({exposure}{', ' + shown if shown else ''})")
    return "\n".join(lines)


def actions(server: McpServer) -> list[tuple[str, str]]:
    """(action id, label) for ``server``."""
    out: list[tuple[str, str]] = []
    if server.config.enabled:
        out.append(("reconnect", "Reconnect"))
        out.append(("disable", "Disable"))
    else:
        out.append(("enable", "Enable"))
    if server.config.transport == "http":
        from pi_coder.mcp.auth_store import signed_in

        if server.config.url and signed_in(server.name, server.config.url):
            out.append(("logout", "Sign out"))
        out.append(("login", "Sign in" if server.state == "needs sign-in" else "Sign in again"))
    for exposure in EXPOSURES:
        if exposure != server.config.exposure:
            out.append((f"exposure:{exposure}", f"Exposure: {exposure}"))
    out.append(("back", "Back"))
    return out


class McpServerScreen(ModalScreen[str | None]):
    """One server's details and actions; dismissed with the chosen action id (None: back)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back", show=False, priority=True)]
    DEFAULT_CSS = """
    McpServerScreen { align: center middle; }
    #mcp-server { width: 100; max-height: 90%; height: auto; border: round $accent; padding: 0 1; }
    #mcp-details { height: auto; max-height: 24; }
    #mcp-actions { height: auto; max-height: 12; margin: 1 0 0 0; }
    """

    def __init__(self, server: McpServer) -> None:
        super().__init__()
        self.server = server

    def compose(self) -> ComposeResult:
        with Vertical(id="mcp-server"):
            with VerticalScroll(id="mcp-details"):
                yield Static(Text(details(self.server)), id="mcp-details-text")
            yield OptionList(*(Option(label, id=key) for key, label in actions(self.server)), id="mcp-actions")
            yield Static(Text("↑↓ move · Enter do · Esc back", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#mcp-server").border_title = f"MCP server {self.server.name}"
        self.query_one("#mcp-actions", OptionList).focus()
        self._shown = details(self.server)
        self.set_interval(0.5, self._refresh_details)

    def _refresh_details(self) -> None:
        text = details(self.server)
        if text != self._shown:
            self._shown = text
            self.query_one("#mcp-details-text", Static).update(Text(text))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(None if event.option.id == "back" else event.option.id)

    def action_back(self) -> None:
        self.dismiss(None)


class SignInScreen(ModalScreen[None]):
    """While a sign-in waits for the browser: the URL, and a box for the redirected URL (Esc cancels)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False, priority=True)]
    DEFAULT_CSS = """
    SignInScreen { align: center middle; }
    #sign-in { width: 100; height: auto; border: round $accent; padding: 0 1; }
    #sign-in-error { color: $error; height: auto; }
    """

    def __init__(self, server: str, url: str, loopback: Loopback, cancel: asyncio.Future[str]) -> None:
        super().__init__()
        self.server, self.url, self.loopback, self.cancel = server, url, loopback, cancel

    def compose(self) -> ComposeResult:
        with Vertical(id="sign-in"):
            yield Static(Text(f"Sign in to {self.server}: open this page (it was opened in your browser)", style="bold"))
            yield Static(Text(self.url), id="sign-in-url")
            yield Static("If the browser runs on another machine, paste the URL it was redirected to:")
            yield Input(placeholder="http://127.0.0.1:.../callback?code=...")
            yield Static("", id="sign-in-error")
            yield Static(Text("Waiting for the browser · Esc cancel", style="dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not self.loopback.complete(event.value):
            self.query_one("#sign-in-error", Static).update("That URL carries no code; paste the whole redirected URL.")

    def action_cancel(self) -> None:
        if not self.cancel.done():
            self.cancel.set_result("")


async def sign_in(app: CommandContext, manager: McpManager, name: str) -> None:
    """``/mcp login <name>``: the sign-in flow with :class:`SignInScreen`, then a reconnect."""
    from pi_coder.mcp.oauth import LoginError, login

    server = manager.servers[name]
    cancel: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    loopbacks: list[Loopback] = []
    screens: list[SignInScreen] = []

    def show(url: str) -> None:
        screen = SignInScreen(name, url, loopbacks[0], cancel)
        screens.append(screen)
        app.push_screen(screen)

    flow = asyncio.ensure_future(login(server.config, show_url=show, on_loopback=loopbacks.append))
    try:
        await asyncio.wait({flow, cancel}, return_when=asyncio.FIRST_COMPLETED)
        if not flow.done():
            flow.cancel()
            await asyncio.gather(flow, return_exceptions=True)
            await app.notice(f"Sign-in to {name} cancelled.", "warning")
            return
        message = flow.result()
    except LoginError as exc:
        await app.notice(str(exc), "error")
        return
    finally:
        for screen in screens:
            if screen in app.screen_stack:
                screen.dismiss(None) if screen is app.screen else app.pop_screen()
    await app.notice(message)
    await manager.reconnect(name, wait=True)


async def act(app: CommandContext, manager: McpManager, name: str, action: str) -> None:
    """Do one action of :func:`actions` on server ``name``, with a notice of the outcome."""
    if action == "login":
        await sign_in(app, manager, name)
        return
    if action == "logout":
        from pi_coder.mcp.oauth import logout

        forgot = logout(manager.servers[name].config)
        await app.notice(f"Signed out of {name}." if forgot else f"{name} had no stored sign-in.")
        await manager.reconnect(name, wait=True)
        return
    if action.startswith("exposure:"):
        try:
            await manager.set_exposure(name, action.partition(":")[2])
        except (OSError, ValueError) as exc:
            await app.notice(f"Could not change the exposure of {name}: {exc}", "error")
        return
    lines = await manager.command(f"{action} {name}")
    if lines and lines[0].startswith(("Could not", "Usage", "No MCP")):
        await app.notice(lines[0], "error")


async def mcp_command(app: CommandContext, args: str) -> None:
    """``/mcp``: the dialogs; ``/mcp <action> <server>``: the action, then the table."""
    manager: McpManager | None = app.session.mcp
    if manager is None:
        from pi_coder.mcp.config import no_servers_text

        trust = app.session.project_trust
        await app.notice(no_servers_text(app.session.cwd, trusted=trust is None or trust.trusted))
        return
    manager.start()
    words = args.split()
    if not words:
        if manager.config.ignored:  # an untrusted folder's project files (the table says it too)
            from pi_coder.mcp.config import ignored_note

            await app.notice("\n".join(ignored_note(path) for path in manager.config.ignored), "warning")
        await browse(app, manager)
        return
    if words[0] in ("login", "logout"):
        if len(words) != 2 or words[1] not in manager.servers:
            await app.notice(f"Usage: /mcp {words[0]} <server> (servers: {', '.join(manager.servers) or 'none'})", "warning")
            return
        await act(app, manager, words[1], words[0])
        return
    lines = await manager.command(args)
    await app.show_markdown("**MCP servers**\n\n```\n" + "\n".join(lines) + "\n```")


async def browse(app: CommandContext, manager: McpManager) -> None:
    current: str | None = None
    while True:
        name = await app.push_screen_wait(McpServersScreen(manager, current))
        if name is None or name not in manager.servers:
            return
        current = name
        while name in manager.servers:
            action = await app.push_screen_wait(McpServerScreen(manager.servers[name]))
            if action is None:
                break
            await act(app, manager, name, action)

