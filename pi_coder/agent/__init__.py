"""Agent core: the agent loop, the stateful ``Agent``, and their types."""

from __future__ import annotations

from pi_coder.agent._reconcile import declare_tool_changes
from pi_coder.agent._tools_exec import validate_tool_arguments
from pi_coder.agent.agent import Agent, AgentState, default_convert_to_llm, placeholder_model
from pi_coder.agent.events import (
    AgentEnd,
    AgentEvent,
    AgentEventStream,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from pi_coder.agent.loop import (
    StreamFn,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
    set_default_stream_fn,
)
from pi_coder.agent.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentError,
    AgentLoopConfig,
    AgentLoopTurnUpdate,
    AgentMessage,
    AgentTool,
    AgentToolResult,
    AgentTurnContext,
    BeforeToolCallContext,
    BeforeToolCallResult,
    FinishTurnResult,
    PrepareNextTurnContext,
)
from pi_coder.ai.abort import AbortController, AbortSignal

__all__ = [
    "AbortController",
    "AbortSignal",
    "AfterToolCallContext",
    "AfterToolCallResult",
    "Agent",
    "AgentContext",
    "AgentEnd",
    "AgentError",
    "AgentEvent",
    "AgentEventStream",
    "AgentLoopConfig",
    "AgentLoopTurnUpdate",
    "AgentMessage",
    "AgentStart",
    "AgentState",
    "AgentTool",
    "AgentToolResult",
    "AgentTurnContext",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "FinishTurnResult",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "PrepareNextTurnContext",
    "StreamFn",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "TurnEnd",
    "TurnStart",
    "agent_loop",
    "agent_loop_continue",
    "declare_tool_changes",
    "default_convert_to_llm",
    "placeholder_model",
    "run_agent_loop",
    "run_agent_loop_continue",
    "set_default_stream_fn",
    "validate_tool_arguments",
]
