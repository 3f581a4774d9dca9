"""The ``toolChoice`` compat switch (models.toml), shared by both HTTP providers.

``compat = { tool_choice = "required" }`` (or ``toolChoice``) sends the API's ``tool_choice``
field: ``"auto"``, ``"none"``, ``"required"`` (Anthropic: ``"any"``; either spelling works for
both APIs) or the name of one tool, which forces that tool. It applies only to a request that
answers a user message (the turn's first model call) and only when tools are declared: a
request that follows tool results keeps the server's default, so the agent can finish instead
of being forced into another tool call forever. Made for small local models that rarely choose
a tool on their own (and for tests against a real server).
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_coder.ai.types import Message, Model
from pi_coder.json_types import JsonValue

__all__ = ["forced_tool_choice"]

_REQUIRED = ("required", "any")


def _configured(model: Model) -> str | None:
    compat = model.compat or {}
    value = compat.get("toolChoice", compat.get("tool_choice"))
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()


def _answers_user(messages: Sequence[Message]) -> bool:
    for message in reversed(messages):
        role = message.role
        if role == "system":
            continue
        return role == "user"
    return False


def forced_tool_choice(model: Model, messages: Sequence[Message], tool_names: list[str], api: str) -> JsonValue:
    """The ``tool_choice`` value to send for this request, or ``None`` to send nothing.

    Args:
        model: The model; its ``compat`` holds ``toolChoice`` / ``tool_choice``.
        messages: The request's transcript (pi_coder messages, system messages included).
        tool_names: Names of the declared tools.
        api: ``"openai-completions"`` or ``"anthropic-messages"`` (the wire shape).

    Returns:
        The wire value, or ``None``.
    """
    choice = _configured(model)
    if choice is None or not tool_names or not _answers_user(messages):
        return None
    anthropic = api == "anthropic-messages"
    lowered = choice.lower()
    if lowered in _REQUIRED:
        return {"type": "any"} if anthropic else "required"
    if lowered in ("auto", "none"):
        return {"type": lowered} if anthropic else lowered
    if choice not in tool_names:
        return None  # a tool that is not declared in this request: forcing it would be a 400
    if anthropic:
        return {"type": "tool", "name": choice}
    return {"type": "function", "function": {"name": choice}}
