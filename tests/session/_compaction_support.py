"""Builders for compaction and branch-summary tests: real stores, a recording faux stream."""

from __future__ import annotations

from typing import Any

from pi_coder.ai.providers.faux import FauxProvider, faux_provider
from pi_coder.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from pi_coder.session.compaction import SUMMARIZATION_SYSTEM_PROMPT
from pi_coder.session.store import SessionStore


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def assistant(text: str = "", *calls: ToolCall, usage: Usage | None = None, stop_reason: str | None = None) -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)] if text else []
    content.extend(calls)
    reason = stop_reason or ("toolUse" if calls else "stop")
    return AssistantMessage(
        content=content, stop_reason=reason, api="faux", provider="faux", model="faux-1", usage=usage or Usage()
    )  # type: ignore[arg-type]


def call(name: str, call_id: str, **args: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=args)


def result(call_id: str, text: str, name: str = "read") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)])


def words(n: int, tag: str = "w") -> str:
    """About ``n`` tokens of text (4 characters each)."""
    return " ".join(f"{tag}{i % 10:02d}" for i in range(n))[: n * 4]


def build_store(*messages: Any, store: SessionStore | None = None) -> tuple[SessionStore, list[str]]:
    """Append ``messages`` to a store (in memory unless given); returns the entry ids."""
    store = store or SessionStore.in_memory("/tmp/project")
    ids = [store.append_message(m) for m in messages]
    return store, ids


def is_summary_request(context: Any) -> bool:
    first = context.messages[0] if context.messages else None
    return getattr(first, "role", None) == "system" and first.content == SUMMARIZATION_SYSTEM_PROMPT


def prompt_text(context: Any) -> str:
    """The user text of a summary request."""
    return "".join(b.text for b in context.messages[-1].content)


def summarizer(*replies: str) -> FauxProvider:
    """A faux provider answering summary requests with ``replies`` in order."""
    return faux_provider(list(replies))
