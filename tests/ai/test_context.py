"""Transcript helpers (spec 1.5) and the replay transformation (spec 2.7)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from pi_coder.agent.types import AgentTool, AgentToolResult
from pi_coder.ai import (
    AssistantMessage,
    Model,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolRef,
    ToolResultMessage,
    UserMessage,
    create_initial_system_message,
    get_current_system_message,
    get_current_system_prompt,
    get_current_tools,
    get_tool_state_changes,
    normalize_context,
    to_tool_declaration,
)
from pi_coder.ai.transform import transform_messages


class EchoParams(BaseModel):
    value: str


async def _run(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text="x")])


ECHO = AgentTool(name="echo", label="Echo", description="Echo tool", parameters=EchoParams, execute=_run)


def tool(name: str, description: str = "d", **params: Any) -> Tool:
    return Tool(name=name, description=description, parameters={"type": "object", "properties": params})


def names(tools: list[Tool]) -> list[str]:
    return [t.name for t in tools]


# ---------------------------------------------------------------------------- declarations


def test_to_tool_declaration_strips_everything_but_the_declaration() -> None:
    """An AgentTool becomes {name, description, parameters}: no label, execute or hooks."""
    decl = to_tool_declaration(ECHO)
    assert decl.to_json_dict() == {
        "name": "echo",
        "description": "Echo tool",
        "parameters": EchoParams.model_json_schema(),
    }
    assert "label" not in decl.to_json_dict()


def test_to_tool_declaration_deep_copies_parameters_and_keeps_constrained_sampling() -> None:
    """Mutating the source schema later does not change the declaration."""
    source = Tool(name="t", description="d", parameters={"properties": {"a": {"type": "string"}}}, constrained_sampling=True)
    decl = to_tool_declaration(source)
    source.parameters["properties"]["a"]["type"] = "number"
    assert decl.parameters == {"properties": {"a": {"type": "string"}}}
    assert decl.to_json_dict()["constrainedSampling"] is True
    assert "constrainedSampling" not in to_tool_declaration(tool("u")).to_json_dict()


def test_to_tool_declaration_of_a_parsed_pi_json_tool_drops_extra_keys() -> None:
    """JSON is parsed where it enters (docs/architecture.md#types); the declaration drops what is not one."""
    parsed = Tool.model_validate({"name": "a", "description": "b", "parameters": {"x": 1}, "label": "L"})
    decl = to_tool_declaration(parsed)
    assert decl.to_json_dict() == {"name": "a", "description": "b", "parameters": {"x": 1}}


# ---------------------------------------------------------------------------- get_current_tools


def test_get_current_tools_replays_system_messages_in_order() -> None:
    """Removals apply before additions; re-setting a key keeps its position; other roles are ignored."""
    a, b, c = tool("a"), tool("b"), tool("c")
    b2 = tool("b", "changed")
    messages = [
        SystemMessage(content="base", tools_added=[a, b, c]),
        UserMessage(content="hi"),
        {"role": "notification", "text": "custom roles are fine"},
        SystemMessage(tools_added=[b2]),
    ]
    current = get_current_tools(messages)
    assert names(current) == ["a", "b", "c"]
    assert current[1].description == "changed"


def test_delete_then_add_moves_the_tool_to_the_end() -> None:
    a, b, c = tool("a"), tool("b"), tool("c")
    messages = [
        SystemMessage(tools_added=[a, b, c]),
        SystemMessage(tools_removed=[ToolRef(name="a")], tools_added=[tool("a", "again")]),
    ]
    assert names(get_current_tools(messages)) == ["b", "c", "a"]


def test_removal_within_one_message_is_applied_before_addition() -> None:
    """A message that adds and removes the same name leaves the tool present."""
    messages = [SystemMessage(tools_added=[tool("a")]), SystemMessage(tools_added=[tool("x")], tools_removed=[ToolRef(name="x")])]
    assert names(get_current_tools(messages)) == ["a", "x"]


def test_get_current_tools_replays_parsed_pi_json() -> None:
    """Messages loaded from Pi's JSON (camelCase) replay the same way once parsed; a dict is not a message."""
    raw = [
        {"role": "system", "content": "", "toolsAdded": [{"name": "a", "description": "d", "parameters": {}}]},
        {"role": "system", "content": "", "toolsRemoved": [{"name": "a"}]},
        {"role": "system", "content": "", "toolsAdded": [{"name": "b", "description": "d", "parameters": {}}]},
    ]
    assert names(get_current_tools([SystemMessage.model_validate(item) for item in raw])) == ["b"]
    assert get_current_tools(raw) == []


def test_get_current_tools_of_empty_transcript() -> None:
    assert get_current_tools([]) == []
    assert get_current_tools([UserMessage(content="x")]) == []


# ---------------------------------------------------------------------------- state changes


def test_get_tool_state_changes_added_removed_and_changed() -> None:
    """New tools are added (current order), gone ones removed (previous order), changed ones in both."""
    previous = [tool("a"), tool("b"), tool("c")]
    current = [tool("d"), tool("c", "new description"), tool("a")]
    added, removed = get_tool_state_changes(previous, current)
    assert names(added) == ["d", "c"]
    assert added[1].description == "new description"
    assert removed == [ToolRef(name="b"), ToolRef(name="c")]


def test_get_tool_state_changes_none_for_equal_declarations() -> None:
    """An executable tool and its declaration compare equal; order alone is no change."""
    added, removed = get_tool_state_changes([to_tool_declaration(ECHO), tool("z")], [tool("z"), ECHO])
    assert added == [] and removed == []


def test_get_tool_state_changes_detects_schema_and_constrained_sampling_changes() -> None:
    base = tool("a", value={"type": "string"})
    schema = tool("a", value={"type": "number"})
    flagged = Tool(name="a", description="d", parameters=base.parameters, constrained_sampling=True)
    for changed in (schema, flagged):
        added, removed = get_tool_state_changes([base], [changed])
        assert names(added) == ["a"] and removed == [ToolRef(name="a")]


# ---------------------------------------------------------------------------- system messages


def test_create_initial_system_message() -> None:
    """Nothing without prompt and tools; otherwise timestamp 0 and toolsAdded only when tools exist."""
    assert create_initial_system_message(None, []) is None
    assert create_initial_system_message("", None) is None
    only_prompt = create_initial_system_message("Be brief.", [])
    assert only_prompt is not None
    assert only_prompt.to_json_dict() == {"role": "system", "content": "Be brief.", "timestamp": 0}
    only_tools = create_initial_system_message(None, [ECHO])
    assert only_tools is not None
    assert only_tools.to_json_dict() == {
        "role": "system",
        "content": "",
        "toolsAdded": [to_tool_declaration(ECHO).to_json_dict()],
        "timestamp": 0,
    }


def test_get_current_system_message_joins_contents_patches_sections_and_tools() -> None:
    messages = [
        SystemMessage(content="Base prompt.", sections={"env": "cwd: /a", "rules": "Be nice."}, tools_added=[tool("a")], timestamp=5),
        UserMessage(content="hi"),
        SystemMessage(content="", sections={"env": "cwd: /b"}, timestamp=9),
        SystemMessage(content=[TextContent(text="Appended.")], sections={"rules": None, "later": "L"}, tools_added=[tool("b")]),
    ]
    current = get_current_system_message(messages)
    assert current is not None
    assert current.content == "Base prompt.\n\nAppended."
    assert current.sections == {"env": "cwd: /b", "later": "L"}
    assert names(current.tools_added or []) == ["a", "b"]
    assert current.timestamp == 5
    assert get_current_system_prompt(messages) == "Base prompt.\n\nAppended.\n\ncwd: /b\n\nL"


def test_removed_section_set_again_goes_to_the_end() -> None:
    messages = [
        SystemMessage(content="P", sections={"a": "A", "b": "B"}),
        SystemMessage(sections={"a": None}),
        SystemMessage(sections={"a": "A2"}),
    ]
    assert get_current_system_prompt(messages) == "P\n\nB\n\nA2"


def test_no_system_message_gives_nothing() -> None:
    assert get_current_system_message([UserMessage(content="x")]) is None
    assert get_current_system_prompt([UserMessage(content="x")]) == ""
    assert get_current_system_prompt([]) == ""


# ---------------------------------------------------------------------------- normalize_context


def test_normalize_context_with_messages_only_keeps_the_same_list() -> None:
    messages = [UserMessage(content="hi")]
    context = normalize_context(messages=messages)
    assert context.messages is messages
    assert set(context.model_dump()) == {"messages"}


def test_normalize_context_prepends_the_initial_system_message() -> None:
    user = UserMessage(content="hi")
    context = normalize_context(system_prompt="Be brief.", messages=[user], tools=[ECHO])
    first, second = context.messages
    assert isinstance(first, SystemMessage)
    assert first.content == "Be brief." and first.timestamp == 0
    assert names(first.tools_added or []) == ["echo"]
    assert second is user


# ---------------------------------------------------------------------------- transform_messages

MODEL = Model(id="claude-sonnet-4-5", api="anthropic-messages", provider="anthropic")


def assistant(*blocks: Any, model: str = "claude-sonnet-4-5", provider: str = "anthropic", api: str = "anthropic-messages", stop: str = "stop") -> AssistantMessage:
    return AssistantMessage(content=list(blocks), model=model, provider=provider, api=api, stop_reason=stop)  # type: ignore[arg-type]


def test_same_model_keeps_thinking_and_signatures() -> None:
    message = assistant(
        ThinkingContent(thinking="deep", thinking_signature="sig"),
        ThinkingContent(thinking="[redacted]", thinking_signature="opaque", redacted=True),
        TextContent(text="hi", text_signature="t"),
        ToolCall(id="c1", name="x", thought_signature="ts"),
        stop="toolUse",
    )
    result = ToolResultMessage(tool_call_id="c1", tool_name="x")
    out = transform_messages([message, result], MODEL)
    assert out[0] is message and out[1] is result


def test_other_model_turns_thinking_into_text_and_drops_redacted_and_empty() -> None:
    message = assistant(
        ThinkingContent(thinking="deep thought", thinking_signature="sig"),
        ThinkingContent(thinking="   "),
        ThinkingContent(thinking="[redacted]", thinking_signature="opaque", redacted=True),
        TextContent(text="answer", text_signature="t"),
        ToolCall(id="c1", name="x", arguments={"a": 1}, thought_signature="ts"),
        model="gpt-5",
        provider="openai",
        api="openai-completions",
        stop="toolUse",
    )
    out = transform_messages([message, ToolResultMessage(tool_call_id="c1", tool_name="x")], MODEL)
    converted = out[0]
    assert converted is not message
    assert [b.to_json_dict() for b in converted.content] == [
        {"type": "text", "text": "deep thought"},
        {"type": "text", "text": "answer"},
        {"type": "toolCall", "id": "c1", "name": "x", "arguments": {"a": 1}},
    ]
    assert message.content[0].thinking_signature == "sig"  # the input is not modified


def test_same_model_requires_provider_api_and_id_to_match() -> None:
    """Same id through another provider counts as another model."""
    message = assistant(ThinkingContent(thinking="t", thinking_signature="s"), provider="openrouter")
    out = transform_messages([message], MODEL)
    assert [b.type for b in out[0].content] == ["text"]


def test_error_and_aborted_assistant_messages_are_dropped() -> None:
    user = UserMessage(content="q")
    ok = assistant(TextContent(text="ok"))
    out = transform_messages([user, assistant(TextContent(text="x"), stop="error"), assistant(stop="aborted"), ok], MODEL)
    assert out == [user, ok]


def test_orphaned_tool_calls_get_synthetic_error_results() -> None:
    """Calls without a result before the next user/assistant message get "No result provided"."""
    first = assistant(ToolCall(id="c1", name="a"), ToolCall(id="c2", name="b"), stop="toolUse")
    r1 = ToolResultMessage(tool_call_id="c1", tool_name="a", content=[TextContent(text="done")])
    user = UserMessage(content="next")
    out = transform_messages([first, r1, user], MODEL)
    assert out[:2] == [first, r1]
    synthetic = out[2]
    assert isinstance(synthetic, ToolResultMessage)
    assert (synthetic.tool_call_id, synthetic.tool_name, synthetic.is_error) == ("c2", "b", True)
    assert synthetic.content == [TextContent(text="No result provided")]
    assert out[3] is user


def test_orphaned_tool_calls_before_an_aborted_message_are_filled() -> None:
    """An aborted turn after an unanswered batch still gets the synthetic results first."""
    first = assistant(ToolCall(id="c1", name="a"), stop="toolUse")
    out = transform_messages([first, assistant(stop="aborted")], MODEL)
    assert [m.role for m in out] == ["assistant", "toolResult"]


def test_tool_call_ids_can_be_normalised_for_other_models() -> None:
    first = assistant(ToolCall(id="call|weird/id", name="a"), model="gpt-5", provider="openai", api="openai-completions", stop="toolUse")
    result = ToolResultMessage(tool_call_id="call|weird/id", tool_name="a")
    out = transform_messages([first, result], MODEL, normalize_tool_call_id=lambda i, m, s: i.replace("|", "_").replace("/", "_"))
    assert out[0].content[0].id == "call_weird_id"
    assert out[1].tool_call_id == "call_weird_id"
    assert result.tool_call_id == "call|weird/id"
