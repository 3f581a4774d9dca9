"""Snapshot tests of key screens (pytest-textual-snapshot). Update with ``--snapshot-update``
after looking at the diff report. Deterministic: fixed version, cwd and branch, no clocks or spinners.
"""

from __future__ import annotations

from pathlib import Path

from pi_coder.ai.providers.faux import faux_message, faux_thinking, faux_tool_call
from pi_coder.ai.types import Usage
from tests.tui.helpers import BlockingTool, type_text, wait_until
from tests.tui.screens_support import make_app

SIZE = (100, 34)


def test_idle_screen(snap_compare, make_session) -> None:
    session, _ = make_session([])
    assert snap_compare(make_app(session, version="0.1.0"), terminal_size=SIZE)


def test_streamed_answer_with_tool_call_and_diff(snap_compare, make_session, project: Path) -> None:
    (project / "greet.py").write_text("def greet(name):\n    return 'Hello ' + name\n")
    usage = Usage(input=3_200, output=410, total_tokens=3_610)
    usage.cost.total = 0.0123
    session, faux = make_session(
        [
            faux_message(
                faux_thinking("The user wants a friendlier greeting."),
                "I'll update the greeting in `greet.py`:",
                faux_tool_call("edit", {"path": "greet.py", "oldText": "'Hello '", "newText": "'Hi there, '"}, id="c1"),
                usage=usage,
            ),
            faux_message("Done. `greet('Ada')` now returns **Hi there, Ada**.", usage=usage),
        ],
        tool_names=["read", "edit"],
    )

    async def run_before(pilot) -> None:
        await type_text(pilot, "make the greeting friendlier")
        await pilot.press("enter")
        await wait_until(pilot, lambda: faux.state.call_count == 2 and not session.is_streaming, what="done")
        await pilot.pause(0.2)

    assert snap_compare(make_app(session, version="0.1.0"), terminal_size=SIZE, run_before=run_before)


def test_queue_with_steering_and_follow_up(snap_compare, make_session) -> None:
    blocker = BlockingTool()
    session, _ = make_session(
        [faux_message("Running the slow step.", faux_tool_call("wait", {"label": "slow"}, id="w1")), "ok"],
        tools=[blocker.tool],
    )

    async def run_before(pilot) -> None:
        await type_text(pilot, "run the slow step")
        await pilot.press("enter")
        await wait_until(pilot, blocker.started.is_set, what="tool started")
        await type_text(pilot, "use the staging database")
        await pilot.press("enter")
        await type_text(pilot, "then summarise the results")
        await pilot.press("alt+enter")
        await wait_until(pilot, lambda: len(session.queued_messages()) == 2, what="queued")
        await pilot.pause(0.2)

    try:
        assert snap_compare(make_app(session, version="0.1.0"), terminal_size=SIZE, run_before=run_before)
    finally:
        blocker.release()


def test_error_reply(snap_compare, make_session) -> None:
    session, _ = make_session(
        [
            faux_message(
                "Let me check",
                stop_reason="error",
                error_message="401 Unauthorized: invalid x-api-key",
            )
        ]
    )

    async def run_before(pilot) -> None:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not session.is_streaming and len(session.messages) >= 3, what="error")
        await pilot.pause(0.2)

    assert snap_compare(make_app(session, version="0.1.0"), terminal_size=SIZE, run_before=run_before)


def test_markdown_as_pi_draws_it(snap_compare, make_session) -> None:
    """Links with their address, "1." lists, a muted quote with a bar, fenced code and a boxed table."""
    answer = (
        "See the [guide](https://example.com/guide) first.\n\n"
        "1. add(a, b)\n2. sub(a, b)\n\n"
        "> Keep it simple.\n\n"
        "```python\ndef add(a, b):\n    return a + b\n```\n\n"
        "| op | result |\n|---|---|\n| add | 3 |\n\n"
        "Done."
    )
    session, _ = make_session([answer])

    async def run_before(pilot) -> None:
        await type_text(pilot, "show markdown")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not session.is_streaming and "Done." in pilot.app.transcript.query_one("StreamingMarkdown").source, what="done")
        await pilot.pause(0.2)

    assert snap_compare(make_app(session, version="0.1.0"), terminal_size=SIZE, run_before=run_before)
