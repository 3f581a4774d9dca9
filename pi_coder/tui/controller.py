"""Turns agent and session events (and stored messages) into transcript widgets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, assert_never

from textual.widget import Widget

from pi_coder.agent import events as ae
from pi_coder.core import events as se
from pi_coder.core import transcript as tx
from pi_coder.core.transcript import Block, build_transcript, end_notice, message_blocks, message_text
from pi_coder.session.entries import CustomEntry
from pi_coder.tui.bridge import StreamDelta
from pi_coder.tui.context import extension_runner
from pi_coder.tui.tool_render import CustomToolRender, stored_result
from pi_coder.tui.widgets.assistant_message import AssistantText, MessageNote, ThinkingBlock
from pi_coder.tui.widgets.bash_block import BashBlock, SummaryBlock
from pi_coder.tui.widgets.tool_call import ToolCallBlock
from pi_coder.tui.widgets.transcript import Transcript, UserMessageBlock

if TYPE_CHECKING:
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


_get = tx.get


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

    async def note(self, text: str, level: str = "info", *, replace: bool = False) -> None:
        """A dim status/notice line; consecutive ``replace`` notes update one line."""
        if replace and self._last_note is not None and self._last_note.is_attached:
            self._last_note.update(text)
            return
        note = MessageNote(text, level)
        await self.add(note)
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

    async def handle(self, event: Any) -> None:
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

    async def _on_message_start(self, event: Any) -> None:
        message = event.message
        role = _get(message, "role")
        if role == "user":
            await self.add(UserMessageBlock.of(tx.get(message, "content", "")))
        elif role == "assistant":
            self._parts = {}
        elif role in ("compactionSummary", "branchSummary", "custom"):
            await self.add(*self._static_blocks(message))

    async def _on_message_update(self, event: Any) -> None:
        ame = event.assistant_message_event
        kind = ame.type
        index = getattr(ame, "content_index", None)
        if index is None:
            return
        part = self._parts.get(index)
        if kind in ("text_start", "text_delta", "text_end"):
            if not isinstance(part, AssistantText):
                part = AssistantText()
                self._parts[index] = part
                await self.add(part)
            if kind == "text_delta":
                part.append(ame.delta)
            elif kind == "text_end":
                await part.finish()
        elif kind in ("thinking_start", "thinking_delta", "thinking_end"):
            if not isinstance(part, ThinkingBlock):
                part = ThinkingBlock(hidden=self.view.hide_thinking)
                self._parts[index] = part
                await self.add(part)
            if kind == "thinking_delta":
                part.append(ame.delta)
            elif kind == "thinking_end":
                await part.finish()
        elif kind in ("toolcall_start", "toolcall_delta", "toolcall_end"):
            call = ame.tool_call if kind == "toolcall_end" else _content_at(ame.partial, index)
            if call is None:
                return
            if not isinstance(part, ToolCallBlock):
                part = self._tools.get(call.id) or self._tool_block(call.id, call.name)
                self._parts[index] = part
                self._tools[call.id] = part
                if not part.is_attached:
                    await self.add(part)
            part.update_args(call.arguments or {}, complete=kind == "toolcall_end")
            if kind == "toolcall_end" and call.name == "edit":
                self.view.schedule_edit_preview(part)

    async def _on_stream_delta(self, event: StreamDelta) -> None:
        part = self._parts.get(event.content_index)
        text = "".join(event.parts)
        if event.kind == "text_delta":
            if not isinstance(part, AssistantText):
                part = AssistantText()
                self._parts[event.content_index] = part
                await self.add(part)
            part.append(text)
        else:
            if not isinstance(part, ThinkingBlock):
                part = ThinkingBlock(hidden=self.view.hide_thinking)
                self._parts[event.content_index] = part
                await self.add(part)
            part.append(text)

    async def _on_message_end(self, event: Any) -> None:
        message = event.message
        if _get(message, "role") != "assistant":
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
        stop = _get(message, "stop_reason")
        if stop in ("error", "aborted"):
            for block in self._tools.values():
                if block.view.status in ("streaming", "pending"):
                    block.abandon()
            await self.add(*self._end_notes(message))
        elif stop == "length":
            await self.add(*self._end_notes(message))
        self._parts = {}
        self.view.refresh_footer()

    async def _on_tool_execution_start(self, event: Any) -> None:
        block = self._tools.get(event.tool_call_id)
        if block is None:
            block = self._tool_block(event.tool_call_id, event.tool_name)
            self._tools[event.tool_call_id] = block
            await self.add(block)
            if event.tool_name == "edit":
                block.update_args(event.args or {}, complete=True)
                self.view.schedule_edit_preview(block)
        block.start(event.args if isinstance(event.args, dict) else None)

    async def _on_tool_execution_update(self, event: Any) -> None:
        block = self._tools.get(event.tool_call_id)
        if block is not None:
            block.partial(event.partial_result)

    async def _on_tool_execution_end(self, event: Any) -> None:
        block = self._tools.get(event.tool_call_id)
        if block is not None:
            block.finish(event.result, event.is_error)
            self.transcript.note_activity()

    async def _on_agent_end(self, event: Any) -> None:
        for block in self._tools.values():
            if block.view.status not in ("success", "error"):
                block.abandon()
        self._tools = {k: v for k, v in self._tools.items() if v.view.status not in ("success", "error")}
        self.view.refresh_footer()

    # session events

    async def _on_bash_execution_start(self, event: Any) -> None:
        self._bash = BashBlock(
            event.command, exclude_from_context=event.exclude_from_context, expanded=self.view.tools_expanded
        )
        await self.add(self._bash)

    async def _on_bash_execution_update(self, event: Any) -> None:
        if self._bash is not None:
            self._bash.update_output(event.output)

    async def _on_bash_execution_end(self, event: Any) -> None:
        if self._bash is None:
            self._bash = BashBlock(_get(event.message, "command", ""))
            await self.add(self._bash)
        self._bash.finish(event.message)
        self._bash = None
        self.view.refresh_footer()

    async def _on_auto_compaction_end(self, event: Any) -> None:
        if event.aborted:
            await self.note("Compaction cancelled", "warning")
        elif event.error_message:
            await self.note(f"Compaction failed: {event.error_message}", "error")
        elif event.result is not None:
            summary = _get(event.result, "summary", "") or ""
            tokens = _get(event.result, "tokens_before")
            await self.add(
                SummaryBlock("compaction", summary, tokens_before=tokens, expanded=self.view.tools_expanded)
            )
        self.view.refresh_footer()

    async def _on_auto_retry_end(self, event: Any) -> None:
        if not event.success and event.final_error:
            await self.note(f"Retry failed after {event.attempt} attempts: {event.final_error}", "error")

    async def _on_entry_appended(self, event: Any) -> None:
        """A ``custom`` entry an extension appended: shown only by its entry renderer (docs/extensions-runtime.md#renderers)."""
        session = self.view.session
        runner = extension_runner(session)
        if runner is None:
            return
        entry_id = event.entry.get("id") if isinstance(event.entry, dict) else None
        entry = session.store.get_entry(entry_id) if entry_id else None
        if not isinstance(entry, CustomEntry) or not entry.custom_type:
            return
        custom_type = entry.custom_type
        from pi_coder.tui.extension_ui import render_custom_message

        widget = render_custom_message(self.view, runner, custom_type, entry, kind="entry")
        if widget is not None:
            await self.add(widget)

    async def _on_notice(self, event: Any) -> None:
        await self.note(event.text, event.level, replace=event.level == "info")

    # ------------------------------------------------------------------ stored transcript

    async def render_history(self, messages: list[Any]) -> None:
        """Render a stored transcript (resume, session switch) in one mount; the branch's custom
        entries that an extension draws (``register_entry_renderer``) sit where they were appended."""
        places = self._custom_entry_places(messages)
        if not places:
            widgets = [self.block_widget(block) for block in build_transcript(messages) if _shown(block)]
        else:
            results = tx.tool_results(messages)
            widgets = self._entry_widgets(places.get(-1, ()))
            for index, message in enumerate(messages):
                widgets += [self.block_widget(b) for b in message_blocks(message, results) if _shown(b)]
                widgets += self._entry_widgets(places.get(index, ()))
        if widgets:
            await self.add(*widgets)
        self.transcript.scroll_end(animate=False, immediate=True)

    def _custom_entry_places(self, messages: list[Any]) -> dict[int, list[Any]]:
        session = self.view.session
        runner = extension_runner(session)
        if runner is None or not any(ext.entry_renderers for ext in runner.extensions):
            return {}
        return tx.custom_entry_places(messages, session.store.get_branch())

    def _entry_widgets(self, entries: Any) -> list[Widget]:
        from pi_coder.tui.extension_ui import render_custom_message

        runner = extension_runner(self.view.session)
        if runner is None:
            return []
        widgets = (render_custom_message(self.view, runner, e.custom_type, e, kind="entry") for e in entries)
        return [widget for widget in widgets if widget is not None]

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
                bash.message = block.message
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

    def _static_blocks(self, message: Any) -> list[Widget]:
        return [self.block_widget(block) for block in message_blocks(message)]

    def _end_notes(self, message: Any) -> list[Widget]:
        notice = end_notice(message)
        return [self.block_widget(notice)] if notice is not None else []

    def set_tools_expanded(self, expanded: bool) -> None:
        for widget in self.transcript.query("ToolCallBlock, BashBlock, SummaryBlock, CustomMessageBlock"):
            widget.set_expanded(expanded)  # type: ignore[attr-defined]

    def set_thinking_hidden(self, hidden: bool) -> None:
        for widget in self.transcript.query(ThinkingBlock):
            widget.set_hidden(hidden)


def _shown(block: Block) -> bool:
    """Redacted (encrypted) thinking has no text: the terminal shows nothing for it."""
    return not isinstance(block, tx.ThinkingBlock) or bool(block.text.strip())


def _content_at(partial: Any, index: int) -> Any:
    content = _get(partial, "content", []) or []
    return content[index] if 0 <= index < len(content) else None
