"""``ExtensionAPI``: what an extension's factory receives as ``pi`` (docs/extensions-runtime.md#registration).

Registrations work in the factory and later (they apply at once). After the runtime is
replaced (``/new``, ``/reload``) a kept ``pi`` raises :class:`StaleContextError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from pi_coder.extensions.types import (
    EVENT_NAMES,
    PI_ONLY_EVENTS,
    Command,
    Extension,
    Flag,
    Handler,
    ProviderRegistration,
    Shortcut,
    StaleContextError,
    ToolDefinition,
    ToolInfo,
)

if TYPE_CHECKING:
    from pi_coder.ai.abort import AbortSignal
    from pi_coder.ai.models import ModelTable, ProviderTable
    from pi_coder.ai.registry import StreamFunction
    from pi_coder.ai.types import ImageContent, TextContent
    from pi_coder.extensions.bus import EventBus
    from pi_coder.extensions.events import CustomMessageSpec
    from pi_coder.extensions.exec import ExecResult
    from pi_coder.extensions.host import RunnerHost
    from pi_coder.json_types import JsonObject

__all__ = ["ExtensionAPI"]

_COMMAND_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")

_H = TypeVar("_H", bound=Handler)


class ExtensionAPI:
    """The ``pi`` object of one extension. ``pi.path`` is its identity, ``pi.name`` its short name."""

    def __init__(self, runner: RunnerHost, extension: Extension) -> None:
        self._runner = runner
        self._ext = extension
        self._stale = False

    # ------------------------------------------------------------------ identity

    @property
    def path(self) -> str:
        return self._ext.path

    @property
    def name(self) -> str:
        return self._ext.name

    @property
    def events(self) -> EventBus:
        """The event bus shared by the extensions of this runtime."""
        return self._live().bus

    def _live(self) -> RunnerHost:
        if self._stale:
            raise StaleContextError(f"Extension {self.name}: this pi object belongs to a replaced session")
        return self._runner

    def invalidate(self) -> None:
        self._stale = True

    # ------------------------------------------------------------------ events

    @overload
    def on(self, event: str, handler: None = None) -> Callable[[_H], _H]: ...

    @overload
    def on(self, event: str, handler: Handler) -> Callable[[], None]: ...

    def on(self, event: str, handler: Handler | None = None) -> Any:
        """Subscribe ``handler(event, ctx)`` to ``event``; returns an unsubscribe callable.

        Without ``handler`` it is a decorator (``@pi.on("input")``).
        """
        self._live()
        if event in PI_ONLY_EVENTS:
            raise ValueError(f"pi.on: {event!r} is a Pi 1.6 event pi_coder does not emit (docs/extensions.md, API table)")
        if event not in EVENT_NAMES:
            import difflib

            close = difflib.get_close_matches(event, EVENT_NAMES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else " (custom channels: pi.events.on)"
            raise ValueError(f"pi.on: unknown event {event!r}{hint}")
        if handler is None:

            def decorate(fn: Handler) -> Handler:
                self.on(event, fn)
                return fn

            return decorate
        handlers = self._ext.handlers.setdefault(event, [])
        handlers.append(handler)

        def unsubscribe() -> None:
            if handler in handlers:
                handlers.remove(handler)

        return unsubscribe

    # ------------------------------------------------------------------ registration

    def register_tool(self, tool: Any) -> None:
        """Register a ``ToolDefinition`` (or a plain ``AgentTool``); a built-in's name replaces it."""
        self._live()
        self._ext.tools.append(tool)
        self._runner.tool_registered(self._ext, tool)

    def tool(self, **fields: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of ``register_tool``: ``@pi.tool(name=..., label=..., description=..., parameters=...)``."""

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            fields.setdefault("label", fields.get("name", fn.__name__))
            fields.setdefault("description", (fn.__doc__ or "").strip())
            self.register_tool(ToolDefinition(execute=fn, **fields))
            return fn

        return decorate

    def register_command(
        self,
        name: str,
        handler: Callable[..., Any],
        description: str = "",
        get_argument_completions: Callable[[str], Any] | None = None,
    ) -> None:
        """Register ``/name``: ``handler(args, ctx)``; completions ``(prefix) -> list[Completion] | None``."""
        self._live()
        if not _COMMAND_NAME.match(name):
            raise ValueError(f"Invalid command name {name!r}: use lower-case letters, digits, - and _")
        self._ext.commands.append(
            Command(
                name=name,
                handler=handler,
                description=description,
                get_argument_completions=get_argument_completions,
                extension=self._ext,
            )
        )

    def command(
        self, name: str, description: str = "", get_argument_completions: Callable[[str], Any] | None = None
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of ``register_command``."""

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.register_command(name, fn, description, get_argument_completions)
            return fn

        return decorate

    def register_shortcut(self, key: str, handler: Callable[..., Any], description: str = "") -> None:
        """A TUI key (``[keybindings]`` syntax, e.g. ``ctrl+alt+p``) calling ``handler(ctx)``."""
        self._live()
        self._ext.shortcuts.append(Shortcut(key=key, handler=handler, description=description, extension=self._ext))

    def register_flag(
        self, name: str, description: str = "", type: Literal["bool", "str"] = "bool", default: bool | str | None = None
    ) -> None:
        """A ``--name`` command-line option (listed under "Extension options" in ``--help``)."""
        self._live()
        self._ext.flags.append(Flag(name=name, description=description, type=type, default=default, extension=self._ext))

    def get_flag(self, name: str) -> bool | str | None:
        """The command-line value of ``--name`` (already in the factory), else its default."""
        return self._live().flag_value(name)

    def register_provider(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api: str | None = None,
        api_key: str | None = None,
        headers: dict[str, str] | None = None,
        models: Sequence[ModelTable] | None = None,
        compat: JsonObject | None = None,
        stream_simple: StreamFunction | None = None,
    ) -> None:
        """A provider in ``models.toml`` terms, or an override of an existing one.

        ``stream_simple(model, context, options)`` streams this provider's models itself (any
        ``api`` id then works; ``text_stream`` builds a stream from text chunks). Any other keyword
        (Pi's ``oauth``, ``refresh_models``) is a ``TypeError`` at load.
        """
        self._live()
        table: ProviderTable = {}
        if base_url is not None:
            table["base_url"] = base_url
        if api is not None:
            table["api"] = api
        if api_key is not None:
            table["api_key"] = api_key
        if headers is not None:
            table["headers"] = headers
        if models is not None:
            table["models"] = [{**m} for m in models]
        if compat is not None:
            table["compat"] = compat
        registration = ProviderRegistration(name=name, table=table, stream_simple=stream_simple)
        self._runner.provider_registered(registration)
        self._ext.providers.append(registration)

    def unregister_provider(self, name: str) -> None:
        """Remove a provider this extension registered (its models go); nothing when it registered none."""
        self._live()
        mine = [p for p in self._ext.providers if p.name == name]
        if mine:
            for entry in mine:
                self._ext.providers.remove(entry)
            self._runner.provider_unregistered(name)

    def register_mcp_server(self, name: str, config: dict[str, Any]) -> None:
        """Add an MCP server for this session; ``config`` is an ``mcp.json`` entry (docs/mcp.md).

        Raises ``ValueError`` for an invalid name or config, or a name another extension registered.
        A server of the same name in ``mcp.json`` wins. Not saved: register again on each load.
        """
        from pathlib import Path

        from pi_coder.mcp.config import ServerConfig, parse_entry

        runner = self._live()
        owner = runner.mcp_servers.get(name)
        if owner is not None and owner[0].path != self._ext.path:
            raise ValueError(f'MCP server "{name}" is registered by the extension {owner[0].name}')
        parsed = parse_entry(name, dict(config), "extension", Path(self._ext.path))
        if not isinstance(parsed, ServerConfig):
            raise ValueError(f'MCP server "{name}" needs a command or a url')
        runner.mcp_servers[name] = (self._ext, parsed)
        if runner.mcp_changed is not None:
            runner.mcp_changed()

    def unregister_mcp_server(self, name: str) -> None:
        """Remove a server this extension registered (its connection closes, its tools go)."""
        runner = self._live()
        owner = runner.mcp_servers.get(name)
        if owner is not None and owner[0].path == self._ext.path:
            del runner.mcp_servers[name]
            if runner.mcp_changed is not None:
                runner.mcp_changed()

    def get_mcp_servers(self) -> list[dict[str, Any]]:
        """Every MCP server of the session: ``name``, ``source`` (``global``, ``project``,
        ``extension``), ``state`` (``connecting``, ``connected``, ``failed``, ``disabled``, or
        ``pending`` before the servers start) and ``config`` (the ``mcp.json`` entry's fields)."""
        import dataclasses

        runner = self._live()
        try:
            manager = runner.session.mcp
        except RuntimeError:  # not bound to a session yet (while loading)
            manager = None
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        if manager is not None:
            for server in manager.servers.values():
                seen.add(server.name)
                config = {k: v for k, v in dataclasses.asdict(server.config).items() if k not in ("name", "path")}
                out.append({"name": server.name, "source": server.config.source, "state": server.state, "config": config})
        for name, (_ext, cfg) in runner.mcp_servers.items():
            if name not in seen:
                config = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in ("name", "path")}
                out.append({"name": name, "source": "extension", "state": "pending", "config": config})
        return out

    def register_markdown_transformer(
        self, transformer: Callable[..., Any], *, message_types: Sequence[str] | None = None
    ) -> None:
        """Change Markdown before the TUI draws it: ``transformer(markdown, ctx) -> str`` where
        ``ctx`` has ``message_type`` (``assistant``, ``assistant-thinking``), ``is_streaming`` and
        ``available_width``. Display only; runs per rendered block of paragraphs; one per
        extension (registering again replaces it)."""
        self._live()
        types = frozenset(message_types) if message_types is not None else frozenset({"assistant", "assistant-thinking"})
        self._ext.markdown_transformer = (transformer, types)

    def register_message_renderer(self, custom_type: str, renderer: Callable[..., Any]) -> None:
        """TUI rendering of ``custom_message`` entries of ``custom_type``: ``fn(message, *, expanded, theme)``."""
        self._live()
        self._ext.message_renderers[custom_type] = renderer

    def register_entry_renderer(self, custom_type: str, renderer: Callable[..., Any]) -> None:
        self._live()
        self._ext.entry_renderers[custom_type] = renderer

    # ------------------------------------------------------------------ messages and entries

    def send_message(
        self,
        message: CustomMessageSpec | dict[str, Any],
        *,
        deliver_as: Literal["steer", "follow_up", "next_turn"] = "steer",
        trigger_turn: bool = False,
    ) -> None:
        """Send a custom message (a ``custom_message`` entry the model sees as user text)."""
        from pi_coder.extensions.events import CustomMessageSpec

        spec = message if isinstance(message, CustomMessageSpec) else CustomMessageSpec(**message)
        self._live().send_message(spec, deliver_as=deliver_as, trigger_turn=trigger_turn)

    def send_user_message(
        self,
        content: str | Sequence[TextContent | ImageContent],
        *,
        deliver_as: Literal["steer", "follow_up"] | None = None,
        expand: bool = False,
    ) -> None:
        """Send text (or ``TextContent``/``ImageContent`` blocks) as if the user typed it (``source="extension"``)."""
        self._live().send_user_message(self._ext, content, deliver_as=deliver_as, expand=expand)

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        """Append a ``custom`` entry (never in the model's context); returns its id."""
        return self._live().append_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self._live().session.set_session_name(name)

    def get_session_name(self) -> str | None:
        return self._live().session.session_name

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._live().session.store.append_label(entry_id, label)

    # ------------------------------------------------------------------ tools, model, settings

    def get_active_tools(self) -> list[str]:
        return self._live().session.tool_names

    def get_all_tools(self) -> list[ToolInfo]:
        return self._live().all_tool_infos()

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Make exactly these tools active (unknown names are ignored and reported)."""
        self._live().set_active_tools(self._ext, list(names))

    def set_model(self, model: Any) -> bool:
        """Switch model for this session (the saved default stays); False when its provider has no key."""
        session = self._live().session
        if not session.models.has_key(model.provider):
            return False
        session.set_model(model, save_default=False)
        return True

    def get_thinking_level(self) -> str:
        return self._live().session.thinking_level

    def set_thinking_level(self, level: str) -> None:
        """This session's level (the saved default stays, as Pi's ``pi.setThinkingLevel``)."""
        self._live().session.set_thinking_level(level, save_default=False)

    def get_commands(self) -> list[dict[str, Any]]:
        """Extension commands, prompt templates and skills (``name``, ``description``, ``source``, ``sourceInfo``)."""
        return self._live().all_command_records()

    def get_settings(self) -> dict[str, Any]:
        """A copy of the effective settings, as a dict."""
        return self._live().session.settings.model_dump()

    async def exec(
        self,
        cmd: str,
        args: Sequence[str] = (),
        *,
        cwd: str | None = None,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        max_output: int = 256 * 1024 * 1024,
    ) -> ExecResult:
        """Run ``cmd args...`` without a shell in its own process group (docs/extensions-runtime.md#other-methods)."""
        from pi_coder.extensions.exec import run_process

        runner = self._live()
        return await run_process(
            cmd, list(args), cwd=cwd or runner.cwd, timeout=timeout, signal=signal, max_output=max_output
        )
