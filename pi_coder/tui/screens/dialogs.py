"""Small generic dialogs: confirm, text input, choice (used by "Summarize branch?", rename...)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from pi_coder.tui.screens.modal import DialogScreen
from pi_coder.tui.widgets.marked_list import MarkedOptionList

__all__ = ["ChoiceDialog", "ConfirmDialog", "InputDialog", "animations_enabled"]


def animations_enabled(app: Any) -> bool:
    """False when the app runs without animations (snapshots): no blinking cursors then."""
    value = getattr(app, "animations", True)
    return value if isinstance(value, bool) else True


class _Dialog(DialogScreen[Any]):
    CSS_PATH = "dialogs.tcss"

    def _panel_title(self, title: str) -> None:
        self.query_one("#dialog").border_title = title


class ConfirmDialog(_Dialog):
    """Yes or no: Enter/``y`` returns True, Esc/``n``/Ctrl+C returns False."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,y", "answer(True)", show=False, priority=True),
        Binding("escape,n,ctrl+c", "answer(False)", show=False, priority=True),
    ]

    def __init__(self, message: str, *, title: str = "Confirm", yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.message = message
        self.title_text = title
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(self.message), id="dialog-message")
            yield Static(Text(f"Enter/y: {self.yes} · Esc/n: {self.no}", style="dim"), id="dialog-hint")

    def on_mount(self) -> None:
        self._panel_title(self.title_text)

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class InputDialog(_Dialog):
    """One line of text: Enter returns it (stripped), Esc returns None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,ctrl+c", "cancel", show=False, priority=True),
    ]

    def __init__(
        self,
        title: str,
        *,
        value: str = "",
        placeholder: str = "",
        message: str = "",
        hint: str = "Enter: save · Esc: cancel",
        password: bool = False,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.password = password
        self.value = value
        self.placeholder = placeholder
        self.message = message
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            if self.message:
                yield Static(Text(self.message), id="dialog-message")
            yield Input(value=self.value, placeholder=self.placeholder, password=self.password, id="dialog-input")
            yield Static(Text(self.hint, style="dim"), id="dialog-hint")

    def on_mount(self) -> None:
        self._panel_title(self.title_text)
        field = self.query_one("#dialog-input", Input)
        field.cursor_blink = animations_enabled(self.app)
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class ChoiceDialog(_Dialog):
    """Pick one of ``choices`` (value, label); Esc returns None.

    Args:
        title: The panel title.
        choices: ``(value, label)`` pairs.
        message: A line above the choices.
        initial: The value highlighted first.
        on_highlight: Called with a value whenever the highlight moves (live previews).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,ctrl+c", "cancel", show=False, priority=True),
    ]

    def __init__(
        self,
        title: str,
        choices: Sequence[tuple[str, str]],
        *,
        message: str = "",
        initial: str | None = None,
        on_highlight: Callable[[str], Any] | None = None,
        hint: str = "↑↓ move · Enter select · Esc cancel",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.choices = list(choices)
        self.message = message
        self.initial = initial
        self.on_highlight = on_highlight
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            if self.message:
                yield Static(Text(self.message), id="dialog-message")
            yield MarkedOptionList(*(Option(label, id=value) for value, label in self.choices), id="dialog-choices")
            yield Static(Text(self.hint, style="dim"), id="dialog-hint")

    def on_mount(self) -> None:
        self._panel_title(self.title_text)
        options = self.query_one("#dialog-choices", OptionList)
        values = [value for value, _ in self.choices]
        if self.initial in values:
            options.highlighted = values.index(self.initial)
        options.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if self.on_highlight is not None and event.option.id is not None:
            self.on_highlight(event.option.id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
