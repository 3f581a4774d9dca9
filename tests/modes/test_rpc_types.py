"""The RPC command union: every command has a handler, malformed fields get one error line."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from pi_coder.modes.rpc_commands import COMMANDS
from pi_coder.modes.rpc_types import (
    COMMAND_TYPES,
    CommandError,
    PromptCommand,
    RestoreCheckpointCommand,
    parse_command,
)


def test_every_command_of_the_union_has_a_handler() -> None:
    assert set(COMMANDS) == set(COMMAND_TYPES)


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ({"type": "prompt"}, '"message" must be a non-empty string'),
        ({"type": "prompt", "message": " "}, '"message" must be a non-empty string (or send images)'),
        ({"type": "prompt", "message": "", "images": 3}, '"images" must be a list'),
        (
            {"type": "prompt", "message": "x", "streamingBehavior": "now"},
            'Invalid streamingBehavior "now": use "steer" or "followUp"',
        ),
        ({"type": "set_model", "provider": "p"}, '"modelId" must be a non-empty string'),
        ({"type": "set_auto_retry", "enabled": "yes"}, '"enabled" must be true or false'),
        ({"type": "set_steering_mode", "mode": "x"}, 'Invalid mode "x": use "all" or "one-at-a-time"'),
        ({"type": "get_entries", "since": 3}, '"since" must be an entry id'),
        (
            {"type": "restore_checkpoint", "entryId": "e", "mode": "all"},
            '"mode" must be "code", "conversation" or "both"',
        ),
        ({"type": "restore_checkpoint"}, '"checkpointId" (or "entryId") must be a non-empty string'),
    ],
)
def test_a_malformed_command_gets_its_error_line(raw: dict[str, JsonValue], error: str) -> None:
    with pytest.raises(CommandError) as caught:
        parse_command(raw)
    assert str(caught.value) == error


def test_fields_are_read_from_camel_case_and_unknown_keys_are_ignored() -> None:
    prompt = parse_command(
        {
            "type": "prompt",
            "id": "r1",
            "message": "hi",
            "streamingBehavior": "steer",
            "extra": 1,
            "images": [{"source": {"data": "AA==", "mediaType": "image/png"}}],
        }  # fmt: skip
    )
    assert isinstance(prompt, PromptCommand)
    assert (prompt.id, prompt.message, prompt.streaming_behavior) == ("r1", "hi", "steer")
    assert prompt.images is not None and prompt.images[0].mime_type == "image/png"
    restore = parse_command({"type": "restore_checkpoint", "checkpointId": "", "entryId": "e1", "force": 1})
    assert isinstance(restore, RestoreCheckpointCommand)
    assert (restore.target, restore.mode, restore.force) == ("e1", "both", False)
