"""An MCP server's ``elicitation/create`` as one form in the TUI (docs/mcp.md#elicitation).

One row per field of the request (a text input, a choice list, or a checkbox for yes/no); Enter
goes to the next field and submits on the last, Ctrl+S submits, Ctrl+D declines, Esc cancels.
Answers are checked by :meth:`pi_coder.mcp.elicit.Field.parse`; a wrong one is named under the
form and nothing is sent. A URL request shows the page and offers to open it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Select, Static

from pi_coder.mcp.elicit import Field, fields, title_of
from pi_coder.tui.key_guard import KeyGuard

if TYPE_CHECKING:
    from textual.app import ComposeResult

__all__ = ["ElicitationScreen", "open_page"]


async def open_page(url: str) -> None:
    """Open ``url`` in a browser (a URL-mode request the user accepted), in a thread."""
    import asyncio

    from pi_coder.mcp.oauth import show_in_browser

    await asyncio.to_thread(show_in_browser, url)


HINTS = {"integer": "a whole number", "number": "a number"}


class ElicitationScreen(KeyGuard, ModalScreen[dict[str, Any]]):
    """Dismissed with the answer: ``{"action": ..., "content": ...}``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer('cancel')", "Cancel", show=False, priority=True),
        Binding("ctrl+s", "answer('accept')", "Submit", show=False, priority=True),
        Binding("ctrl+d", "answer('decline')", "Decline", show=False, priority=True),
    ]
    DEFAULT_CSS = """
    ElicitationScreen { align: center middle; }
    #elicit { width: 80; max-height: 90%; height: auto; border: round $accent; padding: 0 1; }
    #elicit .elicit-label { margin: 1 0 0 0; }
    #elicit-error { color: $error; height: auto; }
    #elicit-buttons { height: auto; margin: 1 0 0 0; }
    #elicit-buttons Button { margin: 0 1 0 0; }
    """

    def __init__(self, server: str, request: dict[str, Any]) -> None:
        super().__init__()
        self.server = server
        self.request = request
        self.url_mode = request.get("mode") == "url"
        self.fields: list[Field] = [] if self.url_mode else fields(request.get("requestedSchema"))

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="elicit"):
            yield Static(Text(title_of(self.server, self.request), style="bold"))
            if self.url_mode:
                yield Static(Text(str(self.request.get("url", "")), style="underline"), id="elicit-url")
            for index, item in enumerate(self.fields):
                label = item.label() + (f" - {item.description}" if item.description else "")
                if item.kind == "boolean" and item.required:
                    yield Checkbox(label, value=bool(item.default), id=f"field-{index}")
                    continue
                yield Static(label, classes="elicit-label")
                if item.kind in ("choice", "boolean"):
                    options = [("yes", "yes"), ("no", "no")] if item.kind == "boolean" else [(lab, val) for val, lab in item.options]
                    initial = item.default if item.kind == "choice" and item.default is not None else Select.NULL
                    yield Select(options, value=initial, allow_blank=True, id=f"field-{index}")
                else:
                    hint = ", ".join(lab for _, lab in item.options) if item.kind == "choices" else HINTS.get(item.kind, "")
                    value = "" if item.default is None else str(item.default)
                    yield Input(value=value, placeholder=hint, id=f"field-{index}")
            yield Static("", id="elicit-error")
            with Horizontal(id="elicit-buttons"):
                yield Button("Open the page" if self.url_mode else "Submit", id="accept", variant="primary")
                yield Button("Decline", id="decline")
                yield Button("Cancel", id="cancel")
            yield Static(Text("Ctrl+S submit · Ctrl+D decline · Esc cancel", style="dim"))

    def on_mount(self) -> None:
        self.guard_keys(self)
        first = self.query("#elicit Input, #elicit Select, #elicit Checkbox")
        (first.first() if first else self.query_one("#accept", Button)).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        inputs = [w for w in self.query("#elicit Input, #elicit Select, #elicit Checkbox")]
        if event.input is inputs[-1]:
            self.action_answer("accept")
        else:
            self.focus_next()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_answer(str(event.button.id))

    def _text(self, index: int, item: Field) -> str:
        widget = self.query_one(f"#field-{index}")
        if isinstance(widget, Checkbox):
            return "yes" if widget.value else "no"
        if isinstance(widget, Select):
            return "" if widget.value is Select.NULL else str(widget.value)
        assert isinstance(widget, Input)
        return widget.value

    def action_answer(self, action: str) -> None:
        if action != "accept":
            self.dismiss({"action": action})
            return
        if self.url_mode:
            self.dismiss({"action": "accept"})
            return
        content: dict[str, Any] = {}
        for index, item in enumerate(self.fields):
            try:
                value = item.parse(self._text(index, item))
            except ValueError as exc:
                self.query_one("#elicit-error", Static).update(str(exc))
                self.query_one(f"#field-{index}").focus()
                return
            if value is not None:
                content[item.name] = value
        self.dismiss({"action": "accept", "content": content})
