"""Session persistence: Pi-compatible JSONL session files, the entry tree and context rebuild.

Depends on ``pi_coder.ai`` only; no network I/O.
"""

from __future__ import annotations

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
from pi_coder.session.errors import AmbiguousSessionError, InvalidSessionFileError, SessionNotFoundError
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

__all__ = [
    "AgentMessage",
    "AmbiguousSessionError",
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "BashExecutionMessage",
    "BranchSummaryEntry",
    "BranchSummaryMessage",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "CURRENT_SESSION_VERSION",
    "CompactionEntry",
    "CompactionSummaryMessage",
    "CustomEntry",
    "CustomMessage",
    "CustomMessageEntry",
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
    "SessionStore",
    "SessionTreeNode",
    "ThinkingLevelChangeEntry",
    "UnknownEntry",
    "UnknownMessage",
    "bash_execution_to_text",
    "build_session_context",
    "convert_to_llm",
    "find_most_recent_session",
    "list_all_sessions",
    "list_sessions",
    "parse_agent_message",
    "read_session_info",
    "repair_tool_pairing",
    "resolve_session",
]
