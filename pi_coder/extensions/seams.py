"""Where extensions attach to the session and the agent (docs/extensions-runtime.md#placement-and-seams, order of docs/extensions-runtime.md#order-within-one-prompt).

``install`` sets the agent hooks (``before_tool_call`` -> ``tool_call``, ``after_tool_call`` ->
``tool_result``, ``transform_context`` -> ``context`` and the run's system prompt,
``on_payload`` -> ``before_provider_request``). ``AgentSession`` calls :class:`SessionSeams`
methods (through ``session.extensions``) for commands, ``input``, ``before_agent_start``, agent
events, ``user_bash`` and session replacement.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pi_coder.ai.types import AssistantMessage

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentTool
    from pi_coder.ai.events import ServerSentEvent
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.extensions.host import RunnerHost
    from pi_coder.extensions.types import Extension

__all__ = ["SessionSeams", "adapt_tool", "install", "reload", "send_message"]


class _LazyEvents:
    """``pi_coder.extensions.events``, imported on first use (only when some handler needs it, docs/extensions-runtime.md#start-up-cost)."""

    def __getattr__(self, name: str) -> Any:
        from pi_coder.extensions import events

        return getattr(events, name)


E: Any = _LazyEvents()


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _dump_args(args: Any) -> dict[str, Any]:
    dump = getattr(args, "model_dump", None)
    if dump is not None:
        return dict(dump(by_alias=True, mode="python"))
    return copy.deepcopy(dict(args)) if isinstance(args, dict) else {}


def _copy_message(message: Any) -> Any:
    copier = getattr(message, "model_copy", None)
    return copier(deep=True) if copier is not None else copy.deepcopy(message)


# ---------------------------------------------------------------------------- tools


def adapt_tool(runner: RunnerHost, ext: Extension, definition: Any) -> AgentTool:
    """An ``AgentTool`` for a ``ToolDefinition`` (its ``execute`` gets ``ctx``); ``AgentTool``s pass through."""
    from pi_coder.agent.types import AgentTool

    if isinstance(definition, AgentTool):
        return definition

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return await _maybe(definition.execute(tool_call_id, params, signal, on_update, runner.context(ext)))

    return AgentTool(
        name=definition.name,
        label=definition.label,
        description=definition.description,
        parameters=definition.parameters,
        execute=execute,
        execution_mode=definition.execution_mode,
        prepare_arguments=definition.prepare_arguments,
        read_only=bool(getattr(definition, "read_only", False)),
    )


def install(runner: RunnerHost, session: AgentSession) -> None:
    """Wrap the agent's hooks (keeping any already set) and listen to session events."""
    from pi_coder.agent.types import AfterToolCallResult, BeforeToolCallResult, hook_result

    agent = session.agent
    inner_before, inner_after = agent.before_tool_call, agent.after_tool_call
    inner_transform, inner_payload = agent.transform_context, agent.on_payload

    async def before_tool_call(ctx: Any, signal: Any) -> Any:
        if inner_before is not None:
            decision = hook_result(await _maybe(inner_before(ctx, signal)), BeforeToolCallResult)
            if decision is not None and decision.block:
                return decision
        if not runner.has("tool_call"):
            return None
        event = E.ToolCallEvent(tool_call_id=ctx.tool_call.id, tool_name=ctx.tool_call.name, input=_dump_args(ctx.args))
        before = copy.deepcopy(event.input)
        async for ext, ok, result in runner.results("tool_call", event, E.ToolCallResult):
            if not ok:  # fail closed (docs/extensions-runtime.md#errors-and-isolation)
                return BeforeToolCallResult(block=True, reason=f"Extension {ext.name} failed: {result}")
            if result is not None and result.block:
                return BeforeToolCallResult(block=True, reason=result.reason, terminate=result.terminate or None)
        if event.input != before:
            problem = _apply_input(session, ctx, event.input)
            if problem is not None:
                return BeforeToolCallResult(block=True, reason=problem)
        return None

    async def after_tool_call(ctx: Any, signal: Any) -> Any:
        override = await _maybe(inner_after(ctx, signal)) if inner_after is not None else None
        if not runner.has("tool_result"):
            return override
        result = ctx.result
        event = E.ToolResultEvent(
            tool_call_id=ctx.tool_call.id,
            tool_name=ctx.tool_call.name,
            input=_dump_args(ctx.args),
            content=list(result.content),
            details=result.details,
            is_error=ctx.is_error,
            usage=result.usage,
        )
        changed = False
        async for _ext, ok, patch in runner.results("tool_result", event, E.ToolResultPatch):
            if not ok or patch is None:
                continue
            for name in ("content", "details", "is_error", "usage"):
                value = getattr(patch, name)
                if value is not None:
                    setattr(event, name, value)
                    changed = True
        if not changed:
            return override
        return AfterToolCallResult(content=event.content, details=event.details, is_error=event.is_error, usage=event.usage)

    async def transform_context(messages: list[Any], signal: Any) -> list[Any]:
        if inner_transform is not None:
            messages = await _maybe(inner_transform(messages, signal))
        prompt = runner.run_system_prompt
        if prompt is not None:
            messages = _with_prompt(messages, prompt)
        if runner.has("context"):
            head = [m for m in messages if m.role == "system"]
            event = E.ContextEvent(messages=[_copy_message(m) for m in messages if m.role != "system"])
            async for _ext, ok, result in runner.results("context", event, E.ContextResult):
                if ok and result is not None:
                    event.messages = list(result.messages)
            messages = [*head, *event.messages]
        if runner.has("context_with_system"):
            messages = await _context_with_system(runner, messages)
        return messages

    async def on_payload(payload: dict[str, Any]) -> Any:
        if inner_payload is not None:
            replaced = await _maybe(inner_payload(payload))
            if isinstance(replaced, dict):
                payload = replaced
        if not runner.has("before_provider_request"):
            return payload
        event = E.BeforeProviderRequestEvent(payload=payload, model=session.model)
        for ext, handler in runner.handlers("before_provider_request"):
            ok, value = await runner.call(ext, "before_provider_request", handler, event, runner.context(ext))
            if ok and isinstance(value, dict):
                event.payload = value
        return event.payload

    inner_headers, inner_response = agent.on_headers, agent.on_response

    async def on_headers(headers: dict[str, str]) -> Any:
        if inner_headers is not None:
            replaced = await _maybe(inner_headers(headers))
            if isinstance(replaced, dict):
                headers = replaced
        if not runner.has("before_provider_headers"):
            return headers
        event = E.BeforeProviderHeadersEvent(headers=headers)
        for ext, handler in runner.handlers("before_provider_headers"):
            ok, value = await runner.call(ext, "before_provider_headers", handler, event, runner.context(ext))
            if ok and isinstance(value, dict):
                event.headers = value
        return event.headers

    async def on_response(response: Any) -> None:
        if inner_response is not None:
            await _maybe(inner_response(response))
        if runner.has("after_provider_response"):
            status = int(response.get("status", 0)) if isinstance(response, dict) else 0
            headers = dict(response.get("headers") or {}) if isinstance(response, dict) else {}
            await runner.notify("after_provider_response", E.AfterProviderResponseEvent(status=status, headers=headers))

    async def on_stream_event(events: list[ServerSentEvent]) -> None:
        if not runner.has("provider_stream_event"):
            return
        model = session.model
        for sse in events:
            event = E.ProviderStreamEvent(
                provider=model.provider if model is not None else "",
                api=model.api if model is not None else "",
                model=model.id if model is not None else "",
                data=_sse_data(sse.raw),
                sse_event=sse.event,
            )
            await runner.notify("provider_stream_event", event)

    agent.on_stream_event = on_stream_event
    agent.on_headers = on_headers
    agent.on_response = on_response
    agent.before_tool_call = before_tool_call
    agent.after_tool_call = after_tool_call
    agent.transform_context = transform_context
    agent.on_payload = on_payload
    session.subscribe(runner.on_session_event)


async def _context_with_system(runner: RunnerHost, messages: list[Any]) -> list[Any]:
    """Chain ``context_with_system`` over the full transcript; a result without a leading system message is refused."""
    keeps_head = bool(messages) and getattr(messages[0], "role", None) == "system"
    event = E.ContextWithSystemEvent(messages=[_copy_message(m) for m in messages])
    async for ext, ok, result in runner.results("context_with_system", event, E.ContextResult):
        if not ok or result is None:
            continue
        replaced = list(result.messages)
        if keeps_head and (not replaced or getattr(replaced[0], "role", None) != "system"):
            runner.report(ext, "context_with_system", ValueError("the returned messages must start with the system message; result ignored"))
            continue
        event.messages = replaced
    return list(event.messages)


def _sse_data(raw: bytes) -> Any:
    import json

    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _apply_input(session: AgentSession, ctx: Any, values: dict[str, Any]) -> str | None:
    """Re-validate edited ``tool_call`` input and copy it onto the call's arguments; a problem text or None."""
    from pi_coder.agent import validate_tool_arguments

    tool = next((t for t in session.agent.state.tools if t.name == ctx.tool_call.name), None)
    if tool is None:
        return None
    try:
        fresh = validate_tool_arguments(tool, values)
    except ValueError as exc:
        return str(exc)
    args = ctx.args
    if isinstance(args, dict):
        args.clear()
        args.update(fresh)
        return None
    try:
        for name in type(fresh).model_fields:
            setattr(args, name, getattr(fresh, name))
    except Exception as exc:
        return f"Cannot apply the edited arguments: {exc}"
    return None


def _with_prompt(messages: list[Any], prompt: str) -> list[Any]:
    for index, message in enumerate(messages):
        if message.role == "system":
            out = list(messages)
            out[index] = message.model_copy(update={"content": prompt})
            return out
    return messages


def _resolve_path(cwd: str, path: str) -> str:
    import os

    return os.path.join(cwd, os.path.expanduser(path))


# ---------------------------------------------------------------------------- messages


def _custom_message(spec: Any) -> Any:
    from pi_coder.session.messages import CustomMessage

    return CustomMessage(custom_type=spec.custom_type, content=spec.content, display=spec.display, details=spec.details)


def send_message(runner: RunnerHost, spec: Any, *, deliver_as: str, trigger_turn: bool) -> None:
    session = runner.session
    message = _custom_message(spec)
    if deliver_as == "next_turn":
        runner.next_turn.append(message)
        return
    if session.is_streaming:
        (session.agent.follow_up if deliver_as == "follow_up" else session.agent.steer)(message)
        return
    if trigger_turn:
        starter = runner.prompt_starter(message, _spec_text(spec), [], message_type="custom")
        runner.spawn(session._run(starter, before_prompt=True))
        return
    _append_message(session, message)


def _append_draft(runner: RunnerHost, draft: Any) -> str | None:
    """Append one ``agent_before_settle`` draft entry; a problem text when it is not valid."""
    if isinstance(draft, E.CustomMessageSpec):
        draft = {"type": "custom_message", **vars(draft)}
    if not isinstance(draft, dict):
        return f"an entry must be a dict or CustomMessageSpec, not {type(draft).__name__}"
    kind = draft.get("type")
    name = draft.get("custom_type", draft.get("customType"))
    if not isinstance(name, str) or not name:
        return "an entry needs a custom_type"
    if kind == "custom":
        runner.append_entry(name, draft.get("data"))
        return None
    if kind != "custom_message":
        return f'entry type {kind!r} is not supported here (use "custom_message" or "custom")'
    content = draft.get("content", "")
    if not isinstance(content, str | list):
        return "a custom_message needs text content"
    spec = E.CustomMessageSpec(
        custom_type=name, content=content, display=bool(draft.get("display", True)), details=draft.get("details")
    )
    _append_message(runner.session, _custom_message(spec))
    return None


def _append_message(session: AgentSession, message: Any) -> None:
    """Add a custom message to the context and the session file, and show it (not a prompt)."""
    session.agent.state.messages.append(message)
    session.store.append_custom_message(message.custom_type, message.content, message.display, message.details)
    from pi_coder.agent.events import MessageEnd, MessageStart

    session.emit_nowait(MessageStart(message=message))  # the TUI shows it, json mode writes it
    session.emit_nowait(MessageEnd(message=message))


def _spec_text(spec: Any) -> str:
    if isinstance(spec.content, str):
        return spec.content
    return "".join(getattr(block, "text", "") for block in spec.content)


# ---------------------------------------------------------------------------- session seams


class SessionSeams:
    """The methods ``AgentSession`` calls on ``session.extensions`` (mixed into the runner)."""

    _starting = False
    last_model: Any = None
    """The model before the latest change (``model_select.previous_model``); set at bind."""
    last_thinking_level: str | None = None
    run_system_prompt: str | None
    """Set by the runner: the system prompt ``before_agent_start`` chose for the current run."""

    async def intercept_prompt(  # a mixin of the runner: self is the runner
        self: RunnerHost,
        text: str,
        images: Sequence[Any] | None,
        source: str,
        streaming_behavior: str | None,
    ) -> tuple[str, list[Any]] | None:
        """Steps 1-2 of docs/extensions-runtime.md#order-within-one-prompt: run an extension command, then ``input``. None: handled, stop."""
        found = self.find_command(text.strip())
        if found is not None:
            await self.run_command(*found)
            return None
        if not self.has("input"):
            return text, list(images or ())
        behavior = "follow_up" if streaming_behavior in ("follow_up", "followUp") else streaming_behavior
        event = E.InputEvent(text=text, images=list(images or ()), source=source, streaming_behavior=behavior)
        async for _ext, ok, result in self.results("input", event, E.InputResult):
            if not ok or result is None or result.action == "continue":
                continue
            if result.action == "handled":
                return None
            if result.action == "transform":
                if result.text is not None:
                    event.text = result.text
                if result.images is not None:
                    event.images = list(result.images)
        return event.text, event.images

    def prompt_starter(  # a mixin of the runner: self is the runner
        self: RunnerHost,
        message: Any,
        text: str,
        images: Sequence[Any],
        *,
        message_type: str = "user",
    ) -> Callable[[], Any]:
        """The run's start: ``before_agent_start`` (step 5), then the prompt with its extra messages."""
        session = self.session

        async def start() -> None:
            self.run_system_prompt = None
            self.interrupted = False
            extra: list[Any] = list(self.next_turn)
            self.next_turn.clear()
            if self.has("before_agent_start"):
                event = E.BeforeAgentStartEvent(
                    message_type=message_type,
                    prompt=text,
                    images=list(images),
                    message=message,
                    system_prompt=session.system_prompt,
                    tool_names=session.tool_names,
                )
                changed = False
                async for _ext, ok, result in self.results("before_agent_start", event, E.BeforeAgentStartResult):
                    if not ok or result is None:
                        continue
                    if result.system_prompt is not None:
                        event.system_prompt = result.system_prompt
                        changed = True
                    if result.message is not None:
                        spec = result.message
                        spec = spec if isinstance(spec, E.CustomMessageSpec) else E.CustomMessageSpec(**spec)
                        extra.append(_custom_message(spec))
                if changed:
                    self.run_system_prompt = event.system_prompt
                if self.interrupted:  # Ctrl+C cancelled a handler that held the run up
                    return
            self._starting = True
            await session.agent.prompt([message, *extra])

        return start

    async def on_agent_event(self: RunnerHost, event: Any) -> Any:
        """Dispatch an agent event (before it is persisted); ``message_end`` may replace the message."""
        kind = event.type
        if kind == "agent_start":
            if not self._starting:
                self.run_system_prompt = None
            self._starting = False
        if not self.has(kind):
            return event
        if kind != "message_end":
            await self.notify(kind, event)
            return event
        original = event.message
        current = original
        async for ext, ok, result in self.results("message_end", event, E.MessageEndResult):
            if not ok or result is None:
                continue
            # An extension's return value is unchecked: it may not be a message at all.
            if getattr(result.message, "role", None) != current.role:
                self.report(ext, "message_end", TypeError("message_end must return a message of the same role"))
                continue
            current = event.message = result.message
        if current is not original:
            messages = self.session.agent.state.messages
            for index in range(len(messages) - 1, -1, -1):
                if messages[index] is original:
                    messages[index] = current
                    break
        return event

    async def before_compact(
        self: RunnerHost, preparation: Any, instructions: str | None, reason: str, signal: Any
    ) -> Any:
        """``session_before_compact``: ``"cancel"``, the last supplied ``CompactionResult``, or None."""
        if not self.has("session_before_compact"):
            return None
        event = E.SessionBeforeCompactEvent(
            preparation=preparation,
            branch_entries=list(self.session.store.get_branch()),
            custom_instructions=instructions,
            reason=reason,
            signal=signal,
        )
        supplied: Any = None
        async for _ext, ok, result in self.results("session_before_compact", event, E.SessionBeforeCompactResult):
            if not ok or result is None:
                continue
            if result.cancel:
                return "cancel"
            if result.compaction is not None:  # last wins
                value = result.compaction
                supplied = value if isinstance(value, E.CompactionResult) else E.CompactionResult(**value)
        return supplied

    async def compacted(self: RunnerHost, entry: Any, reason: str, *, from_extension: bool) -> None:
        if self.has("session_compact"):
            event = E.SessionCompactEvent(compaction_entry=entry, from_extension=from_extension, reason=reason)
            await self.notify("session_compact", event)

    async def compact_failed(
        self: RunnerHost, reason: str, error: str | None, *, aborted: bool, from_extension: bool
    ) -> None:
        if self.has("session_compact_failed"):
            event = E.SessionCompactFailedEvent(
                reason=reason, error_message=error, aborted=aborted, from_extension=from_extension
            )
            await self.notify("session_compact_failed", event)

    async def before_tree(
        self: RunnerHost,
        target_id: str,
        old_leaf_id: str | None,
        user_wants_summary: bool,
        instructions: str | None,
        signal: Any,
    ) -> Any:
        """``session_before_tree``: ``"cancel"``, ``(summary, instructions)`` (last wins), or None."""
        if not self.has("session_before_tree"):
            return None
        event = E.SessionBeforeTreeEvent(
            target_id=target_id,
            old_leaf_id=old_leaf_id,
            user_wants_summary=user_wants_summary,
            custom_instructions=instructions,
            signal=signal,
        )
        summary: Any = None
        changed = False
        async for _ext, ok, result in self.results("session_before_tree", event, E.SessionBeforeTreeResult):
            if not ok or result is None:
                continue
            if result.cancel:
                return "cancel"
            if result.summary is not None:
                value = result.summary
                if isinstance(value, str):
                    value = E.BranchSummarySpec(summary=value)
                summary = value if isinstance(value, E.BranchSummarySpec) else E.BranchSummarySpec(**value)
                changed = True
            if result.custom_instructions is not None:
                event.custom_instructions = result.custom_instructions
                changed = True
        return (summary, event.custom_instructions) if changed else None

    async def tree_done(
        self: RunnerHost, new_leaf_id: str | None, old_leaf_id: str | None, summary_entry: Any, from_extension: bool
    ) -> None:
        if self.has("session_tree"):
            event = E.SessionTreeEvent(
                new_leaf_id=new_leaf_id, old_leaf_id=old_leaf_id, summary_entry=summary_entry, from_extension=from_extension
            )
            await self.notify("session_tree", event)

    async def discover_resources(self: RunnerHost, reason: str) -> None:
        """``resources_discover`` (fold): extra skill, template and theme paths (relative paths
        resolve against cwd) kept in the session's ``discovered_paths``; skills and templates are
        read at once, themes by the TUI's theme list."""
        if not self.has("resources_discover"):
            return
        event = E.ResourcesDiscoverEvent(cwd=self.cwd, reason=reason)
        found: dict[str, list[str]] = {"skill_paths": [], "prompt_paths": [], "theme_paths": []}
        async for _ext, ok, result in self.results("resources_discover", event, E.ResourcesResult):
            if not ok or result is None:
                continue
            for name, paths in found.items():
                for path in getattr(result, name) or ():
                    full = _resolve_path(self.cwd, str(path))
                    if full not in paths:
                        paths.append(full)
        session = self.session
        target = session.discovered_paths
        if target is None:
            return
        target.themes[:] = found["theme_paths"]
        if (target.skills, target.prompts) == (found["skill_paths"], found["prompt_paths"]):
            return
        target.skills[:] = found["skill_paths"]
        target.prompts[:] = found["prompt_paths"]
        for warning in session.reload_resources():
            self.report(None, "resources_discover", RuntimeError(warning))

    async def before_settle(self: RunnerHost) -> bool:
        """``agent_before_settle`` (docs/extensions.md): append the proposed entries; True when a
        handler asked the run to continue (never after an aborted or failed run)."""
        if not self.has("agent_before_settle"):
            return False
        session = self.session
        last = next((m for m in reversed(session.agent.state.messages) if isinstance(m, AssistantMessage)), None)
        stop = last.stop_reason if last is not None else None
        if stop == "aborted":
            return False
        event = E.AgentBeforeSettleEvent(outcome="error" if stop == "error" else "completed")
        for ext, handler in self.handlers("agent_before_settle"):
            ok, value = await self.call(ext, "agent_before_settle", handler, event, self.context(ext))
            if not ok or value is None:
                continue
            if isinstance(value, dict) and "continue" in value:
                value = {**value, "continue_": value["continue"]}
                del value["continue"]
            try:
                result = E.coerce_result(value, E.AgentBeforeSettleResult)
            except TypeError as exc:
                self.report(ext, "agent_before_settle", exc)
                continue
            if result is None:
                continue
            if result.entries is not None:
                event.entries = list(result.entries)
            if result.continue_ is not None:
                event.continue_ = bool(result.continue_)
        for draft in event.entries:
            problem = _append_draft(self, draft)
            if problem is not None:
                self.report(None, "agent_before_settle", ValueError(problem))
        signal = session.agent.signal
        if signal is not None and signal.aborted:
            return False
        return bool(event.continue_) and event.outcome == "completed"

    async def settled(self: RunnerHost, aborted: bool) -> None:
        """``agent_settled(aborted)``: once per prompt, after its whole run (step 9 of docs/extensions-runtime.md#order-within-one-prompt)."""
        if self.has("agent_settled"):
            await self.notify("agent_settled", E.AgentSettledEvent(aborted=aborted))

    async def on_session_event(self: RunnerHost, event: Any) -> None:
        """``model_select`` and ``thinking_level_select`` (with the previous values)."""
        kind = getattr(event, "type", None)
        if kind == "model_changed":
            previous, self.last_model = self.last_model, self.session.model
            if self.has("model_select"):
                source = getattr(event, "source", "set")
                await self.notify(
                    "model_select", E.ModelSelectEvent(model=self.last_model, previous_model=previous, source=source)
                )
        elif kind == "thinking_level_changed":
            level = event.thinking_level
            previous_level, self.last_thinking_level = self.last_thinking_level, level
            if level != previous_level and self.has("thinking_level_select"):
                await self.notify(
                    "thinking_level_select", E.ThinkingLevelSelectEvent(level=level, previous_level=previous_level)
                )

    async def on_user_bash(  # a mixin of the runner: self is the runner
        self: RunnerHost,
        command: str,
        exclude_from_context: bool,
        signal: Any,
        on_output: Callable[[str], Any],
    ) -> Any:
        """``user_bash``: a ``BashExecutionMessage`` when an extension ran (or stopped) it, else None."""
        from pi_coder.session.messages import BashExecutionMessage

        if not self.has("user_bash"):
            return None
        event = E.UserBashEvent(command=command, exclude_from_context=exclude_from_context, cwd=self.cwd)
        outcome: Any = None
        async for ext, ok, result in self.results("user_bash", event, E.UserBashResult):
            if not ok:
                outcome = E.ShellOutcome(output=f"Extension {ext.name} failed: {result}", exit_code=None, cancelled=True)
                break
            if result is None:
                continue
            if result.result is not None:
                value = result.result
                outcome = value if isinstance(value, E.ShellOutcome) else E.ShellOutcome(**value)
                break
            if result.operations is not None:
                ran = await result.operations.exec(command, self.cwd, on_output=on_output, signal=signal)
                outcome = ran if isinstance(ran, E.ShellOutcome) else E.ShellOutcome(**ran)
                break
        if outcome is None:
            return None
        return BashExecutionMessage(
            command=command,
            output=outcome.output,
            exit_code=outcome.exit_code,
            cancelled=outcome.cancelled,
            truncated=outcome.truncated,
            exclude_from_context=exclude_from_context or None,
        )

    async def before_replace(  # a mixin of the runner: self is the runner
        self: RunnerHost,
        reason: str,
        *,
        target: str | None = None,
        entry_id: str | None = None,
    ) -> bool:
        """``session_before_switch|fork`` then ``session_shutdown``; False when cancelled."""
        if reason == "fork":
            gate: Any = E.SessionBeforeForkEvent(entry_id=entry_id or "")
            name = "session_before_fork"
        else:
            gate = E.SessionBeforeSwitchEvent(reason=reason, target_session_file=target)
            name = "session_before_switch"
        if await self.gate(name, gate, E.CancelResult) is not None:
            return False
        await self.shutdown(reason, target)
        return True

    async def after_replace(self: RunnerHost, reason: str, previous: str | None) -> None:
        """Fresh ``pi`` objects (factories re-run without re-importing), then ``session_start``."""
        from pi_coder.extensions.loader import rerun_factories

        await rerun_factories(self)
        await self.notify("session_start", E.SessionStartEvent(reason=reason, previous_session_file=previous))


async def reload(runner: RunnerHost) -> bool:
    """``/reload``: shutdown, re-import every extension, ``session_start("reload")``. False during a run."""
    from pi_coder.extensions.loader import reimport

    session = runner.session
    if session.is_streaming:
        return False
    await runner.shutdown("reload")
    runner.reload_warnings = session.reload_resources()  # settings first: discovery reads them
    if runner.rediscover is not None:
        runner.sources = runner.rediscover()
    await reimport(runner)
    runner.install_tools()
    session.reload_context()
    await runner.notify("session_start", E.SessionStartEvent(reason="reload"))
    await runner.discover_resources("reload")
    return True
