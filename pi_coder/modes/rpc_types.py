"""The RPC commands as types: one pydantic model per command, one union discriminated on ``type``.

A command line is parsed once, at the server's boundary (:func:`parse_command`); the handlers in
``pi_coder.modes.rpc_commands`` then read typed fields only. Field names follow Pi's ``docs/rpc.md``
(camelCase on the wire). A field that fails validation raises :class:`CommandError` with the one
line the client gets as the response's ``error``; unknown keys are ignored, as Pi does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from pi_coder.ai.types import ImageContent
from pi_coder.modes.options import THINKING_LEVELS

__all__ = ["COMMAND_TYPES", "CommandError", "RpcCommand", "parse_command"]


class CommandError(ValueError):
    """A command's field is missing or malformed; the message is the response's ``error``."""


def _fail(message: str) -> PydanticCustomError:
    return PydanticCustomError("rpc_command", "{message}", {"message": message})


def _text(key: str, *, allow_empty: bool = False) -> BeforeValidator:
    """A string field; empty (or blank) is refused unless ``allow_empty``."""

    def check(value: object) -> str:
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            raise _fail(f'"{key}" must be a non-empty string')
        return value

    return BeforeValidator(check)


def _optional_text(key: str, message: str) -> BeforeValidator:
    def check(value: object) -> str | None:
        if value is not None and not isinstance(value, str):
            raise _fail(f'"{key}" {message}')
        return value

    return BeforeValidator(check)


def _one_of(key: str, choices: tuple[str, ...], message: Callable[[str], str]) -> BeforeValidator:
    """A non-empty string from ``choices``."""

    def check(value: object) -> str:
        if not isinstance(value, str) or not value.strip():
            raise _fail(f'"{key}" must be a non-empty string')
        if value not in choices:
            raise _fail(message(value))
        return value

    return BeforeValidator(check)


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise _fail('"enabled" must be true or false')
    return value


def _images(raw: object) -> list[ImageContent] | None:
    """``images``: Pi's ImageContent (``data``, ``mimeType``), or ``source: {data, mediaType}``."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise _fail('"images" must be a list')
    images: list[ImageContent] = []
    for item in raw:
        source = item.get("source") if isinstance(item, dict) else None
        if isinstance(source, dict):
            item = {"data": source.get("data"), "mimeType": source.get("mediaType") or source.get("mimeType")}
        if not isinstance(item, dict) or not isinstance(item.get("data"), str) or not item.get("mimeType"):
            raise _fail("each image needs base64 data and a mimeType")
        images.append(ImageContent(data=item["data"], mime_type=str(item["mimeType"])))
    return images or None


def _streaming_behavior(value: object) -> str | None:
    if value not in (None, "steer", "followUp", "follow_up"):
        raise _fail(f'Invalid streamingBehavior "{value}": use "steer" or "followUp"')
    return value if isinstance(value, str) else None


_Required = Field(default=None, validate_default=True)
"""A required field whose absence gets the field's own error line (its validator sees None)."""

Images = Annotated[list[ImageContent] | None, BeforeValidator(_images)]
Enabled = Annotated[bool, BeforeValidator(_flag)]
Force = Annotated[bool, BeforeValidator(lambda value: value is True)]
QueueMode = Annotated[
    Literal["all", "one-at-a-time"],
    _one_of(
        "mode", ("all", "one-at-a-time"), lambda mode: f'Invalid mode "{mode}": use "all" or "one-at-a-time"'
    ),
]

ThinkingLevel = Annotated[
    str,
    _one_of(
        "level",
        tuple(THINKING_LEVELS),
        lambda level: f'Invalid thinking level "{level}". Valid values: {", ".join(THINKING_LEVELS)}',
    ),
]


class Command(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    type: str
    """The command's name; each command narrows it to its own literal."""
    id: JsonValue = None
    """The client's request id, echoed in the response."""


# ---------------------------------------------------------------------------- prompting


class PromptCommand(Command):
    type: Literal["prompt"] = "prompt"
    message: Annotated[str, _text("message", allow_empty=True)] = _Required
    images: Images = Field(default=None, validate_default=True)
    streaming_behavior: Annotated[
        Literal["steer", "followUp", "follow_up"] | None, BeforeValidator(_streaming_behavior)
    ] = None

    @field_validator("images", mode="after")
    @classmethod
    def _not_empty(cls, images: list[ImageContent] | None, info: ValidationInfo[object]) -> list[ImageContent] | None:
        # A provider would reject the empty message mid-run. Checked after the images and before
        # streamingBehavior, the order of the complaints.
        message = info.data.get("message")
        if isinstance(message, str) and not message.strip() and not images:
            raise _fail('"message" must be a non-empty string (or send images)')
        return images


class SteerCommand(Command):
    type: Literal["steer"] = "steer"
    message: Annotated[str, _text("message")] = _Required
    images: Images = None


class FollowUpCommand(Command):
    type: Literal["follow_up"] = "follow_up"
    message: Annotated[str, _text("message")] = _Required
    images: Images = None


class AbortCommand(Command):
    type: Literal["abort"] = "abort"


class GetCommandsCommand(Command):
    type: Literal["get_commands"] = "get_commands"


class ClearQueueCommand(Command):
    type: Literal["clear_queue"] = "clear_queue"


class GetStateCommand(Command):
    type: Literal["get_state"] = "get_state"


class GetMessagesCommand(Command):
    type: Literal["get_messages"] = "get_messages"


class GetLastAssistantTextCommand(Command):
    type: Literal["get_last_assistant_text"] = "get_last_assistant_text"


# ---------------------------------------------------------------------------- sessions


class NewSessionCommand(Command):
    type: Literal["new_session"] = "new_session"


class SwitchSessionCommand(Command):
    type: Literal["switch_session"] = "switch_session"
    session_path: Annotated[str, _text("sessionPath")] = _Required


class ForkCommand(Command):
    type: Literal["fork"] = "fork"
    entry_id: Annotated[str, _text("entryId")] = _Required


class CloneCommand(Command):
    type: Literal["clone"] = "clone"


class GetEntriesCommand(Command):
    type: Literal["get_entries"] = "get_entries"
    since: Annotated[str | None, _optional_text("since", "must be an entry id")] = None


class GetTreeCommand(Command):
    type: Literal["get_tree"] = "get_tree"


class GetForkMessagesCommand(Command):
    type: Literal["get_fork_messages"] = "get_fork_messages"


class SetSessionNameCommand(Command):
    type: Literal["set_session_name"] = "set_session_name"
    name: Annotated[str, _text("name")] = _Required


class GetSessionStatsCommand(Command):
    type: Literal["get_session_stats"] = "get_session_stats"


class ExportHtmlCommand(Command):
    type: Literal["export_html"] = "export_html"
    output_path: Annotated[str | None, _optional_text("outputPath", "must be a string")] = None


# ---------------------------------------------------------------------------- model and thinking


class SetModelCommand(Command):
    type: Literal["set_model"] = "set_model"
    provider: Annotated[str, _text("provider")] = _Required
    model_id: Annotated[str, _text("modelId")] = _Required


class CycleModelCommand(Command):
    type: Literal["cycle_model"] = "cycle_model"


class GetAvailableModelsCommand(Command):
    type: Literal["get_available_models"] = "get_available_models"


class SetThinkingLevelCommand(Command):
    type: Literal["set_thinking_level"] = "set_thinking_level"
    level: ThinkingLevel = _Required


class CycleThinkingLevelCommand(Command):
    type: Literal["cycle_thinking_level"] = "cycle_thinking_level"


class GetAvailableThinkingLevelsCommand(Command):
    type: Literal["get_available_thinking_levels"] = "get_available_thinking_levels"


class SetSteeringModeCommand(Command):
    type: Literal["set_steering_mode"] = "set_steering_mode"
    mode: QueueMode = _Required


class SetFollowUpModeCommand(Command):
    type: Literal["set_follow_up_mode"] = "set_follow_up_mode"
    mode: QueueMode = _Required


# ---------------------------------------------------------------------------- compaction and bash


class CompactCommand(Command):
    type: Literal["compact"] = "compact"
    custom_instructions: Annotated[str | None, _optional_text("customInstructions", "must be a string")] = (
        None
    )


class SetAutoCompactionCommand(Command):
    type: Literal["set_auto_compaction"] = "set_auto_compaction"
    enabled: Enabled = _Required


class SetAutoRetryCommand(Command):
    type: Literal["set_auto_retry"] = "set_auto_retry"
    enabled: Enabled = _Required


class AbortRetryCommand(Command):
    type: Literal["abort_retry"] = "abort_retry"


class BashCommand(Command):
    type: Literal["bash"] = "bash"
    command: Annotated[str, _text("command")] = _Required


class AbortBashCommand(Command):
    type: Literal["abort_bash"] = "abort_bash"


# ---------------------------------------------------------------------------- checkpoints


class GetCheckpointsCommand(Command):
    type: Literal["get_checkpoints"] = "get_checkpoints"


class GetCheckpointDiffCommand(Command):
    type: Literal["get_checkpoint_diff"] = "get_checkpoint_diff"
    checkpoint_id: Annotated[str, _text("checkpointId")] = _Required


class RestoreCheckpointCommand(Command):
    type: Literal["restore_checkpoint"] = "restore_checkpoint"
    target: str
    """``checkpointId``, or else ``entryId``."""
    mode: Literal["code", "conversation", "both"] = "both"
    force: Force = False

    @model_validator(mode="before")
    @classmethod
    def _target(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        target = data.get("checkpointId") or data.get("entryId")
        if not isinstance(target, str) or not target:
            raise _fail('"checkpointId" (or "entryId") must be a non-empty string')
        if data.get("mode", "both") not in ("code", "conversation", "both"):
            raise _fail('"mode" must be "code", "conversation" or "both"')
        return data | {"target": target}


class UndoCommand(Command):
    type: Literal["undo"] = "undo"
    force: Force = False


class RedoCommand(Command):
    type: Literal["redo"] = "redo"
    force: Force = False


RpcCommand = Annotated[
    PromptCommand
    | SteerCommand
    | FollowUpCommand
    | AbortCommand
    | GetCommandsCommand
    | ClearQueueCommand
    | GetStateCommand
    | GetMessagesCommand
    | GetLastAssistantTextCommand
    | NewSessionCommand
    | SwitchSessionCommand
    | ForkCommand
    | CloneCommand
    | GetEntriesCommand
    | GetTreeCommand
    | GetForkMessagesCommand
    | SetSessionNameCommand
    | GetSessionStatsCommand
    | ExportHtmlCommand
    | SetModelCommand
    | CycleModelCommand
    | GetAvailableModelsCommand
    | SetThinkingLevelCommand
    | CycleThinkingLevelCommand
    | GetAvailableThinkingLevelsCommand
    | SetSteeringModeCommand
    | SetFollowUpModeCommand
    | CompactCommand
    | SetAutoCompactionCommand
    | SetAutoRetryCommand
    | AbortRetryCommand
    | BashCommand
    | AbortBashCommand
    | GetCheckpointsCommand
    | GetCheckpointDiffCommand
    | RestoreCheckpointCommand
    | UndoCommand
    | RedoCommand,
    Field(discriminator="type"),
]
"""Every command a client may send (``extension_ui_response`` is an answer, not a command)."""

_ADAPTER: TypeAdapter[RpcCommand] = TypeAdapter(RpcCommand)

COMMAND_TYPES: frozenset[str] = frozenset(
    str(member.model_fields["type"].default) for member in get_args(get_args(RpcCommand)[0])
)
"""The ``type`` of every command; another ``type`` gets "Unknown command"."""


def parse_command(raw: dict[str, JsonValue]) -> RpcCommand:
    """The typed command of a decoded line whose ``type`` is in :data:`COMMAND_TYPES`.

    Raises :class:`CommandError` with the first complaint, in the fields' order.
    """
    try:
        return _ADAPTER.validate_python(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise CommandError(first["msg"]) from None
