"""The Python SDK: run the agent inside a program, without the TUI or the command line (docs/sdk.md).

:func:`create_session` builds a session exactly as ``pi -p`` does (settings, models, tools,
extensions and packages, skills, templates, permissions, MCP) from keyword arguments instead of
flags; :class:`Session` prompts, steers, follows up, aborts, reports events and usage. Its public
names are re-exported by ``pi_coder`` itself.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pi_coder.errors import UserError
from pi_coder.extensions.ui import NoUI

if TYPE_CHECKING:
    from pi_coder.ai.types import AssistantMessage, ImageContent, Model
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.core.stats import SessionStats

__all__ = ["Session", "SessionUI", "create_session"]

Listener = Callable[[Any], Any]
"""``listener(event)``, sync or async; ``event.type`` is Pi's event name (``message_update``, ...)."""


class SessionUI(NoUI):
    """What a program answers when an extension asks something (a permission question, a choice).

    Subclass it and override ``select``, ``confirm``, ``input`` or ``notify``; every method not
    overridden answers as if the user cancelled (``select`` None, ``confirm`` False) and
    ``notify`` does nothing. The methods are those of ``pi_coder.extensions.UIProtocol``.
    """

    has_ui = True

    def notify(self, message: str, level: str = "info", *, source: str = "") -> None:
        pass


def create_session(
    *,
    cwd: str | os.PathLike[str] | None = None,
    model: str | None = None,
    provider: str | None = None,
    thinking: str | None = None,
    api_key: str | None = None,
    tools: Sequence[str] | None = None,
    no_tools: bool = False,
    session_file: str | os.PathLike[str] | None = None,
    in_memory: bool = False,
    continue_recent: bool = False,
    session_dir: str | os.PathLike[str] | None = None,
    settings: Mapping[str, Any] | None = None,
    extensions: Sequence[str | os.PathLike[str] | Callable[..., Any]] = (),
    no_extensions: bool = False,
    system_prompt: str | None = None,
    append_system_prompt: str | None = None,
    permission_mode: str | None = None,
    trust: bool | None = None,
    ui: SessionUI | None = None,
) -> Session:
    """A new session, set up as ``pi -p`` sets one up (nothing is sent yet).

    Args:
        cwd: The working folder of the session and its tools (default: the process's).
        model: ``provider/id``, an id or part of one, ``name:thinking`` allowed (``--model``).
        provider: Look ``model`` up in this provider (alone: its default model).
        thinking: ``off`` ... ``max`` (clamped to the model).
        api_key: A key for the model's provider, for this session only.
        tools: Built-in and extension tools to enable, names or ``*`` patterns (``--tools``).
        no_tools: No tools at all.
        session_file: Open or create this session file (``--session``).
        in_memory: Save nothing (``--no-session``).
        continue_recent: Continue the folder's most recent session (``-c``).
        session_dir: Folder for session files.
        settings: Settings to use instead of settings.toml's values, for this session only
            (top-level keys of settings.toml, e.g. ``{"compaction": {"enabled": False}}``).
        extensions: Extension files, folders, modules, ``builtin:<name>``, or functions taking the
            ``ExtensionAPI`` (inline extensions).
        no_extensions: Load only ``extensions`` (no discovered, configured or packaged ones).
        system_prompt: Replace the system prompt (text or a file).
        append_system_prompt: Add to the system prompt (text or a file).
        permission_mode: ``auto``, ``ask``, ``accept-edits``, ``plan`` or ``deny``; questions go to ``ui``.
        trust: True or False decides trust in ``cwd`` for this session; None uses the saved
            decision (never asks; undecided means untrusted).
        ui: Answers extensions' questions (permission prompts included); None: nobody answers.

    Raises:
        UserError: An unknown model or setting, a missing key, an unknown session... (one line).
    """
    from pi_coder.modes.options import CliOptions
    from pi_coder.modes.setup import prepare

    folder = os.path.realpath(os.fspath(cwd) if cwd is not None else os.getcwd())
    specs = [_extension_spec(item) for item in extensions]
    options = CliOptions(
        model=model,
        provider=provider,
        thinking=thinking,
        api_key=api_key,
        tools=None if tools is None else list(tools),
        no_tools=no_tools,
        session=None if session_file is None else os.fspath(session_file),
        no_session=in_memory,
        continue_session=continue_recent,
        session_dir=None if session_dir is None else os.fspath(session_dir),
        extensions=specs,
        no_extensions=no_extensions,
        system_prompt=system_prompt,
        append_system_prompt=[append_system_prompt] if append_system_prompt else [],
        permission_mode=permission_mode,
        approve=trust is True,
        no_approve=trust is False,
    )
    startup = prepare(options, mode="text", cwd=folder, settings_overrides=settings)
    notices = list(startup.notices)
    if startup.trust is not None and startup.trust.source == "undecided":
        notices.append(
            f"project folder {folder} is not trusted; its .pi settings, extensions, packages, skills and "
            "MCP servers were not loaded (pass trust=True to trust it for this session)"
        )
    return Session(startup.session, ui=ui, notices=notices)


def _extension_spec(item: str | os.PathLike[str] | Callable[..., Any]) -> str:
    """A loader spec for ``item``: a function becomes a module of its own holding ``extension``."""
    if not callable(item):
        return os.fspath(item)
    name = f"pi_coder_sdk_inline_{len([m for m in sys.modules if m.startswith('pi_coder_sdk_inline_')])}"
    module = types.ModuleType(name, f"inline extension {getattr(item, '__name__', 'extension')}")
    module.extension = item  # type: ignore[attr-defined]
    sys.modules[name] = module
    return name


class Session:
    """One conversation: send prompts, queue steering and follow-up messages, watch events.

    Use it as ``async with create_session(...) as session:`` or call :meth:`close` when done.
    ``agent_session`` is the session host underneath, for what this class does not wrap.
    """

    def __init__(self, agent_session: AgentSession, *, ui: SessionUI | None = None, notices: Sequence[str] = ()) -> None:
        self.agent_session = agent_session
        self.notices: list[str] = list(notices)
        """Start-up warnings (settings problems, a missing package, a model fallback)."""
        self._ui = ui
        self._started = False
        self._closed = False

    async def __aenter__(self) -> Session:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Start the extensions (``session_start``); :meth:`prompt` does it when needed."""
        if self._started:
            return
        self._started = True
        if self.agent_session.extensions is not None:
            from pi_coder.modes import extension_host

            await extension_host.start(self.agent_session, "sdk", self._ui)

    async def prompt(self, text: str, images: Sequence[ImageContent] | None = None) -> None:
        """Send ``text`` and return when the agent has finished (retries and queued follow-ups
        included). While a run is going on, use :meth:`steer` or :meth:`follow_up` instead."""
        if self._closed:
            raise UserError("this session is closed")
        await self.start()
        await self.agent_session.prompt(text, list(images) if images else None)

    def steer(self, text: str) -> None:
        """Queue ``text`` for the running agent: delivered after the current tool calls."""
        self.agent_session.steer(text)

    def follow_up(self, text: str) -> None:
        """Queue ``text`` for when the agent would stop."""
        self.agent_session.follow_up(text)

    async def abort(self) -> list[str]:
        """Stop the run and wait until idle; returns the queued messages that were not sent."""
        queued = self.agent_session.abort()
        await self.agent_session.wait_for_idle()
        return queued

    async def wait_for_idle(self) -> None:
        await self.agent_session.wait_for_idle()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event; returns a function that unsubscribes.

        Agent events (``pi_coder.AgentStart``, ``MessageUpdate``, ``ToolExecutionEnd``...) and
        session events (``QueueChanged``, ``AutoRetryStart``, ``Notice``...) carry ``type`` as Pi
        names it; ``MessageUpdate.assistant_message_event`` holds the streamed delta.
        """
        return self.agent_session.subscribe(listener)

    @property
    def messages(self) -> list[Any]:
        """The conversation so far (user, assistant and tool-result messages, ...)."""
        return [m for m in self.agent_session.messages if m.role != "system"]

    @property
    def last_assistant_text(self) -> str | None:
        return self.agent_session.last_assistant_text()

    @property
    def last_assistant_message(self) -> AssistantMessage | None:
        from pi_coder.ai.types import AssistantMessage

        for message in reversed(self.agent_session.messages):
            if isinstance(message, AssistantMessage):
                return message
        return None

    @property
    def usage(self) -> SessionStats:
        """Tokens (``input``, ``output``, ``cache_read``, ``cache_write``, ``total_tokens``), ``cost``
        in USD and message counts of the whole session."""
        return self.agent_session.stats()

    @property
    def model(self) -> Model | None:
        return self.agent_session.model

    @property
    def is_streaming(self) -> bool:
        return self.agent_session.is_streaming

    @property
    def session_file(self) -> str | None:
        return self.agent_session.session_file

    @property
    def session_id(self) -> str:
        return self.agent_session.session_id

    async def close(self) -> None:
        """Abort what runs, stop extensions (``session_shutdown``) and MCP servers, release the file."""
        if self._closed:
            return
        self._closed = True
        if self._started and self.agent_session.extensions is not None:
            from pi_coder.modes import extension_host

            await extension_host.stop(self.agent_session)
        await self.agent_session.close()
