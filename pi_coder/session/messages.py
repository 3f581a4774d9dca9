"""Coding-agent message types and their conversion to LLM messages.

The agent transcript holds Pi's four LLM roles (``system``, ``user``, ``assistant``,
``toolResult``) plus the coding agent's own roles: ``bashExecution`` (user ``!`` commands),
``custom`` (extension messages), ``branchSummary`` and ``compactionSummary``. Their JSON form is
Pi's, so session files move between Pi and pi_coder. Messages with a role nobody here knows are
kept as :class:`UnknownMessage` with every field, so they survive a load/save round trip.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Literal, TypeAlias

from pydantic import Field, ValidationError
from pydantic_core import SchemaValidator

from pi_coder.ai.types import (
    AssistantMessage,
    Message,
    PiModel,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserContent,
    UserMessage,
    now_ms,
)
from pi_coder.json_types import JsonObject

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "AgentMessage",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "CustomMessage",
    "UnknownMessage",
    "bash_execution_to_text",
    "convert_to_llm",
    "message_to_dict",
    "parse_agent_message",
]

# Pi's exact wrappers (core/messages.ts): the model sees these strings, and prompts tuned on Pi
# expect them.
COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"


class BashExecutionMessage(PiModel):
    """A command the user ran with ``!`` (or ``!!``, which keeps it out of the LLM context)."""

    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str = ""
    exit_code: int | None = None
    """``None`` when the process was killed (cancelled) before it exited."""
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    """Temp file holding the untruncated output, when ``truncated``."""
    exclude_from_context: bool | None = None
    """True for ``!!`` commands: shown and stored, never sent to the model."""
    timestamp: int = Field(default_factory=now_ms)


class CustomMessage(PiModel):
    """A message injected by an extension; the model sees it as user content."""

    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | list[UserContent]
    display: bool = True
    details: object = None
    """Opaque to the session (the extension that sent the message reads it)."""
    timestamp: int = Field(default_factory=now_ms)


class BranchSummaryMessage(PiModel):
    """Summary of a branch the conversation came back from (built from a ``branch_summary`` entry)."""

    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str
    timestamp: int = Field(default_factory=now_ms)


class CompactionSummaryMessage(PiModel):
    """Summary of compacted history (built from a ``compaction`` entry)."""

    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int = 0
    timestamp: int = Field(default_factory=now_ms)


class UnknownMessage(PiModel):
    """A message whose role is not known here; every field is kept as it was read."""

    role: str

    def to_json_dict(self) -> JsonObject:
        # Unlike known messages, explicit nulls are data here and must survive the round trip.
        return self.model_dump(mode="json", by_alias=True)


AgentMessage: TypeAlias = (
    SystemMessage
    | UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
    | UnknownMessage
)

_BY_ROLE: dict[str, type[PiModel]] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "toolResult": ToolResultMessage,
    "system": SystemMessage,
    "bashExecution": BashExecutionMessage,
    "custom": CustomMessage,
    "branchSummary": BranchSummaryMessage,
    "compactionSummary": CompactionSummaryMessage,
}


_VALIDATORS: dict[str, Callable[[Mapping[str, object]], AgentMessage]] = {}


def parse_agent_message(data: Mapping[str, object], *, strict: bool = True) -> AgentMessage:
    """Build the message object for a JSON message dict (Pi's shape).

    Session format v2 called custom messages ``hookMessage``; they load as :class:`CustomMessage`.
    A role not known here gives an :class:`UnknownMessage` keeping every field.

    Args:
        data: The message as decoded from JSON (camelCase keys).
        strict: When false, a known role with invalid fields also becomes an
            :class:`UnknownMessage` instead of raising, so one damaged line cannot make a
            session unloadable (the message is then left out of the LLM context).

    Returns:
        The typed message.

    Raises:
        ValueError: ``data`` has no string ``role``, or (when ``strict``) fails validation.
    """
    role = data.get("role")
    if not isinstance(role, str):
        raise ValueError("message has no role")
    if role == "hookMessage":
        data = {**data, "role": "custom"}
        role = "custom"
    validate = _VALIDATORS.get(role)
    try:
        if validate is not None:
            return validate(data)
        cls = _BY_ROLE.get(role)
        if cls is None:
            return UnknownMessage.model_validate(data)
        message: AgentMessage = cls.__pydantic_validator__.validate_python(data)
        validator = cls.__pydantic_validator__  # built now (the models defer their schemas)
        if isinstance(validator, SchemaValidator):
            _VALIDATORS[role] = validator.validate_python
        return message
    except ValidationError as exc:
        if strict:
            raise ValueError(f"invalid {role} message: {exc.errors()[0].get('msg', exc)}") from exc
        return UnknownMessage.model_validate(data)


def message_to_dict(message: PiModel) -> JsonObject:
    """The JSON dict of a message (or content block) object."""
    return message.to_json_dict()


def bash_execution_to_text(message: BashExecutionMessage) -> str:
    """The user-message text the model sees for a ``!`` command (Pi's format)."""
    text = f"Ran `{message.command}`\n"
    text += f"```\n{message.output}\n```" if message.output else "(no output)"
    if message.cancelled:
        text += "\n\n(command cancelled)"
    elif message.exit_code is not None and message.exit_code != 0:
        text += f"\n\nCommand exited with code {message.exit_code}"
    if message.truncated and message.full_output_path:
        text += f"\n\n[Output truncated. Full output: {message.full_output_path}]"
    return text


def convert_to_llm(messages: Iterable[object]) -> list[Message]:
    """Map agent messages to the LLM messages a provider receives (Pi's ``convertToLlm``).

    ``system``/``user``/``assistant``/``toolResult`` pass through unchanged (same objects);
    ``bashExecution`` becomes user text unless ``excludeFromContext``; ``custom`` becomes a user
    message with its content; branch and compaction summaries become user text wrapped in Pi's
    ``<summary>`` prefix/suffix. Unknown roles are dropped.

    Args:
        messages: Agent messages in transcript order.

    Returns:
        A new list of LLM messages.
    """
    out: list[Message] = []
    for m in messages:
        if isinstance(m, UserMessage | AssistantMessage | ToolResultMessage | SystemMessage):
            out.append(m)
        elif isinstance(m, BashExecutionMessage):
            if not m.exclude_from_context:
                out.append(_user_text(bash_execution_to_text(m), m.timestamp))
        elif isinstance(m, CustomMessage):
            content = [TextContent(text=m.content)] if isinstance(m.content, str) else list(m.content)
            out.append(UserMessage(content=content, timestamp=m.timestamp))
        elif isinstance(m, BranchSummaryMessage):
            out.append(_user_text(BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX, m.timestamp))
        elif isinstance(m, CompactionSummaryMessage):
            text = COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX
            out.append(_user_text(text, m.timestamp))
    return out


def _user_text(text: str, timestamp: int) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)
