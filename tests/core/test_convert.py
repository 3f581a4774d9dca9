"""convert_to_llm for the agent (coding messages + image blocking) and the stats estimates."""

from __future__ import annotations

from pi_coder.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_coder.core.convert import IMAGE_BLOCKED_TEXT, block_images, convert_to_llm, make_convert_to_llm
from pi_coder.core.stats import compute_stats, estimate_context_tokens, estimate_message_tokens
from pi_coder.session.messages import BashExecutionMessage, CompactionSummaryMessage, CustomMessage

IMG = ImageContent(data="aGk=", mime_type="image/png")


def test_coding_messages_become_user_text_and_double_bang_is_dropped() -> None:
    messages = [
        UserMessage(content="hi"),
        BashExecutionMessage(command="ls", output="a\nb", exit_code=2),
        BashExecutionMessage(command="env", output="SECRET", exit_code=0, exclude_from_context=True),
        CustomMessage(custom_type="note", content="extension text"),
    ]
    out = convert_to_llm(messages)
    assert [m.role for m in out] == ["user", "user", "user"]
    assert out[0] is messages[0]
    assert out[1].content[0].text == "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 2"
    assert out[2].content[0].text == "extension text"


def test_block_images_replaces_and_collapses_without_touching_the_transcript() -> None:
    user = UserMessage(content=[TextContent(text="look"), IMG, IMG, TextContent(text="and"), IMG])
    result = ToolResultMessage(tool_call_id="c", tool_name="read", content=[IMG])
    plain = UserMessage(content="no images")
    out = block_images([user, result, plain])
    assert [b.text for b in out[0].content] == ["look", IMAGE_BLOCKED_TEXT, "and", IMAGE_BLOCKED_TEXT]
    assert [b.text for b in out[1].content] == [IMAGE_BLOCKED_TEXT]
    assert out[2] is plain
    assert user.content[1] is IMG  # the original is unchanged

    enabled = {"on": False}
    convert = make_convert_to_llm(lambda: enabled["on"])
    assert convert([user])[0] is user
    enabled["on"] = True
    assert IMAGE_BLOCKED_TEXT in [getattr(b, "text", None) for b in convert([user])[0].content]


def _assistant(text: str, total: int, stop: str = "stop") -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], usage=Usage(input=total, total_tokens=total), stop_reason=stop)


def test_context_estimate_uses_last_good_usage_plus_tail_chars() -> None:
    messages = [
        UserMessage(content="q" * 40),
        _assistant("a", 1000),
        UserMessage(content="x" * 41),  # 11 tokens
        _assistant("failed", 5000, stop="error"),  # errors do not count as usage, but their text does
        ToolResultMessage(tool_call_id="c", tool_name="t", content=[IMG]),  # 1200
    ]
    assert estimate_context_tokens(messages) == 1000 + 11 + 2 + 1200
    assert estimate_message_tokens(BashExecutionMessage(command="ls", output="x" * 10)) == 3
    call = AssistantMessage(content=[ToolCall(id="1", name="read", arguments={"path": "a"})])
    assert estimate_message_tokens(call) == 4  # "read" + '{"path":"a"}' (compact JSON, as Pi)


def test_context_is_unknown_right_after_compaction() -> None:
    messages = [CompactionSummaryMessage(summary="s" * 100, tokens_before=9000), UserMessage(content="kept")]
    assert estimate_context_tokens(messages) is None
    stats = compute_stats(messages, [], context_window=100)
    assert stats.context_tokens is None and stats.context_percent is None
    messages.append(_assistant("fresh", 50))
    assert estimate_context_tokens(messages) == 50
