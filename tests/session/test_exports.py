"""pi_coder.session's public surface: a sorted __all__ whose every name resolves."""

from __future__ import annotations

import pi_coder.session


def test_all_is_sorted_and_resolves() -> None:
    assert pi_coder.session.__all__ == sorted(set(pi_coder.session.__all__))
    for name in pi_coder.session.__all__:
        assert getattr(pi_coder.session, name) is not None


def test_brief_names_are_exported() -> None:
    expected = {
        "SessionStore",
        "SessionInfo",
        "SessionContext",
        "SessionTreeNode",
        "BashExecutionMessage",
        "CustomMessage",
        "BranchSummaryMessage",
        "CompactionSummaryMessage",
        "parse_agent_message",
        "convert_to_llm",
        "list_sessions",
        "list_all_sessions",
        "find_most_recent_session",
        "resolve_session",
    }
    assert expected <= set(pi_coder.session.__all__)
