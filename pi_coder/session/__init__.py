"""Session persistence: Pi-compatible JSONL session files, the entry tree and context rebuild.

Depends on ``pi_coder.ai`` only; no network I/O. Names are imported lazily, so loading a
session does not import the compaction machinery until it is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.session.branch_summary import BranchSummary, collect_branch_entries, generate_branch_summary
    from pi_coder.session.compaction import (
        CompactionCancelled,
        CompactionError,
        CompactionPreparation,
        CompactionResult,
        FileOperations,
        compact,
        find_cut_point,
        prepare_compaction,
        serialize_conversation,
    )
    from pi_coder.session.context import (
        INTERRUPTED_TOOL_CALL_TEXT,
        SessionContext,
        build_session_context,
        repair_tool_pairing,
    )
    from pi_coder.session.entries import (
        CURRENT_SESSION_VERSION,
        BranchSummaryEntry,
        CompactionEntry,
        CustomEntry,
        CustomMessageEntry,
        LabelEntry,
        MessageEntry,
        ModelChangeEntry,
        SessionEntry,
        SessionHeader,
        SessionInfoEntry,
        ThinkingLevelChangeEntry,
        UnknownEntry,
    )
    from pi_coder.session.errors import (
        AmbiguousSessionError,
        InvalidSessionFileError,
        SessionNotFoundError,
        SessionReadError,
        SessionWriteError,
    )
    from pi_coder.session.listing import (
        SessionInfo,
        find_most_recent_session,
        list_all_sessions,
        list_sessions,
        read_session_info,
        resolve_session,
    )
    from pi_coder.session.messages import (
        BRANCH_SUMMARY_PREFIX,
        BRANCH_SUMMARY_SUFFIX,
        COMPACTION_SUMMARY_PREFIX,
        COMPACTION_SUMMARY_SUFFIX,
        AgentMessage,
        BashExecutionMessage,
        BranchSummaryMessage,
        CompactionSummaryMessage,
        CustomMessage,
        UnknownMessage,
        bash_execution_to_text,
        convert_to_llm,
        parse_agent_message,
    )
    from pi_coder.session.store import SessionStore, SessionTreeNode
    from pi_coder.session.tokens import estimate_context_tokens, estimate_tokens, should_compact

__all__ = [
    "AgentMessage",
    "AmbiguousSessionError",
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "BashExecutionMessage",
    "BranchSummary",
    "BranchSummaryEntry",
    "BranchSummaryMessage",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "CURRENT_SESSION_VERSION",
    "CompactionCancelled",
    "CompactionEntry",
    "CompactionError",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSummaryMessage",
    "CustomEntry",
    "CustomMessage",
    "CustomMessageEntry",
    "FileOperations",
    "INTERRUPTED_TOOL_CALL_TEXT",
    "InvalidSessionFileError",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "SessionContext",
    "SessionEntry",
    "SessionHeader",
    "SessionInfo",
    "SessionInfoEntry",
    "SessionNotFoundError",
    "SessionReadError",
    "SessionStore",
    "SessionTreeNode",
    "SessionWriteError",
    "ThinkingLevelChangeEntry",
    "UnknownEntry",
    "UnknownMessage",
    "bash_execution_to_text",
    "build_session_context",
    "collect_branch_entries",
    "compact",
    "convert_to_llm",
    "estimate_context_tokens",
    "estimate_tokens",
    "find_cut_point",
    "find_most_recent_session",
    "generate_branch_summary",
    "list_all_sessions",
    "list_sessions",
    "parse_agent_message",
    "prepare_compaction",
    "read_session_info",
    "repair_tool_pairing",
    "resolve_session",
    "serialize_conversation",
    "should_compact",
]

_WHERE = {
    "BranchSummary": "branch_summary",
    "collect_branch_entries": "branch_summary",
    "generate_branch_summary": "branch_summary",
    "CompactionCancelled": "compaction",
    "CompactionError": "compaction",
    "CompactionPreparation": "compaction",
    "CompactionResult": "compaction",
    "FileOperations": "compaction",
    "compact": "compaction",
    "find_cut_point": "compaction",
    "prepare_compaction": "compaction",
    "serialize_conversation": "compaction",
    "INTERRUPTED_TOOL_CALL_TEXT": "context",
    "SessionContext": "context",
    "build_session_context": "context",
    "repair_tool_pairing": "context",
    "CURRENT_SESSION_VERSION": "entries",
    "BranchSummaryEntry": "entries",
    "CompactionEntry": "entries",
    "CustomEntry": "entries",
    "CustomMessageEntry": "entries",
    "LabelEntry": "entries",
    "MessageEntry": "entries",
    "ModelChangeEntry": "entries",
    "SessionEntry": "entries",
    "SessionHeader": "entries",
    "SessionInfoEntry": "entries",
    "ThinkingLevelChangeEntry": "entries",
    "UnknownEntry": "entries",
    "AmbiguousSessionError": "errors",
    "InvalidSessionFileError": "errors",
    "SessionNotFoundError": "errors",
    "SessionReadError": "errors",
    "SessionWriteError": "errors",
    "SessionInfo": "listing",
    "find_most_recent_session": "listing",
    "list_all_sessions": "listing",
    "list_sessions": "listing",
    "read_session_info": "listing",
    "resolve_session": "listing",
    "BRANCH_SUMMARY_PREFIX": "messages",
    "BRANCH_SUMMARY_SUFFIX": "messages",
    "COMPACTION_SUMMARY_PREFIX": "messages",
    "COMPACTION_SUMMARY_SUFFIX": "messages",
    "AgentMessage": "messages",
    "BashExecutionMessage": "messages",
    "BranchSummaryMessage": "messages",
    "CompactionSummaryMessage": "messages",
    "CustomMessage": "messages",
    "UnknownMessage": "messages",
    "bash_execution_to_text": "messages",
    "convert_to_llm": "messages",
    "parse_agent_message": "messages",
    "SessionStore": "store",
    "SessionTreeNode": "store",
    "estimate_context_tokens": "tokens",
    "estimate_tokens": "tokens",
    "should_compact": "tokens",
}


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_coder.session' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pi_coder.session.{module}"), name)
    globals()[name] = value
    return value
