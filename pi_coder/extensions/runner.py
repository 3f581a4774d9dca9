"""``ExtensionRunner``: the loaded extensions of one runtime, dispatch and error reporting (docs/extensions-runtime.md#errors-and-isolation, docs/extensions-runtime.md#dispatch).

Handlers run one at a time in load order, then registration order, on a snapshot taken when
dispatch starts. A failure never propagates: it becomes one :class:`ExtensionErrorEvent`
(identical ones once per process), with the traceback in the log folder. The seams that call
into the runner live in :mod:`pi_coder.extensions.seams`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pi_coder.extensions.bus import EventBus
from pi_coder.extensions.errors import ExtensionErrorEvent, coerce_result
from pi_coder.extensions.seams import SessionSeams
from pi_coder.extensions.types import Command, Extension, Handler, ProviderRegistration, Source, ToolInfo
from pi_coder.extensions.ui import NoUI, UIProtocol

if TYPE_CHECKING:
    from pi_coder.ai.models import Models
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.extensions.api import ExtensionAPI
    from pi_coder.extensions.context import ExtensionCommandContext, ExtensionContext

__all__ = ["ErrorSink", "ExtensionRunner", "FlagToken"]

_log = logging.getLogger(__name__)
R = TypeVar("R")

ErrorSink = Callable[[ExtensionErrorEvent], None]

SHUTDOWN_TIMEOUT = 3.0
"""Seconds a ``session_shutdown`` handler may take at quit before it is abandoned (docs/extensions-runtime.md#replacement-reload-and-quit)."""

_REPORTED: set[tuple[str, str, str]] = set()
"""(path, event, error) already reported in this process."""


class FlagToken:
    """An unknown ``--name[=value]`` seen by the first pass of the command-line parser (docs/extensions-runtime.md#flags)."""

    __slots__ = ("name", "position", "value")

    def __init__(self, name: str, value: str | None, position: int) -> None:
        self.name = name
        self.value = value
        self.position = position
        """Index in the messages list of the word after the option (a ``str`` flag's value)."""


class ExtensionRunner(SessionSeams):
    """See the module docstring. Built by the loader; ``bind`` attaches it to a session."""

    def __init__(
        self,
        cwd: str,
        *,
        models: Models | None = None,
        project_trusted: bool = False,
        flag_tokens: Sequence[FlagToken] = (),
        messages: Sequence[str] = (),
    ) -> None:
        self.cwd = cwd
        self.models = models
        self.project_trusted = project_trusted
        self.mode = "print"
        self.ui: UIProtocol = NoUI()
        self.extensions: list[Extension] = []
        self.sources: list[Source] = []
        self.flag_tokens = list(flag_tokens)
        self.cli_messages = list(messages)
        self.bus = EventBus(lambda channel, exc: self._bus_error(channel, exc))
        self.run_system_prompt: str | None = None
        self.error_sink: ErrorSink | None = None
        self.shutdown_requested: Callable[[], None] | None = None
        self._session: AgentSession | None = None
        self._apis: dict[str, ExtensionAPI] = {}
        self._contexts: dict[str, ExtensionContext] = {}
        self._pending_errors: list[ExtensionErrorEvent] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._running: set[asyncio.Future[Any]] = set()
        """Async handler calls in progress (``cancel_handlers``)."""
        self.interrupted = False
        """Set when ``cancel_handlers`` cancelled a handler; the run's start checks it."""
        self._builtin_tools: dict[str, Any] = {}
        self._tools: dict[str, tuple[Any, Extension | None]] = {}
        self._definitions: dict[str, Any] = {}
        """The registered definition (``ToolDefinition`` or ``AgentTool``) of each extension tool."""
        self.next_turn: list[Any] = []
        self.dry_run = False
        """A throw-away runner (the ``project_trust`` pass): failures are not reported, the real
        load reports them."""
        self.rediscover: Callable[[], list[Source]] | None = None
        """Finds the sources again on ``/reload`` (new or removed files); None: reload the same ones."""
        self.reload_warnings: list[str] = []
        self.mcp_servers: dict[str, tuple[Extension, Any]] = {}
        """MCP servers extensions registered: name -> (extension, ``ServerConfig``)."""
        self.mcp_changed: Callable[[], None] | None = None
        """Set by the MCP host: applies ``mcp_servers`` after a change (None before set-up)."""
        """Problems found re-reading settings, templates, skills and context files on the last reload."""

    # ------------------------------------------------------------------ session

    @property
    def session(self) -> AgentSession:
        if self._session is None:
            raise RuntimeError("extensions are not bound to a session yet")
        return self._session

    @property
    def bound(self) -> bool:
        return self._session is not None

    def bind(self, session: AgentSession) -> None:
        """Attach to ``session``: tools, agent hooks, and the event seams."""
        from pi_coder.extensions import seams

        self._session = session
        session.extensions = self
        self.last_model, self.last_thinking_level = session.model, session.thinking_level
        self._builtin_tools = {tool.name: tool for tool in session.agent.state.tools}
        seams.install(self, session)
        self.install_tools()

    def set_ui(self, ui: UIProtocol, mode: str) -> None:
        self.ui = ui
        self.mode = mode
        for ctx in self._contexts.values():
            ctx.ui = type(ctx.ui)(ui, ctx._ext.name)

    def load_errors(self) -> list[ExtensionErrorEvent]:
        """The load failures not reported yet (an extension that did not import or whose factory raised)."""
        return [e for e in self._pending_errors if e.event == "load"]

    def flush_errors(self) -> None:
        """Report load-time errors now that a mode listens."""
        pending, self._pending_errors = self._pending_errors, []
        for event in pending:
            self._deliver(event)

    # ------------------------------------------------------------------ extensions

    def add(self, extension: Extension, api: ExtensionAPI) -> None:
        self.extensions.append(extension)
        self._apis[extension.path] = api

    def api(self, extension: Extension) -> ExtensionAPI:
        return self._apis[extension.path]

    def context(self, extension: Extension) -> ExtensionContext:
        ctx = self._contexts.get(extension.path)
        if ctx is None:  # ``ctx`` is built when a handler first runs (docs/extensions-runtime.md#start-up-cost)
            from pi_coder.extensions.context import ExtensionContext

            ctx = self._contexts[extension.path] = ExtensionContext(self, extension)
        return ctx

    def command_context(self, extension: Extension) -> ExtensionCommandContext:
        from pi_coder.extensions.context import ExtensionCommandContext

        return ExtensionCommandContext(self, extension)

    def invalidate(self) -> None:
        """Make every ``pi`` and ``ctx`` handed out so far stale (docs/extensions-runtime.md#replacement-reload-and-quit)."""
        for api in self._apis.values():
            api.invalidate()
        for ctx in self._contexts.values():
            ctx.invalidate()
        self._contexts.clear()

    # ------------------------------------------------------------------ errors

    def report(self, extension: Extension | None, event: str, exc: BaseException) -> None:
        """Record a failure of ``extension`` in ``event`` (reported once per identical error)."""
        if self.dry_run:
            return
        path = extension.path if extension is not None else "<extensions>"
        message = str(exc) or type(exc).__name__
        key = (path, event, message)
        if key in _REPORTED:
            return
        _REPORTED.add(key)
        stack = "".join(traceback.format_exception(exc))
        _write_log(path, event, stack)
        record = ExtensionErrorEvent(extension_path=path, event=event, error=message, stack=stack)
        if self._session is None or self.error_sink is None:
            self._pending_errors.append(record)
        else:
            self._deliver(record)

    def _deliver(self, record: ExtensionErrorEvent) -> None:
        if self.error_sink is not None:
            self.error_sink(record)
        elif self._session is not None:
            self._session.emit_nowait(record)

    def _bus_error(self, channel: str, exc: BaseException) -> None:
        self.report(None, f"events:{channel}", exc)

    # ------------------------------------------------------------------ dispatch

    def has(self, name: str) -> bool:
        return any(ext.handlers.get(name) for ext in self.extensions)

    def handlers(self, name: str) -> list[tuple[Extension, Handler]]:
        return [(ext, h) for ext in tuple(self.extensions) for h in tuple(ext.handlers.get(name, ()))]

    async def call(self, ext: Extension, label: str, fn: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
        """Call ``fn(*args)`` (awaiting it); a failure is reported as ``label`` and gives ``(False, exc)``."""
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._running.add(task)
                try:
                    result = await task
                except asyncio.CancelledError:
                    current = asyncio.current_task()
                    if not task.cancelled() or (current is not None and current.cancelling()):
                        raise
                    self.interrupted = True  # cancel_handlers: the run that waited on it stops
                    return False, TimeoutError("interrupted")
                finally:
                    self._running.discard(task)
            return True, result
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except BaseException as exc:  # SystemExit from an extension is an ordinary error (docs/extensions-runtime.md#errors-and-isolation)
            self.report(ext, label, exc)
            return False, exc

    def cancel_handlers(self) -> None:
        """Ctrl+C: cancel the async handlers running now (one that never returns must not keep a
        run waiting); the prompt they held up does not start."""
        for task in tuple(self._running):
            task.cancel()

    async def results(self, name: str, event: Any, cls: type[R]) -> Any:
        """Yield ``(ext, ok, result-or-exception)`` for each handler of ``name`` (an async generator)."""
        for ext, handler in self.handlers(name):
            ok, value = await self.call(ext, name, handler, event, self.context(ext))
            if not ok:
                yield ext, False, value
                continue
            try:
                yield ext, True, coerce_result(value, cls)
            except TypeError as exc:
                self.report(ext, name, exc)
                yield ext, False, exc

    async def notify(self, name: str, event: Any) -> None:
        """Fire a notify event: results ignored."""
        for ext, handler in self.handlers(name):
            await self.call(ext, name, handler, event, self.context(ext))

    async def gate(self, name: str, event: Any, cls: type[R], field: str = "cancel") -> R | None:
        """First result whose ``field`` is true ends dispatch; raising handlers are no opinion."""
        async for _ext, ok, result in self.results(name, event, cls):
            if ok and result is not None and getattr(result, field, False):
                return result  # type: ignore[no-any-return]
        return None

    async def shutdown(self, reason: str, target: str | None = None, *, timeout: float | None = SHUTDOWN_TIMEOUT) -> None:
        """``session_shutdown(reason)``; each handler gets ``timeout`` seconds, then is abandoned."""
        if not self.has("session_shutdown"):
            for task in tuple(self._tasks):
                task.cancel()
            return
        from pi_coder.extensions.events import SessionShutdownEvent

        event = SessionShutdownEvent(reason=reason, target_session_file=target)  # type: ignore[arg-type]
        for ext, handler in self.handlers("session_shutdown"):
            try:
                await asyncio.wait_for(self.call(ext, "session_shutdown", handler, event, self.context(ext)), timeout)
            except TimeoutError:
                self.report(ext, "session_shutdown", TimeoutError(f"shutdown handler took over {timeout:g} s; abandoned"))
        for task in tuple(self._tasks):
            task.cancel()

    async def settle(self) -> None:
        """Wait for work extensions started (``send_message(trigger_turn=True)``, commands) to finish."""
        while self._tasks:
            await asyncio.gather(*tuple(self._tasks), return_exceptions=True)
        if self._session is not None:
            await self._session.wait_for_idle()

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def project_trust_vote(self) -> Any:
        """``project_trust(cwd)`` (docs/permissions.md#deciding-trust): a ``permissions.trust.TrustVote`` from the first yes/no answer, or None.

        Runs before any session or event loop exists, in a private loop.
        """
        from pi_coder.extensions.events import ProjectTrustEvent, ProjectTrustResult
        from pi_coder.permissions.trust import TrustVote

        async def ask() -> TrustVote | None:
            async for _ext, ok, result in self.results("project_trust", ProjectTrustEvent(cwd=self.cwd), ProjectTrustResult):
                if ok and result is not None and result.trusted in ("yes", "no"):
                    return TrustVote(trusted=result.trusted == "yes", remember=bool(result.remember))
            return None

        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(ask())
        finally:
            loop.close()

    def request_shutdown(self) -> None:
        if self.shutdown_requested is not None:
            self.shutdown_requested()

    # ------------------------------------------------------------------ tools

    def tool_registered(self, extension: Extension, tool: Any) -> None:
        if self._session is not None:
            self.install_tools(activate=(tool.name,))

    def install_tools(self, activate: Sequence[str] = ()) -> None:
        """Build the tool pool (built-ins, then extension tools, first extension wins) and set the active set."""
        from pi_coder.extensions.seams import adapt_tool

        session = self.session
        previous_active = [t.name for t in session.agent.state.tools]
        pool: dict[str, tuple[Any, Extension | None]] = {name: (t, None) for name, t in self._builtin_tools.items()}
        owners: dict[str, Extension] = {}
        definitions: dict[str, Any] = {}
        active = list(previous_active) if self._tools else list(self._builtin_tools)
        for ext in self.extensions:
            for definition in ext.tools:
                name = definition.name
                if name in owners:
                    if owners[name] is not ext:
                        self.report(ext, "register_tool", ValueError(f'tool "{name}" is already registered by {owners[name].name}'))
                    continue
                owners[name] = ext
                definitions[name] = definition
                pool[name] = (adapt_tool(self, ext, definition), ext)
                fresh = name not in self._tools
                if (fresh or name in activate) and getattr(definition, "default_active", True) and name not in active:
                    active.append(name)
        self._tools = pool
        self._definitions = definitions
        session.agent.state.tools = [pool[n][0] for n in active if n in pool]
        session.refresh_system_prompt()

    def add_host_tools(self, tools: Sequence[Any], remove: Sequence[str] = ()) -> None:
        """Tools the host adds after start (MCP servers) join the built-ins' pool; ``remove`` leave it."""
        for name in remove:
            self._builtin_tools.pop(name, None)
            self._tools.pop(name, None)
        for tool in tools:
            self._builtin_tools[tool.name] = tool
            self._tools.setdefault(tool.name, (tool, None))

    def _ensure_builtins(self) -> None:
        """Build the built-in tools that are not active yet, so every built-in can be listed and enabled."""
        make = self.session.make_builtin_tool
        if make is None:
            return
        from pi_coder.tools import ALL_TOOL_NAMES

        for name in ALL_TOOL_NAMES:
            if name not in self._builtin_tools:
                tool = make(name)
                self._builtin_tools[name] = tool
                self._tools.setdefault(name, (tool, None))

    def set_active_tools(self, extension: Extension, names: list[str]) -> None:
        if any(n not in self._tools for n in names):
            self._ensure_builtins()
        unknown = [n for n in names if n not in self._tools]
        if unknown:
            self.report(extension, "set_active_tools", ValueError(f"unknown tools: {', '.join(unknown)}"))
        self.session.agent.state.tools = [self._tools[n][0] for n in dict.fromkeys(names) if n in self._tools]
        self.session.refresh_system_prompt()

    def select_tools(self, names: Sequence[str]) -> None:
        """The start-up plan's ``--tools`` choice once extension tools are registered: exactly
        ``names`` (built-in or extension; already checked by the plan) are active."""
        chosen = [n for n in dict.fromkeys(names) if n in self._tools]
        self.session.agent.state.tools = [self._tools[n][0] for n in chosen]
        self.session.refresh_system_prompt()

    def tool_definition(self, name: str) -> tuple[Any, Extension] | None:
        """The definition an extension registered for tool ``name`` and that extension (None for a
        built-in or host tool): the TUI draws its calls with ``render_call``/``render_result``."""
        definition = self._definitions.get(name)
        owner = self._tools.get(name, (None, None))[1]
        return (definition, owner) if definition is not None and owner is not None else None

    def registered_tool_names(self, *, default_active: bool = False) -> list[str]:
        """The names of the tools extensions registered (first registration wins), before or after
        binding; ``default_active`` keeps only those active by default."""
        names: dict[str, None] = {}
        for ext in self.extensions:
            for definition in ext.tools:
                if not default_active or getattr(definition, "default_active", True):
                    names.setdefault(definition.name, None)
        return list(names)

    def prompt_tools(self, names: Sequence[str]) -> tuple[list[str | tuple[str, str]], list[str]]:
        """The system prompt's tool list and extra guidelines for the active ``names`` (docs/extensions-runtime.md#tools).

        Built-in and host tools are listed by name (their own snippets); an extension tool is
        listed with its ``prompt_snippet`` and unlisted without one; the ``prompt_guidelines`` of
        active extension tools follow the built-in guidelines.
        """
        tools: list[str | tuple[str, str]] = []
        guidelines: list[str] = []
        for name in names:
            definition = self._definitions.get(name)
            if definition is None:
                tools.append(name)
                continue
            snippet = getattr(definition, "prompt_snippet", None)
            if snippet:
                tools.append((name, snippet))
            guidelines.extend(str(g) for g in getattr(definition, "prompt_guidelines", None) or ())
        return tools, guidelines

    def all_tool_infos(self) -> list[ToolInfo]:
        """Every tool: each built-in (active or not), host tools (MCP) and extension tools."""
        self._ensure_builtins()
        from pi_coder.resources.source_info import make
        from pi_coder.tools import ALL_TOOL_NAMES

        infos = []
        for name, (tool, ext) in self._tools.items():
            if ext is not None:
                info = ext.source_info()
            else:  # a built-in tool, or one the host added (MCP's, as Pi's builtin:mcp)
                info = make(f"builtin:{name}" if name in ALL_TOOL_NAMES else "builtin:mcp", "builtin", "temporary")
            infos.append(
                ToolInfo(
                    name=name,
                    description=tool.description,
                    parameters=tool.json_schema(),
                    source="builtin" if ext is None else "extension",
                    extension_path=ext.path if ext is not None else None,
                    source_info=info,
                )
            )
        return infos

    # ------------------------------------------------------------------ commands and flags

    def commands(self) -> list[tuple[str, Command]]:
        """``(invocation name, command)``: duplicates after the first become ``name:1``, ``name:2``."""
        out: list[tuple[str, Command]] = []
        seen: dict[str, int] = {}
        for ext in self.extensions:
            for command in ext.commands:
                count = seen.get(command.name, 0)
                seen[command.name] = count + 1
                out.append((command.name if count == 0 else f"{command.name}:{count}", command))
        return out

    def find_command(self, text: str) -> tuple[Command, str] | None:
        if not text.startswith("/"):
            return None
        name, _, args = text[1:].partition(" ")
        for invoked, command in self.commands():
            if invoked == name:
                return command, args.strip()
        return None

    async def run_command(self, command: Command, args: str) -> None:
        ext = command.extension
        assert ext is not None
        await self.call(ext, f"command:{command.name}", command.handler, args, self.command_context(ext))

    def command_records(self) -> list[dict[str, Any]]:
        """RPC ``get_commands`` entries of the extension commands."""
        return [
            {
                "name": name,
                "description": command.description,
                "source": "extension",
                "sourceInfo": command.extension.source_info() if command.extension else {},
            }
            for name, command in self.commands()
        ]

    def all_command_records(self) -> list[dict[str, Any]]:
        """``pi.get_commands()``: extension commands, prompt templates, then ``skill:<name>`` (as RPC's
        ``get_commands``)."""
        from pi_coder.core.command_records import mcp_prompt_records, prompt_records, skill_records

        session = self.session
        return [*self.command_records(), *prompt_records(session), *mcp_prompt_records(session), *skill_records(session)]

    def flag_value(self, name: str) -> bool | str | None:
        flag = next((f for ext in self.extensions for f in ext.flags if f.name == name), None)
        token = next((t for t in self.flag_tokens if t.name == f"--{name}"), None)
        if token is None:
            return flag.default if flag is not None else None
        if token.value is not None:
            return token.value
        if flag is not None and flag.type == "str":
            return self.cli_messages[token.position] if token.position < len(self.cli_messages) else None
        return True

    # ------------------------------------------------------------------ providers

    def provider_registered(self, registration: ProviderRegistration) -> None:
        """Apply ``pi.register_provider`` (raises ``ConfigError`` for a bad table: a load error)."""
        if self.models is None:
            return
        from pathlib import Path

        from pi_coder.ai.models import apply_provider_tables

        name = registration.name
        stream = registration.stream_simple
        table = registration.table.copy()
        api = table.get("api")
        if stream is not None:
            api = api or f"extension:{name}"
            self.models.register_api(api, stream)
        if api is not None:
            table["api"] = api
        apply_provider_tables(self.models, {name: table}, Path(f"<extension provider {name}>"))
        provider = self.models.get_provider(name)
        if provider is not None and stream is not None:
            provider.stream = stream

    def provider_unregistered(self, name: str) -> None:
        if self.models is not None:
            self.models.remove_provider(name)

    # ------------------------------------------------------------------ messages

    def send_message(self, spec: Any, *, deliver_as: str, trigger_turn: bool) -> None:
        from pi_coder.extensions import seams

        seams.send_message(self, spec, deliver_as=deliver_as, trigger_turn=trigger_turn)

    def send_user_message(self, ext: Extension, content: Any, *, deliver_as: str | None, expand: bool) -> None:
        """``content``: a string, or a list of ``TextContent``/``ImageContent`` (texts joined by blank lines)."""
        session = self.session
        images: list[Any] = []
        if not isinstance(content, str):
            from pi_coder.ai.types import ImageContent, TextContent

            texts: list[str] = []
            for block in content:
                if isinstance(block, TextContent):
                    texts.append(block.text)
                elif isinstance(block, ImageContent):
                    images.append(block)
                elif isinstance(block, str):
                    texts.append(block)
                else:
                    self.report(ext, "send_user_message", TypeError(f"not a TextContent or ImageContent: {block!r}"))
                    return
            content = "\n\n".join(texts)
        if session.is_streaming and deliver_as is None:
            self.report(ext, "send_user_message", RuntimeError("the agent is busy: pass deliver_as='steer' or 'follow_up'"))
            return

        async def send() -> None:
            try:
                await session.prompt(content, images or None, streaming_behavior=deliver_as, source="extension")  # type: ignore[arg-type]
            except Exception as exc:
                self.report(ext, "send_user_message", exc)

        self.spawn(send())

    def append_entry(self, custom_type: str, data: Any) -> str:
        from pi_coder.extensions.events import EntryAppendedEvent

        session = self.session
        entry_id = session.store.append_custom(custom_type, data)
        entry = session.store.get_entry(entry_id)
        session.emit_nowait(EntryAppendedEvent(entry=entry.to_json_dict() if entry is not None else {"id": entry_id}))
        return entry_id

    # ------------------------------------------------------------------ replacement and reload

    async def replace_session(
        self, kind: str, *, path: str | None = None, entry_id: str | None = None, setup: Callable[[Any], Any] | None = None
    ) -> bool:
        """A command's ``ctx.new_session/switch_session/fork``; True when an extension cancelled."""
        session = self.session
        if kind == "new":
            return bool(await session.new_session(setup=setup))
        if kind == "resume" and path is not None:
            return bool(await session.switch_session(path))
        if kind == "fork" and entry_id is not None:
            return await session.fork(entry_id) is None
        return False

    async def reload(self) -> bool:
        from pi_coder.extensions import seams

        return await seams.reload(self)


def _write_log(path: str, event: str, stack: str) -> None:
    from pi_coder.paths import ensure_private_dir, logs_dir

    try:
        folder = ensure_private_dir(logs_dir())
        with open(folder / "extensions.log", "a", encoding="utf-8") as out:
            from pi_coder.ai.secrets import redact

            out.write(redact(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {path} in {event}\n{stack}\n"))
    except OSError:
        _log.debug("cannot write the extension log", exc_info=True)
