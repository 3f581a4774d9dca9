"""Coding-agent message types: Pi's JSON shape, parsing of every role, convert_to_llm."""

from __future__ import annotations

import pytest

from pi_coder.ai.types import (
    AssistantMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from pi_coder.session import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    UnknownMessage,
    bash_execution_to_text,
    convert_to_llm,
    parse_agent_message,
)


def test_json_shapes_match_pi() -> None:
    """Each coding message dumps with Pi's camelCase keys and omits unset optional fields."""
    bash = BashExecutionMessage(command="ls", output="a", exit_code=0, timestamp=5)
    assert bash.to_json_dict() == {
        "role": "bashExecution",
        "command": "ls",
        "output": "a",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 5,
    }
    full = BashExecutionMessage(
        command="x", full_output_path="/tmp/o", exclude_from_context=True, truncated=True, timestamp=1
    ).to_json_dict()
    assert full["fullOutputPath"] == "/tmp/o" and full["excludeFromContext"] is True
    assert "exitCode" not in full
    custom = CustomMessage(custom_type="t", content="c", details={"a": 1}, timestamp=2).to_json_dict()
    assert custom == {"role": "custom", "customType": "t", "content": "c", "display": True, "details": {"a": 1}, "timestamp": 2}
    assert BranchSummaryMessage(summary="s", from_id="ab", timestamp=3).to_json_dict() == {
        "role": "branchSummary",
        "summary": "s",
        "fromId": "ab",
        "timestamp": 3,
    }
    assert CompactionSummaryMessage(summary="s", tokens_before=9, timestamp=4).to_json_dict() == {
        "role": "compactionSummary",
        "summary": "s",
        "tokensBefore": 9,
        "timestamp": 4,
    }


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        ({"role": "user", "content": "hi", "timestamp": 1}, UserMessage),
        ({"role": "assistant", "content": [{"type": "text", "text": "a"}], "timestamp": 1}, AssistantMessage),
        ({"role": "toolResult", "toolCallId": "c", "toolName": "n", "content": [], "isError": True}, ToolResultMessage),
        ({"role": "system", "content": "be brief"}, SystemMessage),
        ({"role": "bashExecution", "command": "ls", "output": "", "exitCode": None}, BashExecutionMessage),
        ({"role": "custom", "customType": "t", "content": "x", "display": False}, CustomMessage),
        ({"role": "hookMessage", "customType": "t", "content": "x", "display": True}, CustomMessage),
        ({"role": "branchSummary", "summary": "s", "fromId": "root"}, BranchSummaryMessage),
        ({"role": "compactionSummary", "summary": "s", "tokensBefore": 1}, CompactionSummaryMessage),
    ],
)
def test_parse_agent_message_handles_every_role(data: dict, cls: type) -> None:
    """Known roles (and v2's hookMessage) become their typed message."""
    message = parse_agent_message(data)
    assert type(message) is cls
    if data["role"] == "hookMessage":
        assert message.role == "custom"


def test_unknown_roles_round_trip_with_every_field() -> None:
    """A role nobody knows is kept with all fields, explicit nulls included."""
    data = {"role": "notification", "level": "warn", "textBody": "x", "meta": None, "timestamp": 7}
    message = parse_agent_message(data)
    assert isinstance(message, UnknownMessage)
    assert message.to_json_dict() == data
    assert convert_to_llm([message]) == []


def test_invalid_known_role_is_an_error_unless_lenient() -> None:
    """strict parsing rejects a broken message; lenient parsing keeps it as UnknownMessage."""
    broken = {"role": "toolResult", "content": "not a list", "timestamp": 1}
    with pytest.raises(ValueError, match="invalid toolResult"):
        parse_agent_message(broken)
    kept = parse_agent_message(broken, strict=False)
    assert isinstance(kept, UnknownMessage) and kept.to_json_dict() == broken
    with pytest.raises(ValueError, match="no role"):
        parse_agent_message({"content": "x"})


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"output": "out", "exit_code": 0}, "Ran `cmd`\n```\nout\n```"),
        ({"output": "", "exit_code": 0}, "Ran `cmd`\n(no output)"),
        ({"output": "o", "exit_code": 2}, "Ran `cmd`\n```\no\n```\n\nCommand exited with code 2"),
        ({"output": "o", "exit_code": None, "cancelled": True}, "Ran `cmd`\n```\no\n```\n\n(command cancelled)"),
        (
            {"output": "o", "exit_code": 0, "truncated": True, "full_output_path": "/tmp/f"},
            "Ran `cmd`\n```\no\n```\n\n[Output truncated. Full output: /tmp/f]",
        ),
        ({"output": "o", "exit_code": 0, "truncated": True}, "Ran `cmd`\n```\no\n```"),
    ],
)
def test_bash_execution_text_matches_pi(kwargs: dict, expected: str) -> None:
    assert bash_execution_to_text(BashExecutionMessage(command="cmd", **kwargs)) == expected


def test_convert_to_llm_maps_every_role() -> None:
    """LLM roles pass through as the same objects; coding roles become user messages; !! and unknown drop."""
    system = SystemMessage(content="sys")
    user = UserMessage(content="u")
    assistant = AssistantMessage(content=[TextContent(text="a")])
    result = ToolResultMessage(tool_call_id="c", tool_name="n", content=[TextContent(text="r")])
    image = ImageContent(data="AAAA", mime_type="image/png")
    messages = [
        system,
        user,
        assistant,
        result,
        BashExecutionMessage(command="ls", output="x", exit_code=0, timestamp=10),
        BashExecutionMessage(command="secret", output="x", exclude_from_context=True),
        CustomMessage(custom_type="t", content="plain", timestamp=11),
        CustomMessage(custom_type="t", content=[TextContent(text="b"), image], timestamp=12),
        BranchSummaryMessage(summary="went left", from_id="x", timestamp=13),
        CompactionSummaryMessage(summary="earlier", tokens_before=1, timestamp=14),
        UnknownMessage(role="notification"),
    ]
    llm = convert_to_llm(messages)
    assert llm[:4] == [system, user, assistant, result]
    assert llm[0] is system and llm[2] is assistant
    assert llm[4] == UserMessage(content=[TextContent(text="Ran `ls`\n```\nx\n```")], timestamp=10)
    assert llm[5] == UserMessage(content=[TextContent(text="plain")], timestamp=11)
    assert llm[6] == UserMessage(content=[TextContent(text="b"), image], timestamp=12)
    assert llm[7].content[0].text == (
        "The following is a summary of a branch that this conversation came back from:\n\n"
        "<summary>\nwent left</summary>"
    )
    assert llm[8].content[0].text == (
        "The conversation history before this point was compacted into the following summary:\n\n"
        "<summary>\nearlier\n</summary>"
    )
    assert llm[8].timestamp == 14
    assert len(llm) == 9
