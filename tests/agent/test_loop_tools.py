"""Spec agent-core 4.2: the low-level loop with tools."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from pi_coder.agent import AgentContext, AgentToolResult, BeforeToolCallResult
from pi_coder.ai.types import TextContent

from .script import (
    AC,
    ACS,
    AT,
    S0,
    TC,
    A,
    Poll,
    Script,
    ToolLog,
    U,
    cfg,
    make_echo,
    make_tool,
    of_type,
    run,
    sigs,
    texts,
)

TRUNCATED = (
    'Tool call "echo" was not executed: the response hit the output token limit, so its arguments may '
    "be truncated. Re-issue the tool call with complete arguments."
)


def echo_ctx(log: ToolLog | None = None, **kw: Any) -> tuple[AgentContext, Any]:
    echo = make_echo(log, **kw)
    return AgentContext(messages=[S0(echo)], tools=[echo]), echo


class Spy:
    """Records calls; returns ``result`` (or calls it with the arguments if callable)."""

    def __init__(self, result: Any = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.result = result

    def __call__(self, *args: Any) -> Any:
        self.calls.append(args)
        return self.result(*args) if callable(self.result) else self.result


async def test_c08_one_tool_round_trip() -> None:
    """A tool call, its result, and the follow-up request: exact events, R1 shape, polls 4/1."""
    log = ToolLog()
    ctx, echo = echo_ctx(log)
    s0 = ctx.messages[0]
    u, a1, a2 = U("go"), AC("tool-1", "echo", {"value": "hello"}), AT("done")
    fn = Script(a1, a2)
    steer, follow = Poll(), Poll()

    events, result = await run([u], ctx, cfg(get_steering_messages=steer, get_follow_up_messages=follow), fn)

    assert sigs(events) == [
        "AS", "TS", "MS:user", "ME:user", "MS:assistant", "ME:assistant",
        "XS:tool-1", "XE:tool-1:ok", "MS:toolResult", "ME:toolResult", "TE",
        "TS", "MS:assistant", "ME:assistant", "TE", "AE",
    ]  # fmt: skip
    xs, xe = events[6], events[7]
    assert (xs.tool_name, xs.args) == ("echo", {"value": "hello"})
    assert xe.tool_name == "echo" and xe.is_error is False
    assert xe.result.content == [TextContent(text="echoed: hello")] and xe.result.details == {"value": "hello"}
    r1 = events[8].message
    assert events[9].message is r1
    assert r1.to_json_dict() == {
        "role": "toolResult",
        "toolCallId": "tool-1",
        "toolName": "echo",
        "content": [{"type": "text", "text": "echoed: hello"}],
        "details": {"value": "hello"},
        "isError": False,
        "timestamp": r1.timestamp,
    }
    assert events[10].message is a1 and events[10].tool_results == [r1] and events[10].tool_results[0] is r1
    assert result == [u, a1, r1, a2] and result[2] is r1
    assert log.calls == [("tool-1", "hello")]
    assert fn.calls[1].messages == [s0, u, a1, r1]
    assert (steer.count, follow.count) == (4, 1)


async def test_c10_length_truncated_calls_fail_and_loop_continues() -> None:
    """A length stop fails every call without hooks or execution; the loop goes on."""
    log = ToolLog()
    ctx, _ = echo_ctx(log)
    before, after = Spy(), Spy()
    fn = Script(A([TC("tool-1", "echo", {"value": "hel"})], "length"), AT("done"))
    events, result = await run([U("go")], ctx, cfg(before_tool_call=before, after_tool_call=after), fn)

    assert log.calls == [] and before.calls == [] and after.calls == []
    assert sigs(events)[6:] == [
        "XS:tool-1", "XE:tool-1:err", "MS:toolResult", "ME:toolResult", "TE",
        "TS", "MS:assistant", "ME:assistant", "TE", "AE",
    ]  # fmt: skip
    assert events[6].args == {"value": "hel"}
    assert events[7].result.content == [TextContent(text=TRUNCATED)] and events[7].result.details == {}
    assert events[8].message.is_error is True
    assert fn.count == 2 and result[-1].role == "assistant"


async def test_c12_length_without_tool_calls_ends_the_run() -> None:
    fn = Script(A([TextContent(text="partial")], "length"))
    events, result = await run([U("go")], AgentContext(messages=[]), cfg(), fn)
    assert fn.count == 1
    assert sigs(events)[-4:] == ["MS:assistant", "ME:assistant", "TE", "AE"]


async def test_c13_tool_use_without_tool_call_blocks_does_not_continue() -> None:
    fn = Script(A([TextContent(text="hmm")], "toolUse"))
    events, result = await run([U("go")], AgentContext(messages=[]), cfg(), fn)
    assert fn.count == 1 and sigs(events)[-2:] == ["TE", "AE"]


async def test_stop_message_with_tool_calls_runs_them() -> None:
    """A stop reason of "stop" does not prevent tool blocks from running (3.4)."""
    log = ToolLog()
    ctx, _ = echo_ctx(log)
    fn = Script(A([TC("c1", "echo", {"value": "x"})], "stop"), AT("ok"))
    await run([U("go")], ctx, cfg(), fn)
    assert log.calls == [("c1", "x")] and fn.count == 2


async def test_c15_unknown_tool() -> None:
    ctx, _ = echo_ctx()
    before = Spy()
    fn = Script(AC("c1", "nope", {"a": 1}), AT("ok"))
    events, result = await run([U("go")], ctx, cfg(before_tool_call=before), fn)
    xs, xe, ms = events[6], events[7], events[8]
    assert (sig_of(xs), xs.tool_name, xs.args) == ("XS:c1", "nope", {"a": 1})
    assert sig_of(xe) == "XE:c1:err"
    assert xe.result.content == [TextContent(text="Tool nope not found")] and xe.result.details == {}
    assert ms.message.tool_name == "nope" and ms.message.is_error is True
    assert before.calls == [] and fn.count == 2


def sig_of(event: Any) -> str:
    return sigs([event])[0]


async def test_c16_schema_validation_failure() -> None:
    log = ToolLog()
    ctx, _ = echo_ctx(log)
    fn = Script(AC("c1", "echo", {}), AT("ok"))
    events, result = await run([U("go")], ctx, cfg(), fn)
    r1 = result[2]
    assert log.calls == [] and r1.is_error is True
    text = texts(r1)[0]
    assert text.startswith('Validation failed for tool "echo":\n  - value: ')
    assert text.endswith("\n\nReceived arguments:\n{}")
    assert fn.count == 2


async def test_validation_coerces_types_and_reports_every_error() -> None:
    """Coercion: "5" becomes 5; every error gets a line; arguments are shown indented."""

    class Params(BaseModel):
        count: int
        name: str

    got: list[Any] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        got.append(params)
        return AgentToolResult(content=[TextContent(text="ok")])

    tool = make_tool("t", execute, Params)
    ctx = AgentContext(messages=[S0(tool)], tools=[tool])
    raw = {"count": "5", "name": "n"}
    fn = Script(ACS(("c1", "t", raw), ("c2", "t", {"count": "x"})), AT("ok"))
    events, result = await run([U("go")], ctx, cfg(), fn)
    assert got[0].count == 5 and raw == {"count": "5", "name": "n"}
    error = texts(result[3])[0]
    assert "  - count: " in error and "  - name: Field required" in error
    assert error.endswith('Received arguments:\n{\n  "count": "x"\n}')


async def test_c18_before_tool_call_mutations_run_without_revalidation() -> None:
    log = ToolLog()
    ctx, _ = echo_ctx(log)

    def before(context: Any, signal: Any) -> None:
        context.args.value = 123

    fn = Script(AC("tool-1", "echo", {"value": "hello"}), AT("done"))
    events, result = await run([U("go")], ctx, cfg(before_tool_call=before), fn)
    assert log.calls == [("tool-1", 123)]
    assert result[2].is_error is False


async def test_c20_prepare_arguments_shim() -> None:
    class Edit(BaseModel):
        oldText: str
        newText: str

    class EditParams(BaseModel):
        edits: list[Edit]

    def prepare(raw: Any) -> Any:
        if "oldText" in raw:
            return {"edits": [{"oldText": raw["oldText"], "newText": raw["newText"]}]}
        return raw

    got: list[Any] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        got.append(params)
        return AgentToolResult(content=[TextContent(text="edited")])

    tool = make_tool("edit", execute, EditParams, prepare_arguments=prepare)
    ctx = AgentContext(messages=[S0(tool)], tools=[tool])
    a1 = AC("tool-1", "edit", {"oldText": "before", "newText": "after"})
    events, result = await run([U("go")], ctx, cfg(), Script(a1, AT("done")))
    assert [e.model_dump() for e in got[0].edits] == [{"oldText": "before", "newText": "after"}]
    assert of_type(events, "tool_execution_start")[0].args == {"oldText": "before", "newText": "after"}
    assert a1.content[0].arguments == {"oldText": "before", "newText": "after"}


async def test_prepare_arguments_raising_becomes_error_result() -> None:
    def prepare(raw: Any) -> Any:
        raise ValueError("cannot prepare")

    log = ToolLog()
    echo = make_echo(log, prepare_arguments=prepare)
    ctx = AgentContext(messages=[S0(echo)], tools=[echo])
    events, result = await run([U("go")], ctx, cfg(), Script(AC("c1", "echo", {"value": "x"}), AT("ok")))
    assert log.calls == [] and texts(result[2]) == ["cannot prepare"] and result[2].is_error


async def test_c22_blocked_call_default_and_custom_reason() -> None:
    for decision, text in (({"block": True}, "Tool execution was blocked"), (BeforeToolCallResult(block=True, reason="nope"), "nope")):
        log = ToolLog()
        ctx, _ = echo_ctx(log)
        after = Spy()
        fn = Script(AC("c1", "echo", {"value": "x"}), AT("ok"))
        events, result = await run([U("go")], ctx, cfg(before_tool_call=lambda c, s, d=decision: d, after_tool_call=after), fn)
        r1 = result[2]
        assert texts(r1) == [text] and r1.is_error is True
        assert log.calls == [] and after.calls == [] and fn.count == 2


async def test_c23_blocked_and_terminate_stops_the_run() -> None:
    log = ToolLog()
    ctx, _ = echo_ctx(log)

    def before(context: Any, signal: Any) -> BeforeToolCallResult:
        return BeforeToolCallResult(block=True, reason="Blocked by policy", terminate=True)

    fn = Script(AC("tool-1", "echo", {"value": "x"}), AT("should not run"))
    events, result = await run([U("go")], ctx, cfg(before_tool_call=before), fn)
    assert fn.count == 1 and log.calls == []
    assert result[2].is_error is True and "Blocked by policy" in texts(result[2])
    assert [m.role for m in result] == ["user", "assistant", "toolResult"]


async def test_c25_all_results_terminate_no_follow_up_request() -> None:
    ctx, _ = echo_ctx(terminate=lambda value: True)
    fn = Script(AC("c1", "echo", {"value": "x"}))
    events, result = await run([U("go")], ctx, cfg(), fn)
    assert fn.count == 1 and len(of_type(events, "turn_end")) == 1
    assert [m.role for m in result] == ["user", "assistant", "toolResult"]
    assert "terminate" not in result[2].to_json_dict() and not hasattr(result[2], "terminate")
    assert of_type(events, "tool_execution_end")[0].result.terminate is True


async def test_c26_partial_terminate_in_a_parallel_batch_continues() -> None:
    ctx, _ = echo_ctx(terminate=lambda value: value == "first")
    fn = Script(ACS(("c1", "echo", {"value": "first"}), ("c2", "echo", {"value": "second"})), AT("ok"))
    events, result = await run([U("go")], ctx, cfg(), fn)
    assert fn.count == 2
    assert [m.role for m in result] == ["user", "assistant", "toolResult", "toolResult", "assistant"]


async def test_c27_after_tool_call_can_set_terminate() -> None:
    ctx, _ = echo_ctx()
    fn = Script(AC("c1", "echo", {"value": "x"}))
    events, result = await run([U("go")], ctx, cfg(after_tool_call=lambda c, s: {"terminate": True}), fn)
    assert fn.count == 1


async def test_after_tool_call_overrides_fields_and_raising_hook() -> None:
    """Provided fields replace the originals; a raising hook gives an error and drops terminate."""
    ctx, _ = echo_ctx(terminate=lambda value: True)
    over = {"content": [TextContent(text="replaced")], "is_error": True, "details": None}
    events, result = await run([U("go")], ctx, cfg(after_tool_call=lambda c, s: over), Script(AC("c1", "echo", {"value": "x"})))
    r1 = result[2]
    assert texts(r1) == ["replaced"] and r1.is_error is True and r1.details == {"value": "x"}

    def boom(context: Any, signal: Any) -> None:
        raise RuntimeError("after exploded")

    ctx, _ = echo_ctx(terminate=lambda value: True)
    fn = Script(AC("c1", "echo", {"value": "x"}), AT("continued"))
    events, result = await run([U("go")], ctx, cfg(after_tool_call=boom), fn)
    assert texts(result[2]) == ["after exploded"] and result[2].is_error and result[2].details == {}
    assert fn.count == 2, "terminate was dropped with the failed hook"


async def test_c29_tool_raising() -> None:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        raise RuntimeError("disk on fire")

    tool = make_tool("burn", execute)
    ctx = AgentContext(messages=[S0(tool)], tools=[tool])
    after = Spy()
    fn = Script(AC("c1", "burn", {"value": "x"}), AT("ok"))
    events, result = await run([U("go")], ctx, cfg(after_tool_call=after), fn)
    assert len(after.calls) == 1
    hook_ctx = after.calls[0][0]
    assert hook_ctx.is_error is True and hook_ctx.result.content == [TextContent(text="disk on fire")]
    r1 = result[2]
    assert r1.is_error is True and texts(r1) == ["disk on fire"] and r1.details == {}
    assert fn.count == 2


async def test_c31_parallel_completion_order_vs_source_order() -> None:
    release = asyncio.Event()
    log: list[str] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        log.append(f"start:{params.value}")
        if params.value == "first":
            await release.wait()
        log.append(f"end:{params.value}")
        return AgentToolResult(content=[TextContent(text=params.value)])

    tool = make_tool("echo", execute)
    ctx = AgentContext(messages=[S0(tool)], tools=[tool])

    def respond_first(stream: Any, call: Any) -> None:
        from .script import push_final

        push_final(stream, ACS(("tool-1", "echo", {"value": "first"}), ("tool-2", "echo", {"value": "second"})))
        asyncio.get_running_loop().call_later(0.02, release.set)

    events, result = await run([U("go")], ctx, cfg(), Script(respond_first, AT("done")))
    assert log.index("start:second") < log.index("end:first")
    assert [e.tool_call_id for e in of_type(events, "tool_execution_end")] == ["tool-2", "tool-1"]
    ends = [e.message.tool_call_id for e in of_type(events, "message_end") if e.message.role == "toolResult"]
    assert ends == ["tool-1", "tool-2"]
    assert [r.tool_call_id for r in of_type(events, "turn_end")[0].tool_results] == ["tool-1", "tool-2"]
    names = sigs(events)
    assert max(i for i, s in enumerate(names) if s.startswith("XE")) < names.index("MS:toolResult")


async def test_c33_a_sequential_tool_forces_a_sequential_batch() -> None:
    log: list[str] = []

    async def slow(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        log.append(f"slow:{params.value}")
        await asyncio.sleep(0.01)
        log.append("slow:done")
        return AgentToolResult(content=[TextContent(text="s")])

    async def fast(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        log.append(f"fast:{params.value}")
        return AgentToolResult(content=[TextContent(text="f")])

    tools = [make_tool("slow", slow, execution_mode="sequential"), make_tool("fast", fast)]
    ctx = AgentContext(messages=[S0(*tools)], tools=tools)
    fn = Script(ACS(("1", "slow", {"value": "a"}), ("2", "fast", {"value": "b"})), AT("ok"))
    events, result = await run([U("go")], ctx, cfg(), fn)
    assert log == ["slow:a", "slow:done", "fast:b"]
    assert sigs(events)[6:15] == [
        "XS:1", "XE:1:ok", "MS:toolResult", "ME:toolResult", "XS:2", "XE:2:ok", "MS:toolResult", "ME:toolResult", "TE",
    ]  # fmt: skip


async def test_c34_config_level_sequential() -> None:
    active = 0
    overlap = False

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        nonlocal active, overlap
        active += 1
        overlap = overlap or active > 1
        await asyncio.sleep(0.005)
        active -= 1
        return AgentToolResult(content=[TextContent(text=params.value)])

    tool = make_tool("echo", execute)
    ctx = AgentContext(messages=[S0(tool)], tools=[tool])
    fn = Script(ACS(("1", "echo", {"value": "a"}), ("2", "echo", {"value": "b"})), AT("ok"))
    events, result = await run([U("go")], ctx, cfg(tool_execution="sequential"), fn)
    assert not overlap
    assert sigs(events)[6:15] == [
        "XS:1", "XE:1:ok", "MS:toolResult", "ME:toolResult", "XS:2", "XE:2:ok", "MS:toolResult", "ME:toolResult", "TE",
    ]  # fmt: skip


async def test_c35_all_parallel_tools_run_concurrently() -> None:
    log: list[str] = []
    gate = asyncio.Event()

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        log.append(f"start:{params.value}")
        if params.value == "a":
            await asyncio.wait_for(gate.wait(), 5)
        else:
            gate.set()
        log.append(f"end:{params.value}")
        return AgentToolResult(content=[TextContent(text=params.value)])

    tool = make_tool("echo", execute, execution_mode="parallel")
    ctx = AgentContext(messages=[S0(tool)], tools=[tool])
    fn = Script(ACS(("1", "echo", {"value": "a"}), ("2", "echo", {"value": "b"})), AT("ok"))
    await run([U("go")], ctx, cfg(), fn)
    assert log.index("start:b") < log.index("end:a")


async def test_tool_updates_are_emitted_while_running_only() -> None:
    """on_update during execute gives tool_execution_update events before the end event."""
    kept: list[Any] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult(content=[TextContent(text="50%")]))
        on_update(AgentToolResult(content=[TextContent(text="90%")]))
        kept.append(on_update)
        return AgentToolResult(content=[TextContent(text="done")])

    tool = make_tool("work", execute)
    ctx = AgentContext(messages=[S0(tool)], tools=[tool])
    events, result = await run([U("go")], ctx, cfg(), Script(AC("c1", "work", {"value": "x"}), AT("ok")))
    assert sigs(events)[6:9] == ["XS:c1", "XU:c1", "XU:c1"]
    assert [texts(e.partial_result)[0] for e in of_type(events, "tool_execution_update")] == ["50%", "90%"]
    assert of_type(events, "tool_execution_update")[0].args == {"value": "x"}
    kept[0](AgentToolResult(content=[TextContent(text="late")]))  # after settling: ignored
    await asyncio.sleep(0)


async def test_validated_args_share_nothing_with_the_tool_call_block() -> None:
    """3.7.2b: validation works on a deep copy; mutating args leaves the assistant block intact."""

    class Params(BaseModel):
        data: Any

    def before(context: Any, signal: Any) -> None:
        context.args.data["nested"].append("mutated")

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=[TextContent(text="ok")])

    tool = make_tool("t", execute, Params)
    ctx = AgentContext(messages=[S0(tool)], tools=[tool])
    a1 = AC("c1", "t", {"data": {"nested": [1]}})
    await run([U("go")], ctx, cfg(before_tool_call=before), Script(a1, AT("ok")))
    assert a1.content[0].arguments == {"data": {"nested": [1]}}


async def test_a_tool_returning_something_else_gives_an_error_result() -> None:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return None

    tool = make_tool("bad", execute)
    ctx = AgentContext(messages=[S0(tool)], tools=[tool])
    events, result = await run([U("go")], ctx, cfg(), Script(AC("c1", "bad", {"value": "x"}), AT("ok")))
    assert result[2].is_error and texts(result[2]) == ["Tool bad returned NoneType, not an AgentToolResult"]
