"""Turns agent and session events (and stored messages) into transcript widgets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Protocol, assert_never

from textual.widget import Widget

from pi_coder.agent import events as ae
from pi_coder.ai import events as ai
from pi_coder.ai.types import AssistantMessage, ToolCall, UserMessage
from pi_coder.core import events as se
from pi_coder.core import transcript as tx
from pi_coder.core.transcript import Block, build_transcript, end_notice, message_blocks, message_text
from pi_coder.session.entries import CustomEntry
from pi_coder.session.messages import BashExecutionMessage
from pi_coder.tui.bridge import StreamDelta
from pi_coder.tui.context import extension_runner
from pi_coder.tui.tool_render import CustomToolRender, stored_result
from pi_coder.tui.widgets.assistant_message import AssistantText, MessageNote, ThinkingBlock
from pi_coder.tui.widgets.bash_block import BashBlock, SummaryBlock
from pi_coder.tui.widgets.tool_call import ToolCallBlock
from pi_coder.tui.widgets.transcript import BlockFactory, Transcript, UserMessageBlock

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentMessage
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.tui.theming import ThemeController

__all__ = ["StreamDelta", "TranscriptController", "TranscriptView", "message_text"]


class TranscriptView(Protocol):
    """What the controller needs from its host (the app): the session, display options and two callbacks."""

    session: AgentSession
    themes: ThemeController
    tools_expanded: bool
    hide_thinking: bool
    animations: bool

    def refresh_footer(self) -> None: ...

    def schedule_edit_preview(self, block: ToolCallBlock) -> None: ...


class TranscriptController:
    """Owns the mapping from streaming state to widgets; all methods run in the app's pump."""

    def __init__(self, view: TranscriptView, transcript: Transcript) -> None:
        self.view = view
        self.transcript = transcript
        self._parts: dict[int, Widget] = {}
        self._tools: dict[str, ToolCallBlock] = {}
        self._bash: BashBlock | None = None
        self._last_note: MessageNote | None = None

    # ------------------------------------------------------------------ helpers

    async def add(self, *widgets: Widget) -> None:
        self._last_note = None
        await self.transcript.add(*widgets)

    async def add_finished(self, *blocks: Block) -> None:
        """Widgets of finished blocks: each is kept with its factory (the transcript may unmount it
        and build it again, docs/architecture.md#the-transcript-window)."""
        widgets = [(self.block_widget(block), block) for block in blocks]
        await self.add(*(widget for widget, _ in widgets))
        for widget, block in widgets:
            self.transcript.keep(widget, self._factory(block))

    async def note(self, text: str, level: str = "info", *, replace: bool = False) -> None:
        """A dim status/notice line; consecutive ``replace`` notes update one line."""
        if replace and self._last_note is not None and self._last_note.is_attached:
            self._last_note.set_text(text)
            return
        note = MessageNote(text, level)
        await self.add(note)
        self.transcript.keep(note, lambda: MessageNote(note.text, note.level))
        if replace:
            self._last_note = note

    def _tool_block(self, tool_call_id: str, name: str) -> ToolCallBlock:
        return ToolCallBlock(
            tool_call_id,
            name,
            expanded=self.view.tools_expanded,
            animate=self.view.animations,
            custom=self._tool_render(name),
        )

    def _tool_render(self, name: str) -> CustomToolRender | None:
        """An extension tool's ``render_call``/``render_result`` (docs/extensions-runtime.md#renderers); a failure is
        reported (once) as ``renderer:<tool>``."""
        runner = extension_runner(self.view.session)
        found = runner.tool_definition(name) if runner is not None else None
        if runner is None or found is None:
            return None
        definition, ext = found
        render_call, render_result = definition.render_call, definition.render_result
        if render_call is None and render_result is None:
            return None

        def report(exc: BaseException) -> None:
            runner.report(ext, f"renderer:{name}", exc)

        return CustomToolRender(render_call, render_result, report, self.view.themes.theme)

    async def clear(self) -> None:
        self._parts.clear()
        self._tools.clear()
        self._bash = None
        self._last_note = None
        await self.transcript.clear_blocks()

    # ------------------------------------------------------------------ live events

    async def handle(self, event: se.Event | StreamDelta) -> None:
        """Render one agent or session event (others are ignored)."""
        match event:
            case StreamDelta():
                await self._on_stream_delta(event)
            case ae.MessageStart():
                await self._on_message_start(event)
            case ae.MessageUpdate():
                await self._on_message_update(event)
            case ae.MessageEnd():
                await self._on_message_end(event)
            case ae.ToolExecutionStart():
                await self._on_tool_execution_start(event)
            case ae.ToolExecutionUpdate():
                await self._on_tool_execution_update(event)
            case ae.ToolExecutionEnd():
                await self._on_tool_execution_end(event)
            case ae.TurnEnd():
                self.view.refresh_footer()
            case ae.AgentEnd():
                await self._on_agent_end(event)
            case se.BashExecutionStart():
                await self._on_bash_execution_start(event)
            case se.BashExecutionUpdate():
                await self._on_bash_execution_update(event)
            case se.BashExecutionEnd():
                await self._on_bash_execution_end(event)
            case se.AutoCompactionEnd():
                await self._on_auto_compaction_end(event)
            case se.AutoRetryEnd():
                await self._on_auto_retry_end(event)
            case se.Notice():
                await self._on_notice(event)
            case se.EntryAppendedEvent():
                await self._on_entry_appended(event)
            case _:
                pass

    async def _on_message_start(self, event: ae.MessageStart) -> None:
        message = event.message
        if isinstance(message, UserMessage):
            await self.add_finished(*message_blocks(message))
        elif isinstance(message, AssistantMessage):
            self._parts = {}
        elif message.role in ("compactionSummary", "branchSummary", "custom"):
            await self.add_finished(*message_blocks(message))

    async def _on_message_update(self, event: ae.MessageUpdate) -> None:
        ame = event.assistant_message_event
        match ame:
            case ai.StartEvent() | ai.DoneEvent() | ai.ErrorEvent():
                pass  # no content block: message_start and message_end draw the message
            case ai.TextStartEvent():
                await self._text_part(ame.content_index)
            case ai.TextDeltaEvent():
                (await self._text_part(ame.content_index)).append(ame.delta)
            case ai.TextEndEvent():
                await (await self._text_part(ame.content_index)).finish()
            case ai.ThinkingStartEvent():
                await self._thinking_part(ame.content_index)
            case ai.ThinkingDeltaEvent():
                (await self._thinking_part(ame.content_index)).append(ame.delta)
            case ai.ThinkingEndEvent():
                await (await self._thinking_part(ame.content_index)).finish()
            case ai.ToolCallStartEvent() | ai.ToolCallDeltaEvent():
                call = _tool_call_at(ame.partial, ame.content_index)
                if call is not None:
                    await self._tool_part(ame.content_index, call, complete=False)
            case ai.ToolCallEndEvent():
                await self._tool_part(ame.content_index, ame.tool_call, complete=True)
            case _:
                assert_never(ame)

    async def _text_part(self, index: int) -> AssistantText:
        """The answer text widget of content block ``index`` (added on its first event)."""
        part = self._parts.get(index)
        if not isinstance(part, AssistantText):
            part = AssistantText()
            self._parts[index] = part
            await self.add(part)
        return part

    async def _thinking_part(self, index: int) -> ThinkingBlock:
        """The thinking widget of content block ``index`` (added on its first event)."""
        part = self._parts.get(index)
        if not isinstance(part, ThinkingBlock):
            part = ThinkingBlock(hidden=self.view.hide_thinking)
            self._parts[index] = part
            await self.add(part)
        return part

    async def _tool_part(self, index: int, call: ToolCall, *, complete: bool) -> None:
        """The tool call block of content block ``index`` with the arguments streamed so far."""
        part = self._parts.get(index)
        if not isinstance(part, ToolCallBlock):
            part = self._tools.get(call.id) or self._tool_block(call.id, call.name)
            self._parts[index] = part
            self._tools[call.id] = part
            if not part.is_attached:
                await self.add(part)
        part.update_args(call.arguments or {}, complete=complete)
        if complete and call.name == "edit":
            self.view.schedule_edit_preview(part)

    async def _on_stream_delta(self, event: StreamDelta) -> None:
        text = "".join(event.parts)
        match event.kind:
            case "text_delta":
                (await self._text_part(event.content_index)).append(text)
            case "thinking_delta":
                (await self._thinking_part(event.content_index)).append(text)
            case _:
                assert_never(event.kind)

    async def _on_message_end(self, event: ae.MessageEnd) -> None:
        message = event.message
        if not isinstance(message, AssistantMessage):
            # A user or custom message joins the context before the reply starts: the footer's
            # estimate (chars/4 after the last usage) counts it while the answer streams.
            self.view.refresh_footer()
            return
        for part in self._parts.values():
            if isinstance(part, AssistantText | ThinkingBlock):
                await part.finish()
        # Providers that do not stream still get blocks, in content order.
        for item in message_blocks(message):
            if (
                not isinstance(item, tx.AssistantTextBlock | tx.ThinkingBlock | tx.ToolBlock)
                or item.index in self._parts
                or not _shown(item)
            ):
                continue
            if isinstance(item, tx.ToolBlock):
                tool = self._tools.get(item.call_id) or self._tool_block(item.call_id, item.name)
                self._tools[item.call_id] = tool
                tool.update_args(dict(item.args), complete=True)
                widget: Widget = tool
            else:
                widget = self.block_widget(item)
            self._parts[item.index] = widget
            if not widget.is_attached:
                await self.add(widget)
        for item in message_blocks(message):  # the text and thinking are final: they can be built again
            final = self._parts.get(item.index) if isinstance(item, tx.AssistantTextBlock | tx.ThinkingBlock) else None
            if final is not None and final.is_attached:
                self.transcript.keep(final, self._factory(item))
        stop = message.stop_reason
        if stop in ("error", "aborted"):
            for block in self._tools.values():
                if block.view.status in ("streaming", "pending"):
                    block.abandon()
                    self._keep_tool(block)
            await self._add_end_notes(message)
        elif stop == "length":
            await self._add_end_notes(message)
        self._parts = {}
        self.view.refresh_footer()

    async def _on_tool_execution_start(self, event: ae.ToolExecutionStart) -> None:
        block = self._tools.get(event.tool_call_id)
        if block is None:
            block = self._tool_block(event.tool_call_id, event.tool_name)
            self._tools[event.tool_call_id] = block
            await self.add(block)
            if event.tool_name == "edit":
                block.update_args(event.args or {}, complete=True)
                self.view.schedule_edit_preview(block)
        block.start(event.args if isinstance(event.args, dict) else None)

    async def _on_tool_execution_update(self, event: ae.ToolExecutionUpdate) -> None:
        block = self._tools.get(event.tool_call_id)
        if block is not None:
            block.partial(event.partial_result)

    async def _on_tool_execution_end(self, event: ae.ToolExecutionEnd) -> None:
        block = self._tools.get(event.tool_call_id)
        if block is not None:
            block.finish(event.result, event.is_error)
            self._keep_tool(block)
            self.transcript.note_activity()

    async def _on_agent_end(self, event: ae.AgentEnd) -> None:
        for block in self._tools.values():
            if block.view.status not in ("success", "error"):
                block.abandon()
                self._keep_tool(block)
        self._tools = {k: v for k, v in self._tools.items() if v.view.status not in ("success", "error")}
        self.view.refresh_footer()

    # session events

    async def _on_bash_execution_start(self, event: se.BashExecutionStart) -> None:
        self._bash = BashBlock(
            event.command, exclude_from_context=event.exclude_from_context, expanded=self.view.tools_expanded
        )
        await self.add(self._bash)

    async def _on_bash_execution_update(self, event: se.BashExecutionUpdate) -> None:
        if self._bash is not None:
            self._bash.update_output(event.output)

    async def _on_bash_execution_end(self, event: se.BashExecutionEnd) -> None:
        if self._bash is None:
            self._bash = BashBlock(event.message.command)
            await self.add(self._bash)
        self._bash.finish(event.message)
        self.transcript.keep(self._bash, self._factory(message_blocks(event.message)[0]))
        self._bash = None
        self.view.refresh_footer()

    async def _on_auto_compaction_end(self, event: se.AutoCompactionEnd) -> None:
        if event.aborted:
            await self.note("Compaction cancelled", "warning")
        elif event.error_message:
            await self.note(f"Compaction failed: {event.error_message}", "error")
        elif event.result is not None:
            result = event.result

            def summary() -> SummaryBlock:
                return SummaryBlock(
                    "compaction", result.summary, tokens_before=result.tokens_before, expanded=self.view.tools_expanded
                )

            block = summary()
            await self.add(block)
            self.transcript.keep(block, summary)
        self.view.refresh_footer()

    async def _on_auto_retry_end(self, event: se.AutoRetryEnd) -> None:
        if not event.success and event.final_error:
            await self.note(f"Retry failed after {event.attempt} attempts: {event.final_error}", "error")

    async def _on_entry_appended(self, event: se.EntryAppendedEvent) -> None:
        """A ``custom`` entry an extension appended: shown only by its entry renderer (docs/extensions-runtime.md#renderers)."""
        session = self.view.session
        if extension_runner(session) is None:
            return
        entry_id = event.entry.get("id") if isinstance(event.entry, dict) else None
        entry = session.store.get_entry(entry_id) if entry_id else None
        if not isinstance(entry, CustomEntry) or not entry.custom_type:
            return
        widget = self._entry_widget(entry)
        if widget is not None:
            await self.add(widget)
            self.transcript.keep(widget, partial(self._entry_widget, entry))

    async def _on_notice(self, event: se.Notice) -> None:
        await self.note(event.text, event.level, replace=event.level == "info")

    # ------------------------------------------------------------------ stored transcript

    async def render_history(self, messages: list[AgentMessage]) -> None:
        """Render a stored transcript (resume, session switch); the branch's custom entries that an
        extension draws (``register_entry_renderer``) sit where they were appended.

        Only the newest blocks are built and mounted; the earlier ones wait in the transcript's
        window as factories over their ``Block`` records (``Transcript.add_windowed``), built when
        they are scrolled to, with the display options of that moment (Ctrl+O, Ctrl+T, theme)."""
        places = self._custom_entry_places(messages)
        factories: list[BlockFactory]
        if not places:
            factories = [self._factory(block) for block in build_transcript(messages) if _shown(block)]
        else:
            results = tx.tool_results(messages)
            factories = self._entry_factories(places.get(-1, ()))
            for index, message in enumerate(messages):
                factories += [self._factory(b) for b in message_blocks(message, results) if _shown(b)]
                factories += self._entry_factories(places.get(index, ()))
        await self.transcript.add_windowed(factories)
        self._last_note = None
        self.transcript.scroll_end(animate=False, immediate=True)

    def _factory(self, block: Block) -> BlockFactory:
        return lambda: self.block_widget(block)

    def _entry_factories(self, entries: Sequence[CustomEntry]) -> list[BlockFactory]:
        return [partial(self._entry_widget, entry) for entry in entries]

    def _entry_widget(self, entry: CustomEntry) -> Widget | None:
        from pi_coder.tui.extension_ui import render_custom_message

        runner = extension_runner(self.view.session)
        if runner is None:
            return None
        return render_custom_message(self.view, runner, entry.custom_type, entry, kind="entry")

    def _custom_entry_places(self, messages: list[AgentMessage]) -> dict[int, list[CustomEntry]]:
        session = self.view.session
        runner = extension_runner(session)
        if runner is None or not any(ext.entry_renderers for ext in runner.extensions):
            return {}
        return tx.custom_entry_places(messages, session.store.get_branch())

    def block_widget(self, block: Block) -> Widget:
        """The widget of a finished transcript block (the same for live and resumed sessions)."""
        match block:
            case tx.UserBlock(content=content):
                return UserMessageBlock.of(content)
            case tx.AssistantTextBlock(text=text):
                return AssistantText(text)
            case tx.ThinkingBlock(text=text):
                return ThinkingBlock(text, hidden=self.view.hide_thinking)
            case tx.ToolBlock():
                tool = self._tool_block(block.call_id, block.name)
                result = block.result
                if result is None:
                    tool.show_stored(dict(block.args), None, True)
                else:
                    stored = stored_result(result.content, result.details) if tool.custom is not None else None
                    tool.show_stored(dict(block.args), result.text, result.is_error, result.details, stored)
                return tool
            case tx.BashBlock():
                bash = BashBlock(
                    block.command,
                    exclude_from_context=block.exclude_from_context,
                    expanded=self.view.tools_expanded,
                )
                bash.running = False
                bash.message = block.message if isinstance(block.message, BashExecutionMessage) else None
                bash.output = block.output
                return bash
            case tx.SummaryBlock(kind=kind, summary=summary, tokens_before=tokens):
                return SummaryBlock(kind, summary, tokens_before=tokens, expanded=self.view.tools_expanded)
            case tx.CustomBlock(custom_type=custom_type, text=text):
                return self._custom_widget(block) or MessageNote(f"[{custom_type}] {text}", "info")
            case tx.NoticeBlock(text=text, level=level):
                return MessageNote(text, level)
            case _:
                assert_never(block)

    def _custom_widget(self, block: tx.CustomBlock) -> Widget | None:
        """An extension's rendering of a custom message (docs/extensions-runtime.md#renderers), or None for the default."""
        runner = extension_runner(self.view.session)
        if runner is None or block.message is None:
            return None
        from pi_coder.tui.extension_ui import render_custom_message

        return render_custom_message(self.view, runner, block.custom_type, block.message)

    async def _add_end_notes(self, message: AssistantMessage) -> None:
        notice = end_notice(message)
        if notice is not None:
            await self.add_finished(notice)

    def _keep_tool(self, block: ToolCallBlock) -> None:
        """A finished tool block can be built again from a copy of what it shows."""
        if block.is_attached:
            view = replace(block.view)
            self.transcript.keep(
                block,
                lambda: ToolCallBlock.again(view, expanded=self.view.tools_expanded, custom=self._tool_render(view.name)),
            )

    def set_tools_expanded(self, expanded: bool) -> None:
        from pi_coder.tui.extension_ui import CustomMessageBlock

        for widget in self.transcript.query("ToolCallBlock, BashBlock, SummaryBlock, CustomMessageBlock"):
            if isinstance(widget, ToolCallBlock | BashBlock | SummaryBlock | CustomMessageBlock):
                widget.set_expanded(expanded)

    def set_thinking_hidden(self, hidden: bool) -> None:
        for widget in self.transcript.query(ThinkingBlock):
            widget.set_hidden(hidden)


def _shown(block: Block) -> bool:
    """Redacted (encrypted) thinking has no text: the terminal shows nothing for it."""
    return not isinstance(block, tx.ThinkingBlock) or bool(block.text.strip())


def _tool_call_at(partial: AssistantMessage, index: int) -> ToolCall | None:
    content = partial.content
    block = content[index] if 0 <= index < len(content) else None
    return block if isinstance(block, ToolCall) else None
