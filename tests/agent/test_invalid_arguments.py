"""A tool call marked with ``arguments_error`` (final arguments not one JSON object) is refused."""

from __future__ import annotations

from pi_coder.agent import AgentContext
from pi_coder.ai.types import TextContent

from .script import AT, S0, TC, A, Script, ToolLog, U, cfg, make_echo, run, sigs


class Spy:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args: object) -> None:
        self.calls += 1


async def test_call_with_invalid_final_arguments_is_not_executed() -> None:
    """No prepare, validation, hooks or execute; an error result in Pi's wording; the loop goes on."""
    log = ToolLog()
    echo = make_echo(log)
    ctx = AgentContext(messages=[S0(echo)], tools=[echo])
    bad = TC("c1", "echo", {"value": "hel"})
    bad.arguments_error = "the arguments are not valid JSON (Unterminated string starting at: line 1 column 11 (char 10))"
    good = TC("c2", "echo", {"value": "fine"})
    before, after = Spy(), Spy()
    fn = Script(A([bad, good], "toolUse"), AT("done"))
    events, result = await run([U("go")], ctx, cfg(before_tool_call=before, after_tool_call=after), fn)

    assert log.calls == [("c2", "fine")] and before.calls == 1 and after.calls == 1
    assert "XE:c1:err" in sigs(events)
    refused = result[2]  # after the prompt and the assistant message
    assert refused.role == "toolResult" and refused.tool_call_id == "c1" and refused.is_error is True
    assert refused.content == [
        TextContent(
            text='Invalid arguments for tool "echo": the arguments are not valid JSON (Unterminated string '
            "starting at: line 1 column 11 (char 10)). The tool was not executed, because its arguments may "
            "be cut off. Re-issue the tool call with complete, valid JSON arguments."
        )
    ]
    assert fn.count == 2 and result[-1].role == "assistant"
