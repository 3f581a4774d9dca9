"""Elicitation (docs/mcp.md#elicitation): a server's ``elicitation/create`` request put to the user.

A form request carries a message and a flat ``requestedSchema`` (strings, numbers, integers,
booleans, single-choice enums, multi-choice arrays); :func:`fields` reads it and
:meth:`Field.parse` checks one answer. A URL request asks the user to open a page. How the
user is asked depends on the mode: the TUI shows one form (:class:`FormUI`), RPC mode asks one
dialog per field through the extension UI (:func:`ask_with_dialogs`), and without a UI
(``pi -p``) the request is declined. The answer is ``{"action": "accept"|"decline"|"cancel",
"content": {...}}``. No SDK here: requests and answers are JSON.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["DECLINE", "Dialogs", "ElicitHandler", "Field", "FormUI", "ask_with_dialogs", "fields", "title_of"]

Answer = dict[str, Any]
ElicitHandler = Callable[[str, dict[str, Any]], Awaitable[Answer]]
"""``handler(server name, request params as JSON)`` -> the answer."""

DECLINE: Answer = {"action": "decline"}

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(slots=True)
class Field:
    """One property of a form request."""

    name: str
    kind: str
    """string, number, integer, boolean, choice or choices."""
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    options: list[tuple[str, str]] = field(default_factory=list)
    """(value, label) of a choice or choices field."""
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None

    def label(self) -> str:
        return self.title + ("" if self.required else " (optional)")

    def parse(self, text: str) -> Any:
        """The value of the typed ``text`` (labels for choices, comma-separated for choices); None: left empty.

        Raises:
            ValueError: Not a valid value (the message says what is expected).
        """
        text = text.strip()
        if not text:
            if self.default is not None:
                return self.default
            if self.required:
                raise ValueError(f"{self.title} is required")
            return None
        if self.kind == "boolean":
            lowered = text.lower()
            if lowered in ("y", "yes", "true", "1", "on"):
                return True
            if lowered in ("n", "no", "false", "0", "off"):
                return False
            raise ValueError(f"{self.title}: answer yes or no")
        if self.kind in ("number", "integer"):
            try:
                number: float | int = int(text) if self.kind == "integer" else float(text)
            except ValueError:
                raise ValueError(f"{self.title}: give {'a whole number' if self.kind == 'integer' else 'a number'}") from None
            if self.minimum is not None and number < self.minimum:
                raise ValueError(f"{self.title}: at least {self.minimum:g}")
            if self.maximum is not None and number > self.maximum:
                raise ValueError(f"{self.title}: at most {self.maximum:g}")
            return number
        if self.kind == "choice":
            return self._option(text)
        if self.kind == "choices":
            return [self._option(part) for part in text.split(",") if part.strip()]
        if self.min_length is not None and len(text) < self.min_length:
            raise ValueError(f"{self.title}: at least {self.min_length} characters")
        if self.max_length is not None and len(text) > self.max_length:
            raise ValueError(f"{self.title}: at most {self.max_length} characters")
        if self.format == "email" and not _EMAIL.match(text):
            raise ValueError(f"{self.title}: give an email address")
        if self.format == "date" and not _DATE.match(text):
            raise ValueError(f"{self.title}: give a date as YYYY-MM-DD")
        if self.format == "uri" and "://" not in text:
            raise ValueError(f"{self.title}: give a URI")
        return text

    def _option(self, text: str) -> str:
        text = text.strip()
        for value, label in self.options:
            if text in (value, label):
                return value
        raise ValueError(f"{self.title}: one of {', '.join(label for _, label in self.options)}")


def _options(prop: dict[str, Any]) -> list[tuple[str, str]]:
    if isinstance(prop.get("oneOf"), list):
        return [(str(o.get("const")), str(o.get("title") or o.get("const"))) for o in prop["oneOf"] if isinstance(o, dict)]
    values = prop.get("enum") or []
    names = prop.get("enumNames") or []
    return [(str(v), str(names[i]) if i < len(names) else str(v)) for i, v in enumerate(values)]


def fields(schema: dict[str, Any] | None) -> list[Field]:
    """The fields of a form request's ``requestedSchema``, in their order."""
    schema = schema or {}
    required = set(schema.get("required") or [])
    out: list[Field] = []
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            continue
        kind = str(prop.get("type", "string"))
        options: list[tuple[str, str]] = []
        if kind == "array":
            items = prop.get("items") if isinstance(prop.get("items"), dict) else {}
            options, kind = _options(items or {}), "choices"
            if not options and isinstance(items, dict) and isinstance(items.get("anyOf"), list):
                options = _options({"oneOf": items["anyOf"]})
        elif "enum" in prop or "oneOf" in prop:
            options, kind = _options(prop), "choice"
        out.append(
            Field(
                name=str(name),
                kind=kind,
                title=str(prop.get("title") or name),
                description=str(prop.get("description") or ""),
                required=name in required,
                default=prop.get("default"),
                options=options,
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
                min_length=prop.get("minLength"),
                max_length=prop.get("maxLength"),
                format=prop.get("format"),
            )
        )
    return out


def title_of(server: str, request: dict[str, Any]) -> str:
    return f'MCP server "{server}" asks: {request.get("message", "")}'.strip()


class Dialogs(Protocol):
    """The extension UI's dialogs (``ctx.ui``), as RPC mode offers them."""

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None) -> str | None: ...

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None: ...


@runtime_checkable
class FormUI(Protocol):
    """A UI that shows a whole elicitation as one form (the TUI)."""

    async def elicitation_form(self, server: str, request: dict[str, Any]) -> Answer: ...


ANSWER, DECLINE_LABEL = "Answer", "Decline"
OPEN, SKIP = "Open the page", "(skip)"


async def ask_with_dialogs(ui: Dialogs, server: str, request: dict[str, Any]) -> Answer:
    """Ask through one dialog per field: first answer or decline, then each field (invalid answers ask again).

    Dismissing any dialog cancels the request.
    """
    title = title_of(server, request)
    if request.get("mode") == "url":
        choice = await ui.select(f"{title}\n{request.get('url', '')}", [OPEN, DECLINE_LABEL])
        if choice is None:
            return {"action": "cancel"}
        return {"action": "accept"} if choice == OPEN else DECLINE
    form = fields(request.get("requestedSchema"))
    choice = await ui.select(title, [ANSWER, DECLINE_LABEL])
    if choice is None:
        return {"action": "cancel"}
    if choice != ANSWER:
        return DECLINE
    content: dict[str, Any] = {}
    for item in form:
        problem = ""
        while True:
            prompt = item.label() + (f" - {item.description}" if item.description else "") + (f"\n{problem}" if problem else "")
            if item.kind in ("boolean", "choice"):
                labels = ["yes", "no"] if item.kind == "boolean" else [label for _, label in item.options]
                text = await ui.select(prompt, labels if item.required else [*labels, SKIP])
                text = "" if text == SKIP else text
            else:
                hint = ", ".join(label for _, label in item.options) if item.kind == "choices" else str(item.default or "")
                text = await ui.input(prompt, hint)
            if text is None:
                return {"action": "cancel"}
            try:
                value = item.parse(text)
            except ValueError as exc:
                problem = str(exc)
                continue
            if value is not None:
                content[item.name] = value
            break
    return {"action": "accept", "content": content}
