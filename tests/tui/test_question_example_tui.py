"""``examples/extensions/question.py`` in the TUI: its Textual picker (``ctx.ui.custom``) takes the
arrow keys and Enter, and the choice goes back to the model as the tool result (pilot)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from pi_coder.ai.providers.faux import faux_message, faux_tool_call
from pi_coder.tui.extension_extras import CustomScreen
from tests.tui.helpers import type_text, wait_until
from tests.tui.screens_support import make_app_with_extensions

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "question.py"


def _tool_results(session) -> list[str]:
    return [
        block.text
        for message in session.agent.state.messages
        if getattr(message, "role", None) == "toolResult"
        for block in message.content
        if getattr(block, "type", None) == "text"
    ]


async def test_question_picker_takes_arrow_keys_and_enter(make_session, project: Path) -> None:
    session, _ = make_session(
        [
            faux_message(faux_tool_call("question", {"question": "Which colour?", "options": ["red", "blue", "green"]})),
            "blue it is",
        ]
    )
    app = make_app_with_extensions(session, project, [str(EXAMPLE)])
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "pick a colour")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CustomScreen), what="the picker")
        picker = app.screen.query_one(OptionList)
        assert picker.border_title == "Which colour?"
        assert [str(picker.get_option_at_index(i).prompt) for i in range(picker.option_count)] == ["red", "blue", "green"]
        assert app.focused is picker
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: "User answered: blue" in _tool_results(session), what="the tool result")
        await wait_until(pilot, lambda: not isinstance(app.screen, CustomScreen), what="the picker closed")
