"""The loop's per-event copy of the streaming partial behaves as ``model_copy()``."""

from __future__ import annotations

from pi_coder.agent.loop import _snapshot
from pi_coder.ai.types import AssistantMessage, TextContent, Usage


def test_snapshot_is_a_shallow_copy_like_model_copy() -> None:
    partial = AssistantMessage.model_validate(
        {"content": [{"type": "text", "text": "hel"}], "api": "a", "provider": "p", "model": "m", "vendorField": 1}
    )
    partial.usage = Usage(input=3)
    copy = _snapshot(partial)
    expected = partial.model_copy()

    assert type(copy) is AssistantMessage
    assert copy.model_dump() == expected.model_dump()
    assert copy.__pydantic_extra__ == {"vendorField": 1}
    assert copy.model_fields_set == expected.model_fields_set
    assert copy.content is partial.content  # shallow: blocks are shared, as with model_copy()
    partial.stop_reason = "length"  # the partial moves on; the snapshot keeps its own fields
    partial.__pydantic_extra__["vendorField"] = 2
    assert copy.stop_reason == "stop" and copy.__pydantic_extra__ == {"vendorField": 1}
    assert copy.to_json_dict() == expected.to_json_dict()


def test_snapshot_of_a_message_with_private_state_falls_back_to_model_copy() -> None:
    message = AssistantMessage(content=[TextContent(text="x")])
    object.__setattr__(message, "__pydantic_private__", {"note": 1})
    copy = _snapshot(message)
    assert copy.__pydantic_private__ == {"note": 1} and copy.__pydantic_private__ is not message.__pydantic_private__
