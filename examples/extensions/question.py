"""A ``question`` tool the model uses to ask the user to pick an answer (port of Pi's question.ts).

In the TUI the choice is a component of the extension's own (``ctx.ui.custom``): a Textual
``OptionList`` that takes the arrow keys and Enter. Elsewhere (RPC) the ``fallback`` asks with a
``select`` dialog; without any UI (print mode) the tool says nobody answered.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from pi_coder.extensions import AgentToolResult, ExtensionAPI, TextContent, ToolDefinition


class QuestionParams(BaseModel):
    question: str = Field(description="The question to ask the user")
    options: list[str] = Field(description="The answers the user can pick from")


def _picker(question: str, options: list[str]) -> Any:
    """The TUI component: imported only when the TUI draws it (textual is not loaded otherwise)."""
    from textual.widgets import OptionList

    class Picker(OptionList):
        def __init__(self, done: Any) -> None:
            super().__init__(*options)
            self.border_title = question
            self._done = done

        def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
            self._done(options[event.option_index])

    return Picker


def extension(pi: ExtensionAPI) -> None:
    async def execute(tool_call_id: str, params: QuestionParams, signal: Any, on_update: Any, ctx: Any) -> AgentToolResult:
        if not ctx.has_ui:
            return AgentToolResult(content=[TextContent(text="No user is present to answer (non-interactive run).")])

        async def fallback() -> str | None:
            return await ctx.ui.select(params.question, params.options)

        def build(done: Any, theme: Any) -> Any:
            return _picker(params.question, params.options)(done)

        answer = await ctx.ui.custom(build, fallback=fallback)
        text = f"User answered: {answer}" if answer else "User cancelled the question"
        return AgentToolResult(content=[TextContent(text=text)], details={"answer": answer})

    pi.register_tool(
        ToolDefinition(
            name="question",
            label="Question",
            description="Ask the user a multiple-choice question and get the chosen answer",
            parameters=QuestionParams,
            execute=execute,
        )
    )
