"""Turns agent and session events (and stored messages) into transcript widgets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.widget import Widget

from pi_coder.tui.tool_render import result_text
from pi_coder.tui.widgets.assistant_message import AssistantText, MessageNote, ThinkingBlock
from pi_coder.tui.widgets.bash_block import BashBlock, SummaryBlock
from pi_coder.tui.widgets.tool_call import ToolCallBlock
from pi_coder.tui.widgets.transcript import Transcript, UserMessageBlock

if TYPE_CHECKING:
    from pi_coder.tui.app import PiApp

__all__ = ["StreamDelta", "TranscriptController", "message_text"]


@dataclass(slots=True)
class StreamDelta:
    """Consecutive text or thinking deltas of one content block, without their partial messages."""

    kind: str
    """``text_delta`` or ``thinking_delta``."""
    content_index: int
    parts: list[str]
    type: str = "stream_delta"


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        camel = name.split("_")[0] + "".join(p.title() for p in name.split("_")[1:])
        return obj.get(camel, obj.get(name, default))
    return getattr(obj, name, default)


def message_text(message: Any) -> str:
    """Plain text of a user/custom message's content (images as placeholders)."""
    content = _get(message, "content", "")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        kind = _get(block, "type")
        if kind == "text":
            parts.append(_get(block, "text", ""))
        elif kind == "image":
            parts.append("[image]")
    return "\n".join(parts)


class TranscriptController:
    """Owns the mapping from streaming state to widgets; all methods run in the app's pump."""

    def __init__(self, app: PiApp, transcript: Transcript) -> None:
        self.app = app
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
        return ToolCallBlock(tool_call_id, name, expanded=self.app.tools_expanded, animate=self.app.animations)

    async def clear(self) -> None:
        self._parts.clear()
        self._tools.clear()
        self._bash = None
        self._last_note = None
        await self.transcript.clear_blocks()

    # ------------------------------------------------------------------ live events

    async def handle(self, event: Any) -> None:
        kind = event.type
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            await handler(event)

    async def _on_message_start(self, event: Any) -> None:
        message = event.message
        role = _get(message, "role")
        if role == "user":
            await self.add(UserMessageBlock(message_text(message)))
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
                part = ThinkingBlock(hidden=self.app.hide_thinking)
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
                self.app.schedule_edit_preview(part)

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
                part = ThinkingBlock(hidden=self.app.hide_thinking)
                self._parts[event.content_index] = part
                await self.add(part)
            part.append(text)

    async def _on_message_end(self, event: Any) -> None:
        message = event.message
        if _get(message, "role") != "assistant":
            return
        for part in self._parts.values():
            if isinstance(part, AssistantText | ThinkingBlock):
                await part.finish()
        # Providers that do not stream still get blocks, in content order.
        for index, block in enumerate(_get(message, "content", []) or []):
            if index in self._parts:
                continue
            kind = _get(block, "type")
            if kind == "text" and block.text.strip():
                widget: Widget = AssistantText(block.text)
            elif kind == "thinking" and block.thinking.strip():
                widget = ThinkingBlock(block.thinking, hidden=self.app.hide_thinking)
            elif kind == "toolCall":
                widget = self._tools.get(block.id) or self._tool_block(block.id, block.name)
                self._tools[block.id] = widget  # type: ignore[assignment]
                widget.update_args(block.arguments or {}, complete=True)  # type: ignore[union-attr]
            else:
                continue
            self._parts[index] = widget
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
        self.app.refresh_footer()

    async def _on_tool_execution_start(self, event: Any) -> None:
        block = self._tools.get(event.tool_call_id)
        if block is None:
            block = self._tool_block(event.tool_call_id, event.tool_name)
            self._tools[event.tool_call_id] = block
            await self.add(block)
            if event.tool_name == "edit":
                block.update_args(event.args or {}, complete=True)
                self.app.schedule_edit_preview(block)
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

    async def _on_turn_end(self, event: Any) -> None:
        self.app.refresh_footer()

    async def _on_agent_end(self, event: Any) -> None:
        for block in self._tools.values():
            if block.view.status not in ("success", "error"):
                block.abandon()
        self._tools = {k: v for k, v in self._tools.items() if v.view.status not in ("success", "error")}
        self.app.refresh_footer()

    # session events

    async def _on_bash_execution_start(self, event: Any) -> None:
        self._bash = BashBlock(
            event.command, exclude_from_context=event.exclude_from_context, expanded=self.app.tools_expanded
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
        self.app.refresh_footer()

    async def _on_auto_compaction_end(self, event: Any) -> None:
        if event.aborted:
            await self.note("Compaction cancelled", "warning")
        elif event.error_message:
            await self.note(f"Compaction failed: {event.error_message}", "error")
        elif event.result is not None:
            summary = _get(event.result, "summary", "") or ""
            tokens = _get(event.result, "tokens_before")
            await self.add(
                SummaryBlock("compaction", summary, tokens_before=tokens, expanded=self.app.tools_expanded)
            )
        self.app.refresh_footer()

    async def _on_auto_retry_end(self, event: Any) -> None:
        if not event.success and event.final_error:
            await self.note(f"Retry failed after {event.attempt} attempts: {event.final_error}", "error")

    async def _on_notice(self, event: Any) -> None:
        await self.note(event.text, event.level, replace=event.level == "info")

    # ------------------------------------------------------------------ stored transcript

    async def render_history(self, messages: list[Any]) -> None:
        """Render a stored transcript (resume, session switch) in one mount."""
        widgets: list[Widget] = []
        tools: dict[str, ToolCallBlock] = {}
        for message in messages:
            role = _get(message, "role")
            if role == "user":
                widgets.append(UserMessageBlock(message_text(message)))
            elif role == "assistant":
                for block in _get(message, "content", []) or []:
                    kind = _get(block, "type")
                    if kind == "text" and block.text.strip():
                        widgets.append(AssistantText(block.text))
                    elif kind == "thinking" and block.thinking.strip():
                        widgets.append(ThinkingBlock(block.thinking, hidden=self.app.hide_thinking))
                    elif kind == "toolCall":
                        tool = self._tool_block(block.id, block.name)
                        tool.view.args = dict(block.arguments or {})
                        tool.view.status = "pending"
                        tools[block.id] = tool
                        widgets.append(tool)
                if _get(message, "stop_reason") in ("error", "aborted", "length"):
                    widgets.extend(self._end_notes(message))
            elif role == "toolResult":
                tool = tools.get(_get(message, "tool_call_id"))
                if tool is not None:
                    tool.view.status = "error" if _get(message, "is_error") else "success"
                    tool.view.output = result_text(message)
                    tool.view.details = _get(message, "details")
                    tool.set_classes("-error" if tool.view.status == "error" else "-success")
            elif role == "bashExecution":
                block = BashBlock(
                    _get(message, "command", ""),
                    exclude_from_context=bool(_get(message, "exclude_from_context")),
                    expanded=self.app.tools_expanded,
                )
                block.running = False
                block.message = message
                block.output = _get(message, "output", "") or ""
                widgets.append(block)
            else:
                widgets.extend(self._static_blocks(message))
        for tool in tools.values():
            if tool.view.status == "pending":
                tool.view.status = "error"
                tool.view.output = "No result"
                tool.set_classes("-error")
        if widgets:
            await self.add(*widgets)
        self.transcript.scroll_end(animate=False, immediate=True)

    def _static_blocks(self, message: Any) -> list[Widget]:
        role = _get(message, "role")
        if role == "compactionSummary":
            return [
                SummaryBlock(
                    "compaction",
                    _get(message, "summary", ""),
                    tokens_before=_get(message, "tokens_before"),
                    expanded=self.app.tools_expanded,
                )
            ]
        if role == "branchSummary":
            return [SummaryBlock("branch", _get(message, "summary", ""), expanded=self.app.tools_expanded)]
        if role == "custom" and _get(message, "display", True):
            return [MessageNote(f"[{_get(message, 'custom_type', 'custom')}] {message_text(message)}", "info")]
        return []

    def _end_notes(self, message: Any) -> list[Widget]:
        stop = _get(message, "stop_reason")
        if stop == "aborted":
            return [MessageNote("Operation aborted", "error")]
        if stop == "error":
            return [MessageNote(f"Error: {_get(message, 'error_message') or 'unknown error'}", "error")]
        if stop == "length":  # cut off by max_tokens (Pi 1.6's wording)
            return [MessageNote("Response was truncated before completion.", "warning")]
        return []

    def set_tools_expanded(self, expanded: bool) -> None:
        for widget in self.transcript.query("ToolCallBlock, BashBlock, SummaryBlock"):
            widget.set_expanded(expanded)  # type: ignore[attr-defined]

    def set_thinking_hidden(self, hidden: bool) -> None:
        for widget in self.transcript.query(ThinkingBlock):
            widget.set_hidden(hidden)


def _content_at(partial: Any, index: int) -> Any:
    content = _get(partial, "content", []) or []
    return content[index] if 0 <= index < len(content) else None

