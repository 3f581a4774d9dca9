"""Compaction with its own summary (port of Pi's custom-compaction.ts): the whole history to
compact is summarised by the current model through ``ctx.model_registry.complete`` and replaces
it; on failure pi's default compaction runs instead."""

from __future__ import annotations

from typing import Any

from pi_coder.extensions import CompactionResult, ExtensionAPI

PROMPT = """You are a conversation summarizer. Summarise this conversation: the goals, the decisions,
the files touched and what is left to do. The summary replaces the whole history.{previous}

<conversation>
{conversation}
</conversation>"""


def _text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return " ".join(getattr(block, "text", "") or "" for block in content)


def extension(pi: ExtensionAPI) -> None:
    @pi.on("session_before_compact")
    async def compact(event: Any, ctx: Any) -> dict[str, Any] | None:
        prep = event.preparation
        model = ctx.model
        if prep is None or model is None:
            return None
        messages = [*prep.messages_to_summarize, *prep.turn_prefix_messages]
        ctx.ui.notify(f"Custom compaction: summarizing {len(messages)} messages with {model.id}...")
        conversation = "\n".join(f"{getattr(m, 'role', '?')}: {_text(m)}" for m in messages)
        previous = f"\n\nPrevious summary:\n{prep.previous_summary}" if prep.previous_summary else ""
        reply = await ctx.model_registry.complete(
            model, {"messages": [PROMPT.format(previous=previous, conversation=conversation)]}
        )
        summary = _text(reply).strip()
        if reply.stop_reason == "error" or not summary:
            ctx.ui.notify("Compaction summary failed, using default compaction", "warning")
            return None
        return {
            "compaction": CompactionResult(
                summary=summary,
                first_kept_entry_id=prep.first_kept_entry_id,
                tokens_before=prep.tokens_before,
                usage=reply.usage,
            )
        }
