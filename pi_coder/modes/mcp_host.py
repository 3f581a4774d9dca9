"""MCP servers for every mode (docs/mcp.md#start-up): set up at start-up, started once a loop runs.

``setup`` reads the ``mcp.json`` files only when one exists (the global one, or the project's
in a trusted folder), so a run without servers never imports :mod:`pi_coder.mcp`, let alone the
SDK. It attaches an :class:`~pi_coder.mcp.manager.McpManager` to the session as ``session.mcp``
and registers the first-prompt wait. ``start``/``stop`` are called by the modes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from pi_coder.core.session_hooks import RunHook

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.core.host import SessionHost
    from pi_coder.mcp.config import ConfigResult
    from pi_coder.mcp.manager import McpManager
    from pi_coder.modes.options import CliOptions

__all__ = ["COMMAND_DESCRIPTION", "command_text", "handles", "manager_of", "no_servers_text", "setup", "start", "stop"]


class StartupWait(RunHook):
    """Before the first prompt: wait at most ``mcp.startup_wait`` s for servers still connecting.

    Servers that connect only after the first prompt has begun (print mode) start here: with
    something to wait for (``startup_wait`` > 0 and a server that may give direct tools) at once,
    else once the first reply has started, so importing the SDK (about 0.5 s of CPU) never delays
    the first request.
    """

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager
        self.done = False

    async def before_prompt(self, session: SessionHost) -> None:
        await self._wait(session)
        _update_section(session, self.manager)

    async def _wait(self, session: SessionHost) -> None:
        manager = self.manager
        if self.done:
            manager.start()
            await manager.retry_sign_ins(manager.startup_wait)  # signed in elsewhere (pi mcp login) since
            return
        self.done = True
        if not manager.needs_wait():
            if not manager.started:
                _start_after_first_reply(session, manager)
            return
        manager.start()
        pending = await manager.wait_connecting(manager.startup_wait)
        if pending:
            from pi_coder.core.events import Notice

            many = len(pending) > 1
            text = (
                f"MCP server{'s' if many else ''} {', '.join(pending)} {'are' if many else 'is'} still connecting; "
                f"{'their' if many else 'its'} tools join when ready"
            )
            await session.emit(Notice(level="warning", text=text))


def _update_section(session: SessionHost, manager: McpManager) -> None:
    """Append the ``mcp_servers`` section (pi_coder.mcp.prompt_section) when it changed."""
    from pi_coder.ai.context import get_current_system_message
    from pi_coder.ai.types import SystemMessage
    from pi_coder.mcp.prompt_section import SECTION, servers_section

    text = servers_section(manager.servers.values())
    messages = session.agent.state.messages
    current = get_current_system_message(messages)
    if current is None:
        return  # no system prompt to add to
    if (current.sections or {}).get(SECTION) == text:
        return
    messages.append(SystemMessage(content="", sections={SECTION: text}))


def _start_after_first_reply(session: SessionHost, manager: McpManager) -> None:
    """Start connecting once the first reply starts streaming or the run ends (whichever is first)."""
    unsubscribe: list[Callable[[], None]] = []

    def listener(event: object) -> None:
        kind = getattr(event, "type", None)
        role = getattr(getattr(event, "message", None), "role", None)
        if (kind in ("message_start", "message_end") and role == "assistant") or kind == "agent_end":
            if unsubscribe:
                unsubscribe.pop()()
            manager.start()

    subscribe = getattr(session, "subscribe", None)
    if subscribe is None:
        manager.start()
        return
    unsubscribe.append(subscribe(listener))


def _startup_wait(session: AgentSession) -> float:
    return session.settings.mcp.startup_wait


def setup(options: CliOptions, session: AgentSession, *, project_trusted: bool) -> McpManager | None:
    """Attach the configured servers to ``session`` (nothing connects yet); None without any.

    Unless ``--no-mcp``, a ``/reload`` hook re-reads the files: the manager applies the changes, or
    one is made if servers appeared since start-up.
    """
    if getattr(options, "no_mcp", False):
        return None
    allow = [t for t in (options.tools or []) if t.startswith("mcp__")] or None
    if allow is None and getattr(options, "no_tools", False):
        allow = []  # -nt: no tools at all, as in Pi (the servers still connect for /mcp)
    # -xt names or patterns drop MCP tools too (tool_search and the resource tools included)
    mcp_filter = _Selection(allow, list(getattr(options, "exclude_tools", None) or []))
    session.reload_hooks.append(_ReloadHook(session, mcp_filter))
    runner = session.extensions
    if runner is not None and hasattr(runner, "mcp_changed"):
        runner.mcp_changed = lambda: _extensions_changed(session, mcp_filter)
    return _make(session, mcp_filter, project_trusted=project_trusted)


class _Selection(NamedTuple):
    """``--tools`` entries that start with ``mcp__`` (None: every MCP tool) and ``--exclude-tools``."""

    allow: list[str] | None
    exclude: list[str]


def _with_extension_servers(session: AgentSession, config: ConfigResult) -> ConfigResult:
    """``config`` plus the servers extensions registered (``mcp.json`` wins a shared name)."""
    registered = getattr(session.extensions, "mcp_servers", None) or {}
    for name, (_ext, cfg) in registered.items():
        if name not in config.servers:
            config.servers[name] = cfg
    return config


def _extensions_changed(session: AgentSession, mcp_filter: _Selection) -> None:
    """An extension (un)registered a server: connect or stop it now when the servers run."""
    trusted = session.project_trust is None or session.project_trust.trusted
    manager: McpManager | None = session.mcp
    if manager is None:
        manager = _make(session, mcp_filter, project_trusted=trusted)
        if manager is not None and _loop_running():
            manager.start()
        return
    _reload(session, mcp_filter)


def _loop_running() -> bool:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _ReloadHook:
    """``/reload`` for the MCP servers; its presence also says MCP is on (no ``--no-mcp``)."""

    def __init__(self, session: AgentSession, mcp_filter: _Selection) -> None:
        self.session = session
        self.mcp_filter = mcp_filter

    def __call__(self) -> list[str]:
        return _reload(self.session, self.mcp_filter)


COMMAND_DESCRIPTION = "MCP servers: state, tools, errors, sign-in; reconnect|enable|disable|login|logout <server>"


def handles(session: AgentSession, text: str) -> bool:
    """Whether ``text`` is ``/mcp [args]`` and MCP is on for ``session`` (print and RPC modes)."""
    stripped = text.strip()
    if stripped != "/mcp" and not stripped.startswith("/mcp "):
        return False
    return any(isinstance(h, _ReloadHook) for h in session.reload_hooks)


async def command_text(session: AgentSession, text: str) -> str:
    """Run ``/mcp [reconnect|enable|disable|login|logout <server>]`` outside the TUI; the status table as text.

    A bare ``/mcp`` first waits (at most ``mcp.startup_wait``) for servers still connecting.
    """
    manager = manager_of(session)
    if manager is None:
        return no_servers_text(session)
    args = text.strip()[len("/mcp") :].strip()
    manager.start()
    words = args.split()
    if len(words) == 2 and words[0] in ("login", "logout"):
        from pi_coder.modes.mcp_ui import account_command

        return await account_command(session, manager, words[0], words[1])
    if not args:
        await manager.wait_connecting(manager.startup_wait)
    return "\n".join(await manager.command(args))


def _paths(session: AgentSession, project_trusted: bool) -> Path | None:
    """The global ``mcp.json`` path when there is anything to read, else None."""
    from pi_coder.paths import config_dir

    global_path = config_dir() / "mcp.json"
    projects = (Path(session.cwd) / ".mcp.json", Path(session.cwd) / ".pi" / "mcp.json")
    if not global_path.is_file() and not (project_trusted and any(p.is_file() for p in projects)):
        return None
    return global_path


def _make(session: AgentSession, mcp_filter: _Selection, *, project_trusted: bool) -> McpManager | None:
    global_path = _paths(session, project_trusted)
    if global_path is None and not getattr(session.extensions, "mcp_servers", None):
        return None
    from pi_coder.mcp.config import ConfigResult, load_servers
    from pi_coder.mcp.manager import McpManager

    config = _with_extension_servers(
        session,
        ConfigResult()
        if global_path is None
        else load_servers(session.cwd, project_trusted=project_trusted, global_path=global_path),
    )
    if not config.servers and not config.errors:
        return None
    manager = McpManager(config, session.cwd, startup_wait=_startup_wait(session), tool_filter=mcp_filter.allow, tool_exclude=mcp_filter.exclude)
    from pi_coder.mcp.server import kill_leftovers
    from pi_coder.modes.stop_signals import on_backstop

    on_backstop(kill_leftovers)  # SIGTERM/SIGHUP in the TUI: the servers' process groups go too

    def notify(level: str, text: str) -> None:
        from pi_coder.core.events import Notice

        session.emit_nowait(Notice(level=level, text=text))  # type: ignore[arg-type]

    manager.attach(session, notify)
    from pi_coder.modes.mcp_ui import elicitation_handler

    manager.elicit = elicitation_handler(session)
    session.add_run_hook(StartupWait(manager))
    session.mcp = manager
    return manager


def _reload(session: AgentSession, mcp_filter: _Selection) -> list[str]:
    """``/reload``: apply the re-read ``mcp.json`` files (docs/mcp.md#lifetime-and-shutdown); the new config errors."""
    trusted = session.project_trust is None or session.project_trust.trusted
    manager: McpManager | None = session.mcp
    if manager is None:
        manager = _make(session, mcp_filter, project_trusted=trusted)
        if manager is not None:
            manager.start()
        return []  # its notices come as it starts
    from pi_coder.mcp.config import ConfigResult, load_servers

    global_path = _paths(session, trusted)
    config = ConfigResult() if global_path is None else load_servers(session.cwd, project_trusted=trusted, global_path=global_path)
    config = _with_extension_servers(session, config)
    manager.startup_wait = _startup_wait(session)
    return manager.reload(config)


def no_servers_text(session: AgentSession) -> str:
    """``/mcp`` without any server (:func:`pi_coder.mcp.config.no_servers_text` for ``session``)."""
    from pi_coder.mcp.config import no_servers_text as text

    trust = session.project_trust
    return text(session.cwd, trusted=trust is None or trust.trusted)


def manager_of(session: AgentSession) -> McpManager | None:
    return session.mcp


def start(session: AgentSession) -> None:
    """Start connecting (a running loop is needed); nothing without servers."""
    manager = manager_of(session)
    if manager is not None:
        manager.start()


async def stop(session: AgentSession) -> None:
    manager = manager_of(session)
    if manager is not None:
        await manager.close()
