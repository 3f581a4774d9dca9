"""Product logic shared by every mode: AgentSession, model resolution, system prompt, events.

Names are imported lazily so that ``import pi_coder.core.events`` (or any submodule) does not
pull in the whole session machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.core.factory import DEFAULT_TOOL_NAMES, create_agent_session
    from pi_coder.core.model_resolver import (
        StartModel,
        pick_start_model,
        resolve_model_pattern,
        resolve_scoped_models,
    )
    from pi_coder.core.session_hooks import (
        BranchSummarizer,
        BranchSummaryRequest,
        BranchSummaryResult,
        RunHook,
    )
    from pi_coder.core.stats import SessionStats
    from pi_coder.core.thinking import THINKING_LEVELS, available_thinking_levels, clamp_thinking_level

__all__ = [
    "DEFAULT_TOOL_NAMES",
    "THINKING_LEVELS",
    "AgentSession",
    "BranchSummarizer",
    "BranchSummaryRequest",
    "BranchSummaryResult",
    "RunHook",
    "SessionStats",
    "StartModel",
    "available_thinking_levels",
    "clamp_thinking_level",
    "create_agent_session",
    "pick_start_model",
    "resolve_model_pattern",
    "resolve_scoped_models",
]

_WHERE = {
    "AgentSession": "agent_session",
    "DEFAULT_TOOL_NAMES": "factory",
    "create_agent_session": "factory",
    "StartModel": "model_resolver",
    "pick_start_model": "model_resolver",
    "resolve_model_pattern": "model_resolver",
    "resolve_scoped_models": "model_resolver",
    "BranchSummarizer": "session_hooks",
    "BranchSummaryRequest": "session_hooks",
    "BranchSummaryResult": "session_hooks",
    "RunHook": "session_hooks",
    "SessionStats": "stats",
    "THINKING_LEVELS": "thinking",
    "available_thinking_levels": "thinking",
    "clamp_thinking_level": "thinking",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_coder.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pi_coder.core.{module}"), name)
    globals()[name] = value
    return value
