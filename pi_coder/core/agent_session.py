"""AgentSession: the host every mode uses.

It wires an :class:`~pi_coder.agent.Agent` to a :class:`~pi_coder.session.SessionStore`, the
settings and the model collection: it persists every message on ``message_end``, queues
steering and follow-up text while the agent runs, runs the user's ``!`` commands, switches,
forks and navigates sessions, manages the model and thinking level, and re-emits every agent
event plus its own session events to its subscribers. Build one with
:func:`pi_coder.core.create_agent_session`.

The system prompt is the transcript's first system message (with the tool declarations); it
is rebuilt for every session and never written to the session file.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import pi_coder.core._session_ops as ops
from pi_coder.agent import Agent, AgentError
from pi_coder.ai.context import create_initial_system_message
from pi_coder.ai.models import Models
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.types import AssistantMessage, ImageContent, Model, SystemMessage, TextContent, UserMessage
from pi_coder.checkpoints.checkpoints import Checkpoints
from pi_coder.core._model_controls import ModelControls
from pi_coder.core._queue import QueuedTexts, QueueKind, user_text
from pi_coder.core.compaction_runner import AutoCompaction
from pi_coder.core.event_hub import EventHub, Listener
from pi_coder.core.events import Notice, QueueChanged, SessionNameChanged, SessionSwitched
from pi_coder.core.navigation import SessionNavigation, StoreSetup
from pi_coder.core.no_model import no_model_text
from pi_coder.core.retry import AutoRetry
from pi_coder.core.session_hooks import BranchSummarizer, RunHook
from pi_coder.core.session_resources import DiscoveredPaths, LoadedResources, SessionResources
from pi_coder.core.stats import SessionStats, UsageTotals, compute_stats
from pi_coder.core.user_bash import UserBash
from pi_coder.session.codec import to_json_value
from pi_coder.session.messages import BashExecutionMessage, CustomMessage
from pi_coder.session.store import SessionStore
from pi_coder.settings import LoadedSettings, Settings

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentMessage
    from pi_coder.core.host import ExtensionHooks
    from pi_coder.mcp.manager import McpManager
    from pi_coder.permissions.trust import TrustDecision
    from pi_coder.resources.skills import Skill, SkillSet
    from pi_coder.resources.system_prompt import SystemPromptOptions
    from pi_coder.resources.templates import PromptTemplate

__all__ = ["AgentSession", "Listener"]

_log = logging.getLogger(__name__)

BUSY_TEXT = "Agent is already processing. Specify streaming_behavior ('steer' or 'follow_up') to queue the message."


class AgentSession(EventHub):
    """One conversation: agent + session store + settings + models. See the module docstring.

    Its parts live beside it: the event hub it is (``event_hub.py``), the user's ``!`` commands
    (``user_bash.py``), switching and tree navigation (``navigation.py``), the model and thinking
    controls (``_model_controls.py``). Construct with :func:`pi_coder.core.create_agent_session`; the constructor expects parts
    that are already built.
    """

    def __init__(
        self,
        *,
        cwd: str,
        agent: Agent,
        store: SessionStore,
        models: Models,
        settings: LoadedSettings | Settings,
        model: Model | None,
        thinking_level: str | None,
        build_system_prompt: Callable[..., str],
        templates: dict[str, Any] | None = None,
        scoped_models: Sequence[tuple[Model, str | None]] = (),
        context_files: Sequence[str] = (),
        startup_notices: Sequence[str] = (),
        session_dir: str | None = None,
        resources: SessionResources | None = None,
    ) -> None:
        super().__init__()
        resources = resources if resources is not None else SessionResources()
        self.cwd = cwd
        self.agent = agent
        self.models = models
        self._store = store
        self._loaded = settings if isinstance(settings, LoadedSettings) else None
        self.settings: Settings = settings.settings if isinstance(settings, LoadedSettings) else settings
        self._build_prompt = build_system_prompt
        self._templates = templates or {}
        self.context_files: list[str] = list(context_files)
        self.startup_notices: list[str] = list(startup_notices)
        """Warnings from start-up (e.g. "Could not restore model ..."), for the UI to show."""
        self._session_dir = session_dir
        self.project_trust: TrustDecision | None = None
        """How trust in the project folder was decided (``permissions/trust.py``); None: not checked."""
        self.skills: SkillSet | Sequence[Skill] | None = resources.skills
        """The ``resources.skills.SkillSet`` (or a list of skills) for ``/skill:name``; None: no skills."""
        self.theme_paths: tuple[str, ...] | None = None
        """This run's theme files or folders (``--theme``, ``--no-themes``); None: the ``themes`` setting."""
        self.discover_themes = True
        """False (``--no-themes``): no config or ``.pi/themes`` folder themes; set by the factory."""
        self.resource_loader: Callable[[], LoadedResources] | None = resources.loader
        """Re-reads context files, SYSTEM files, templates and skills (``/reload``); None: nothing to re-read."""
        self._queued = QueuedTexts()
        self._bash = UserBash(self)
        self._navigation = SessionNavigation(self)
        self._usage = UsageTotals()
        self._hooks: list[RunHook] = []
        self.summarize_branch: BranchSummarizer | None = None
        """Set by the compaction feature; ``navigate_tree(summarize=True)`` calls it."""
        # Auto-retry, then compaction (pi_coder/core/retry.py, compaction_runner.py).
        self._retry = AutoRetry()
        self._compaction = AutoCompaction()
        self._hooks.extend((self._retry, self._compaction))
        self.summarize_branch = self._compaction.summarize_branch
        self.subscribe(self._compaction.on_event)
        self._busy = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._last_assistant: AssistantMessage | None = None
        self._persist_run = True
        self._save_watch = ops.SaveWatch()
        self._controls = ModelControls(
            agent=agent,
            models=models,
            settings=self.settings,
            store=lambda: self._store,
            scoped_models=list(scoped_models),
            emit_nowait=self.emit_nowait,
            save=self._save,
        )
        self.discovered_paths: DiscoveredPaths | None = resources.discovered_paths
        """Skill, template and theme paths from ``resources_discover``."""
        self.make_builtin_tool: Callable[[str], Any] | None = None
        """Builds a built-in tool that is not active (``pi.set_active_tools`` can enable every built-in)."""
        self.extensions: ExtensionHooks | None = None
        """The loaded extensions (``pi_coder.extensions``), bound by the modes' start-up; None without any."""
        self.mcp: McpManager | None = None
        """The MCP servers, set by ``modes/mcp_host`` once the session exists (the manager is bound to it,
        and may first appear on ``/reload``); None without any."""
        self.reload_hooks: list[Callable[[], list[str]]] = []
        """Called by ``reload_resources`` after settings were re-read (MCP servers); each returns warnings."""
        agent.subscribe(self._on_agent_event)
        agent.stream_fn = self._make_stream_fn(agent.stream_fn)
        agent.steering_mode = self.settings.steering_mode
        agent.follow_up_mode = self.settings.follow_up_mode
        self._controls.set_model_state(model)
        self.startup_notices.extend(self._attach(model, thinking_level, explicit=True))
        self.checkpoints = Checkpoints(
            self,
            warn=lambda text: self.emit(Notice(level="warning", text=text)),
            reloaded=lambda: self.emit(SessionSwitched(reason="tree", session_file=self.session_file)),
        )
        """File snapshots for /undo, /redo and code restores (``checkpoints/checkpoints.py``)."""
        self.checkpoints.install()

    # ------------------------------------------------------------------ properties

    @property
    def store(self) -> SessionStore:
        return self._store

    @property
    def model(self) -> Model | None:
        """The current model, or None when nothing is configured."""
        return self._controls.model

    @property
    def thinking_level(self) -> str:
        return self._controls.thinking_level

    @property
    def scoped_models(self) -> list[tuple[Model, str | None]]:
        """The models Ctrl+P cycles through (``--models`` / ``enabled_models``); empty: all available."""
        return self._controls.scoped_models

    @scoped_models.setter
    def scoped_models(self, value: list[tuple[Model, str | None]]) -> None:
        self._controls.scoped_models = list(value)

    @property
    def messages(self) -> list[AgentMessage]:
        """The live transcript (its first message is the system prompt)."""
        return self.agent.state.messages

    @property
    def is_streaming(self) -> bool:
        """True while a prompt (its run, retries and compaction included) is in progress."""
        return self._busy or self.agent.state.is_streaming

    @property
    def is_compacting(self) -> bool:
        return any(h.is_compacting for h in self._hooks)

    @property
    def is_retrying(self) -> bool:
        return any(h.is_retrying for h in self._hooks)

    @property
    def is_bash_running(self) -> bool:
        return self._bash.running

    @property
    def session_file(self) -> str | None:
        path = self._store.session_file
        return str(path) if path is not None else None

    @property
    def session_id(self) -> str:
        return self._store.session_id

    @property
    def session_name(self) -> str | None:
        return self._store.name

    @property
    def steering_mode(self) -> str:
        return self.agent.steering_mode

    @property
    def follow_up_mode(self) -> str:
        return self.agent.follow_up_mode

    @property
    def auto_compaction_enabled(self) -> bool:
        return self.settings.compaction.enabled

    @property
    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.agent.state.tools]

    @property
    def system_prompt(self) -> str:
        return self.agent.state.system_prompt

    @property
    def pending_bash_messages(self) -> list[BashExecutionMessage]:
        """``!`` commands that finished while the agent ran, waiting to be appended."""
        return self._bash.pending

    # ------------------------------------------------------------------ store, model and settings

    def _attach(self, model: Model | None, thinking: str | None, *, explicit: bool) -> list[str]:
        """Load the store into the agent (see :func:`_session_ops.restore_session`); returns the notices."""
        store = self._store
        if store.is_persisted:
            store.claim_writer()
        restored = ops.restore_session(
            store,
            self.models,
            default_thinking=self.settings.default_thinking_level,
            current=self.model,
            model=model,
            thinking=thinking,
            explicit=explicit,
        )
        self._save_watch.seen(store)
        self._controls.set_model_state(restored.model)
        self.agent.state.thinking_level = restored.thinking_level
        if restored.record_model and restored.model is not None:
            store.append_model_change(restored.model.provider, restored.model.id)
        if restored.record_thinking:
            store.append_thinking_level_change(restored.thinking_level)
        self.agent.session_id = store.session_id
        self.agent.state.messages = [*self._system_messages(), *restored.messages]
        self._queued.take_all()
        self.agent.clear_all_queues()
        return restored.notices

    def _save(self, updates: dict[str, Any]) -> None:
        notice = ops.save_settings(self._loaded, self.settings, updates)
        if notice:
            self.emit_nowait(Notice(level="warning", text=notice))

    def available_models(self) -> list[Model]:
        """Models whose provider has a key."""
        return self._controls.available_models()

    def set_model(self, model: Model, *, save_default: bool = True) -> None:
        """Switch model: appends ``model_change``, saves the default (unless ``save_default`` is
        False), re-clamps thinking.

        Raises:
            MissingApiKeyError: The model's provider has no key.
        """
        self._controls.set_model(model, save_default=save_default)

    def cycle_model(self, direction: int = 1, *, save_default: bool = True) -> tuple[Model, str] | None:
        """Next (or previous) model of the scope (``--models``), else of the available models;
        saved as the default unless ``save_default`` is False."""
        return self._controls.cycle_model(direction, save_default=save_default)

    def available_thinking_levels(self) -> list[str]:
        return self._controls.available_thinking_levels()

    def set_thinking_level(self, level: str, *, save_default: bool = True) -> None:
        """Set the thinking level (clamped to the model); appends an entry and saves the default
        (unless ``save_default`` is False)."""
        self._controls.set_thinking_level(level, save_default=save_default)

    def cycle_thinking_level(self, *, save_default: bool = True) -> str | None:
        """The next allowed level (wrapping); None for a model without reasoning."""
        return self._controls.cycle_thinking_level(save_default=save_default)

    def set_steering_mode(self, mode: Literal["one-at-a-time", "all"]) -> None:
        self._controls.set_steering_mode(mode)

    def set_follow_up_mode(self, mode: Literal["one-at-a-time", "all"]) -> None:
        self._controls.set_follow_up_mode(mode)

    def set_auto_compaction(self, enabled: bool) -> None:
        self._controls.set_auto_compaction(enabled)

    # ------------------------------------------------------------------ events (subscribe, emit: EventHub)

    def _queue_event(self) -> QueueChanged:
        return QueueChanged(steering=list(self._queued.steering), follow_up=list(self._queued.follow_up))

    async def _on_agent_event(self, event: Any) -> None:
        if self.extensions is not None:
            event = await self.extensions.on_agent_event(event)
        kind = event.type
        if kind == "message_start" and event.message.role == "user":
            if self._queued.delivered(user_text(event.message)):
                await self.emit(self._queue_event())
        elif kind == "message_end":
            message = event.message
            if self._persist_run:
                self._persist(message)
            if isinstance(message, AssistantMessage):
                self._last_assistant = message
                await self.emit(event)
                self._check_saved()
                await self._retry.on_message_end(self, message)
                return
        elif kind == "agent_end":
            event.will_retry = self._retry.will_retry(self, self._last_assistant)
        await self.emit(event)
        if kind == "message_end":
            self._check_saved()

    def _check_saved(self) -> None:
        """Say once when saving starts failing (and when it works again), and when another process wrote."""
        for notice in self._save_watch.notices(self._store):
            self.emit_nowait(notice)

    def _persist(self, message: Any) -> None:
        role = message.role
        if isinstance(message, CustomMessage):
            details = to_json_value(message.details)
            self._store.append_custom_message(message.custom_type, message.content, message.display, details)
        elif role in ("user", "assistant", "toolResult", "bashExecution"):
            self._store.append_message(message)

    # ------------------------------------------------------------------ prompting

    def add_run_hook(self, hook: RunHook) -> None:
        """Register a retry/compaction hook (see :mod:`pi_coder.core.session_hooks`)."""
        self._hooks.append(hook)

    def _expand(self, text: str) -> str:
        if not text.startswith("/"):
            return text
        if self.skills and text.startswith("/skill:"):  # skills before templates (docs/architecture.md#skill-commands)
            from pi_coder.resources.skills import expand_skill_command

            try:
                return expand_skill_command(text, self.skills)
            except (OSError, UnicodeDecodeError) as exc:
                if self.extensions is not None:
                    self.extensions.report(None, "skill_expansion", exc)
                else:
                    _log.warning("skill expansion failed: %s", exc)
                return text
        if not self._templates:
            return text
        from pi_coder.resources.templates import expand_template

        return expand_template(text, self._templates)

    async def prompt(
        self,
        text: str,
        images: Sequence[ImageContent] | None = None,
        streaming_behavior: Literal["steer", "follow_up", "followUp"] | None = None,
        *,
        source: Literal["interactive", "rpc", "extension"] = "interactive",
        checked: bool = False,
    ) -> None:
        """Send a user prompt; while the agent runs, queue it as steering or follow-up.

        ``/template args`` is expanded first. When idle, returns after the run (and any retry,
        compaction or queued follow-ups) has finished; when queueing, returns at once.

        Raises:
            RuntimeError: The agent is busy and ``streaming_behavior`` is None.
        """
        if self.extensions is not None and not checked:  # an extension command, then `input` (docs/extensions-runtime.md#order-within-one-prompt)
            outcome = await self.extensions.intercept_prompt(text, images, source, streaming_behavior)
            if outcome is None:
                return
            text, images = outcome[0], outcome[1] or None
        if self.mcp is not None and text.startswith("/mcp__"):  # an MCP prompt (docs/mcp.md#prompts)
            try:
                expanded = await self.mcp.expand_prompt(text)
            except ValueError as exc:
                await self.emit(Notice(level="error", text=str(exc)))
                return
            if expanded is not None:
                text, images = expanded[0], [*(images or ()), *expanded[1]] or None
        text = self._expand(text)
        if self.is_streaming:
            if streaming_behavior is None:
                raise RuntimeError(BUSY_TEXT)
            self._enqueue("steer" if streaming_behavior == "steer" else "follow_up", text, images)
            return
        notice = ops.sync_store(self._store)
        self._save_watch.seen(self._store)
        if notice is not None:
            self.reload_context()
            await self.emit(notice)
        message = UserMessage(content=[TextContent(text=text), *(images or ())])
        if self.extensions is not None:  # before_agent_start runs after the run hooks
            await self._run(self.extensions.prompt_starter(message, text, images or ()), before_prompt=True)
            return
        await self._run(lambda: self.agent.prompt([message]), before_prompt=True)

    def steer(self, text: str, images: Sequence[ImageContent] | None = None) -> None:
        """Queue a message for the agent's next turn (delivered after the current tool batch)."""
        self._enqueue("steer", self._expand(text), images)

    def follow_up(self, text: str, images: Sequence[ImageContent] | None = None) -> None:
        """Queue a message for when the agent would otherwise stop."""
        self._enqueue("follow_up", self._expand(text), images)

    def _enqueue(self, kind: QueueKind, text: str, images: Sequence[ImageContent] | None) -> None:
        message = UserMessage(content=[TextContent(text=text), *(images or ())])
        self._queued.add(kind, text)
        (self.agent.steer if kind == "steer" else self.agent.follow_up)(message)
        self.emit_nowait(self._queue_event())

    @property
    def pending_message_count(self) -> int:
        """How many steering and follow-up messages are queued."""
        return len(self._queued)

    def queued_messages(self) -> list[tuple[QueueKind, str]]:
        """Queued texts for display: steering first, then follow-up."""
        return self._queued.items()

    def dequeue(self) -> list[str]:
        """Take every queued text back (steering first) without aborting."""
        texts = self._queued.take_all()
        self.agent.clear_all_queues()
        if texts:
            self.emit_nowait(self._queue_event())
        return texts

    def clear_queue(self) -> tuple[list[str], list[str]]:
        """Take every queued text back without aborting: ``(steering, follow_up)`` (RPC ``clear_queue``)."""
        steering, follow_up = list(self._queued.steering), list(self._queued.follow_up)
        self.dequeue()
        return steering, follow_up

    def abort(self) -> list[str]:
        """Abort the run, a retry wait, compaction and a running ``!`` command.

        Returns:
            The queued texts that were not delivered (steering first), for the editor.
        """
        texts = self.dequeue()
        for hook in self._hooks:
            hook.abort()
        self._navigation.abort()
        self.agent.abort()
        self.abort_bash()
        return texts

    @property
    def auto_retry_enabled(self) -> bool:
        return self.settings.retry.enabled

    def set_auto_retry(self, enabled: bool) -> None:
        """Turn automatic retry on or off (RPC ``set_auto_retry``); saved like ``set_auto_compaction``."""
        self._save({"retry.enabled": enabled})
        self.settings.retry.enabled = enabled

    async def abort_retry(self) -> None:
        """Cancel a pending retry wait and stop retrying (RPC ``abort_retry``); the run is not aborted.

        Returns once the cycle's ``auto_retry_end`` ("Retry cancelled") has been emitted.
        """
        await self._retry.abort_retry()

    async def wait_for_idle(self) -> None:
        """Return when no prompt is in progress."""
        await self._idle.wait()
        await self.agent.wait_for_idle()

    async def continue_(self) -> None:
        """Continue the agent from the current transcript (after retries, compaction, tool results)."""
        if self.is_streaming:
            raise RuntimeError("Agent is already processing. Wait for completion before continuing.")
        await self._run(self.agent.continue_, before_prompt=False)

    async def _run(self, start: Callable[[], Any], *, before_prompt: bool) -> None:
        self._busy = True
        self._idle.clear()
        try:
            self._bash.flush()
            if before_prompt:
                for hook in tuple(self._hooks):
                    await hook.before_prompt(self)
            self._last_assistant = None
            self._persist_run = self._can_call_model()
            await start()
            await self._settle()
            if self.extensions is not None:
                await self.extensions.settled(self._last_run_aborted())
        finally:
            self._persist_run = True
            self._busy = False
            self._idle.set()

    def _last_run_aborted(self) -> bool:
        for message in reversed(self.agent.state.messages):
            role = message.role
            if role == "assistant":
                return getattr(message, "stop_reason", None) == "aborted"
            if role in ("user", "toolResult"):
                return False
        return False

    async def _settle(self) -> None:
        while True:
            again = False
            for hook in tuple(self._hooks):
                if await hook.after_run(self, self._last_assistant):
                    again = True
                    break
            if not again and not self.agent.has_queued_messages():
                if self.extensions is None or not await self.extensions.before_settle():
                    break
            self._last_assistant = None
            try:
                await self.agent.continue_()
            except AgentError as exc:
                _log.debug("continue after run not possible: %s", exc)
                break
        self._bash.flush()

    async def compact(self, instructions: str | None = None) -> Any:
        """Compact the context now (``/compact``): aborts the run, then asks the compaction hook.

        Raises:
            RuntimeError: No registered hook can compact.
        """
        for hook in tuple(self._hooks):
            compact = getattr(hook, "compact", None)
            if compact is not None:
                await self._stop()
                return await compact(self, instructions)
        raise RuntimeError("Compaction is not available")

    def drop_last_assistant(self) -> AssistantMessage | None:
        """Remove a trailing assistant message from the in-memory context (it stays in the file)."""
        messages = self.agent.state.messages
        if messages and isinstance(last := messages[-1], AssistantMessage):
            messages.pop()
            return last
        return None

    def reload_resources(self) -> list[str]:
        """Re-read settings, context files, SYSTEM files, templates and skills (``/reload``, docs/extensions-runtime.md#replacement-reload-and-quit).

        The system message is rebuilt for the next request. Returns the warnings found.
        """
        if self._loaded is not None:
            trusted = self.project_trust is None or self.project_trust.trusted
            self._loaded.reload(project_trusted=trusted)
        warnings = [w for hook in tuple(self.reload_hooks) for w in hook()]
        if self.resource_loader is None:
            return warnings
        res = self.resource_loader()
        self._build_prompt = res.build_prompt
        self._templates = res.templates
        self.skills = res.skills
        self.context_files = list(res.context_files)
        self.reload_context()
        return [*res.notices, *warnings]

    def reload_context(self) -> None:
        """Replace the agent transcript with the store's context (e.g. after a compaction entry)."""
        self.agent.state.messages = [*self._system_messages(), *self._store.build_session_context().messages]

    def _prompt_text(self) -> str:
        """The system prompt for the active tools (extension tools by their ``prompt_snippet``)."""
        if self.extensions is None:
            return self._build_prompt(self.tool_names)
        tools, guidelines = self.extensions.prompt_tools(self.tool_names)
        return self._build_prompt(tools, guidelines)

    def system_prompt_options(self) -> SystemPromptOptions:
        """The base inputs of the current system prompt (a copy; docs/extensions.md)."""
        from pi_coder.resources.system_prompt import PromptBuilder, SystemPromptOptions

        ext = self.extensions
        tools, guidelines = ext.prompt_tools(self.tool_names) if ext is not None else (list(self.tool_names), [])
        if isinstance(self._build_prompt, PromptBuilder):
            return self._build_prompt.options(tools, guidelines)
        names = [spec if isinstance(spec, str) else spec[0] for spec in tools]
        return SystemPromptOptions(cwd=self.cwd, selected_tools=names, prompt_guidelines=list(guidelines))

    def refresh_system_prompt(self) -> None:
        """Rebuild the leading system message's text after the active tools changed (its tool
        declarations stay: the next request announces the difference)."""
        messages = self.agent.state.messages
        for index, message in enumerate(messages):
            if isinstance(message, SystemMessage):
                prompt = self._prompt_text()
                if message.content != prompt:
                    messages[index] = message.model_copy(update={"content": prompt})
                return

    def _system_messages(self) -> list[Any]:
        prompt = self._prompt_text()
        system = create_initial_system_message(prompt, [t.declaration() for t in self.agent.state.tools])
        return [system] if system is not None else []

    def _can_call_model(self) -> bool:
        # A run that can only end in "no model" / "no API key" is shown but not written to the file.
        model = self._controls.model
        if model is None:
            return False
        return self.models.get_provider(model.provider) is None or self.models.has_key(model.provider)

    def _make_stream_fn(self, inner: Callable[..., Any]) -> Callable[..., Any]:
        def stream(model: Model, context: Any, options: Any = None) -> Any:
            if self._controls.model is None:
                from pi_coder.ai.models import error_stream

                return error_stream(model, no_model_text(self.models.models_toml_path))
            return inner(model, context, self._request_options(options))

        return stream

    def _request_options(self, options: Any) -> Any:
        """Fill the request bounds and provider retries from the settings (explicit values win)."""
        if not isinstance(options, StreamOptions):
            return options
        settings = self.settings
        changes: dict[str, Any] = {}
        for name, value in (
            ("timeout_ms", settings.http_idle_timeout_ms),
            ("connect_timeout_ms", settings.http_connect_timeout_ms),
            ("content_timeout_ms", settings.http_content_timeout_ms),
            ("max_retries", settings.retry.provider.max_retries),
        ):
            if getattr(options, name) is None:
                changes[name] = value
        return dataclasses.replace(options, **changes) if changes else options

    # ------------------------------------------------------------------ user shell commands

    async def run_bash(
        self, command: str, *, exclude_from_context: bool = False, request_id: object = None
    ) -> BashExecutionMessage:
        """Run a user ``!cmd`` (``!!cmd`` with ``exclude_from_context``) and record it (``user_bash.py``).

        While the agent runs, the message is held back and appended before the next prompt.

        Raises:
            RuntimeError: Another ``!`` command is running.
        """
        return await self._bash.run(command, exclude_from_context=exclude_from_context, request_id=request_id)

    def shell_environment(self) -> dict[str, str]:
        """The environment of ``!`` commands: pi's without secrets, plus ``AI_AGENT`` and the ``PI_*`` markers."""
        from pi_coder.core.shell_env import secret_env_names, session_markers
        from pi_coder.tools import safe_environment

        return safe_environment(
            os.environ,
            allow=self.settings.bash.env_allow,
            secret_names=secret_env_names(self.models),
            extra=session_markers(self),
        )

    def abort_bash(self) -> None:
        """Kill the running ``!`` command, if any."""
        self._bash.abort()

    # ------------------------------------------------------------------ sessions

    async def _stop(self) -> None:
        self.abort()
        await self.wait_for_idle()
        self._bash.discard_pending()

    def _replace_store(self, store: SessionStore) -> None:
        self._store.close()
        self._store = store

    # Switching and tree navigation: navigation.py (docstrings there).

    async def new_session(self, *, setup: StoreSetup | None = None) -> bool:
        """Start a new session file; True when an extension cancelled (``SessionNavigation.new_session``)."""
        return await self._navigation.new_session(setup=setup)

    async def switch_session(self, path: str) -> bool:
        """Open another session file; True when cancelled (``SessionNavigation.switch_session``)."""
        return await self._navigation.switch_session(path)

    def fork_candidates(self) -> list[tuple[str, str]]:
        """``(entry_id, text)`` of the user messages on the current branch, oldest first."""
        return ops.fork_candidates(self._store)

    async def fork(self, entry_id: str) -> str | None:
        """Fork before user message ``entry_id``; its text, or None when cancelled (``SessionNavigation.fork``)."""
        return await self._navigation.fork(entry_id)

    async def clone(self) -> bool:
        """Copy the current branch into a new session file; True when cancelled (``SessionNavigation.clone``)."""
        return await self._navigation.clone()

    async def import_session(self, path: str) -> bool:
        """``/import`` a session file and switch to the copy; True when cancelled (``SessionNavigation.import_session``)."""
        return await self._navigation.import_session(path)

    async def navigate_tree(
        self,
        entry_id: str,
        summarize: bool = False,
        instructions: str | None = None,
        *,
        replace_instructions: bool = False,
    ) -> str | None:
        """Move within the session tree; the editor text or None (``SessionNavigation.navigate_tree``)."""
        return await self._navigation.navigate_tree(
            entry_id, summarize, instructions, replace_instructions=replace_instructions
        )

    def set_session_name(self, name: str) -> None:
        """Name the session (a ``session_info`` entry)."""
        self._store.append_session_info(name)
        self.emit_nowait(SessionNameChanged(name=name.strip()))
        self._check_saved()

    @property
    def loaded_settings(self) -> LoadedSettings | None:
        """The settings files read at start (paths, warnings, unknown keys); None when given plain settings."""
        return self._loaded

    def save_settings(self, updates: dict[str, Any]) -> None:
        """Write dotted keys to the global settings.toml (comments kept) and apply them in memory.

        A failure is reported as a warning ``Notice``, not raised (``/settings`` uses this).
        """
        self._save(dict(updates))

    @property
    def prompt_templates(self) -> list[PromptTemplate]:
        """The prompt templates ``prompt()`` expands, by name (for ``/`` completion)."""
        return list(self._templates.values())

    # ------------------------------------------------------------------ reading

    def stats(self) -> SessionStats:
        """Counts (current branch), token/cost totals (whole session) and context usage."""
        self._usage = ops.refresh_usage(self._usage, self._store)
        return compute_stats(
            self.messages,
            self._usage,
            context_window=self.model.context_window if self.model else 0,
            session_file=self.session_file,
            session_id=self.session_id,
        )

    def last_assistant_text(self) -> str | None:
        """Text of the last assistant message with content (aborted empty replies skipped)."""
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage):
                if message.stop_reason == "aborted" and not message.content:
                    continue
                return message.text().strip() or None
        return None

    def user_prompt_history(self) -> list[str]:
        """The user texts of the current branch, oldest first (for the editor's history)."""
        return [text for _, text in self.fork_candidates()]

    async def close(self) -> None:
        """Abort whatever runs and wait until idle, then retry a failed save once and release the file."""
        await self._stop()
        await self.checkpoints.settled()  # the last run's checkpoint entry, written in the background
        self.checkpoints.close()  # stops watching the folder
        if self.mcp is not None:  # stops every MCP server (within about 3 s)
            await self.mcp.close()
        self._store.close()
        self._check_saved()
        await self.drain_listeners()
