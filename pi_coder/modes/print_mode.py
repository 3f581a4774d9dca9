"""``pi -p`` (text) and ``pi --mode json``: run the prompts once and exit.

Text mode prints the final assistant message's text blocks, one per line; an error or abort
prints the error on stderr and exits 1; an answer cut off by ``max_tokens`` (stop reason
``length``) prints what arrived, then a warning on stderr, and exits 1; each automatic retry of a
failed request is noted on stderr as it starts, and so is a session warning (e.g. the session could
not be saved: the answer is printed all the same, and the exit code is 1). JSON mode writes the
session header, then every agent
and session event as one JSON line (Pi 1.6's ``agent_settled`` after each prompt's whole run),
and exits 0 even when the model fails. Ctrl+C aborts the
run (the session keeps what was said) and exits 130; a second Ctrl+C stops at once. SIGTERM and
SIGHUP abort the same way (exit 143 / 129), so a running bash command is killed, not orphaned.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING, Literal, assert_never

from pi_coder.agent.events import (
    AgentEnd,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from pi_coder.core.events import (
    AutoCompactionEnd,
    AutoCompactionStart,
    AutoRetryEnd,
    AutoRetryStart,
    BashExecutionEnd,
    BashExecutionStart,
    BashExecutionUpdate,
    EntryAppendedEvent,
    Event,
    ExtensionErrorEvent,
    ModelChanged,
    Notice,
    QueueChanged,
    SessionNameChanged,
    SessionSwitched,
    SubagentEvent,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
    ThinkingLevelChanged,
)
from pi_coder.modes import mcp_host
from pi_coder.modes.stop_signals import StopNow, StopSignals, exit_code_for
from pi_coder.subagents.budget import limit_stop

if TYPE_CHECKING:
    from pi_coder.ai.types import AssistantMessage
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.modes.setup import Startup

__all__ = ["EXIT_INTERRUPTED", "run_print_mode"]

EXIT_INTERRUPTED = 130
"""The exit code after Ctrl+C (SIGTERM: 143, SIGHUP: 129)."""


def run_print_mode(startup: Startup, *, output: Literal["text", "json"] = "text") -> int:
    """Run ``startup.prompts`` one after another and report the outcome.

    Returns:
        The exit code: 0, 1 (text mode: the last reply is an error, was aborted or was cut off
        by max_tokens), or 128 + the
        signal that stopped the run (130 for Ctrl+C, 143 for SIGTERM, 129 for SIGHUP).
    """
    try:
        return asyncio.run(_run(startup, output))
    except StopNow as exc:  # raised outside the main task: the session was closed by cancellation
        with contextlib.suppress(OSError):
            print("Aborted.", file=sys.stderr)
        return exit_code_for(exc.signum)


class _Interrupt(StopSignals):
    """The first Ctrl+C, SIGTERM or SIGHUP aborts the session; a second one acts as before."""

    def __init__(self, session: AgentSession) -> None:
        def stop(_signum: int) -> None:
            session.abort()
            if session.extensions is not None:  # a handler awaiting forever (before_agent_start)
                session.extensions.cancel_handlers()

        super().__init__(stop)

    @property
    def fired(self) -> bool:
        return self.received is not None


async def _run(startup: Startup, output: Literal["text", "json"]) -> int:
    session = startup.session
    if output == "json":
        from pi_coder.modes.jsonl import JsonLineWriter, settled_event

        writer = JsonLineWriter(on_closed=session.abort)  # the reader left (| head): stop the run
        writer.write(session.store.header)
        session.subscribe(writer.write_event)
    else:
        session.subscribe(_note_to_stderr)
    from pi_coder.modes import extension_host  # (the task tool may bind a runner during the run)

    if session.extensions is not None:
        failures = extension_host.load_failures(session)
        if failures:  # as Pi: a broken extension stops a print run before it starts
            for line in failures:
                print(line, file=sys.stderr)
            print('Hint: Start without extensions using "pi -ne".', file=sys.stderr)
            await session.close()
            return 1
    interrupt = _Interrupt(session)
    interrupt.install()
    stopped: int | None = None
    code = 0
    limited = False
    try:
        if session.extensions is not None:
            await extension_host.start(session, "json" if output == "json" else "print")
        try:
            for index, text in enumerate(startup.prompts):
                if mcp_host.handles(session, text):  # `/mcp`: the server table, no model call
                    await _mcp_command(session, text, output)
                    continue
                await session.prompt(text, startup.images if index == 0 else None)
                if output == "json":
                    writer.write(settled_event(session.messages))
                if interrupt.fired or _failed(session) or limit_stop(session) is not None:
                    break
        except StopNow as exc:  # a second signal while something blocked the loop
            stopped = exc.signum
            session.abort()
        finally:
            interrupt.uninstall()
        limited = limit_stop(session) is not None  # --max-turns / --max-budget-usd ended the run
        if stopped is None and interrupt.received is None and output == "text":
            if session.extensions is not None:
                await session.extensions.settle()  # work extensions started may still answer
            code = _print_final(session)  # before session_shutdown: a slow handler cannot lose it
            if limited:
                code = 1
    finally:
        if session.extensions is not None:
            await extension_host.stop(session)
        await session.close()
    received = stopped if stopped is not None else interrupt.received
    if received is not None:
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            print("Aborted.", file=sys.stderr)
        return exit_code_for(received)
    if output == "json":
        return 1 if writer.closed or limited else 0
    # The answer is printed all the same; the exit code says the session is not all on disk.
    return 1 if session.store.write_error is not None else code


async def _mcp_command(session: AgentSession, text: str, output: Literal["text", "json"]) -> None:
    table = await mcp_host.command_text(session, text)
    if output == "json":
        await session.emit(Notice(level="info", text=table))
    else:
        print(table, flush=True)


def _note_to_stderr(event: Event) -> None:
    """Text mode: one stderr line per automatic retry (why nothing happens while a failed request
    waits) and per session warning or error (e.g. the session could not be saved)."""
    line: str | None = None
    match event:
        case AutoRetryStart():
            seconds = event.delay_ms / 1000
            line = f"{event.error_message} (retry {event.attempt} of {event.max_attempts} in {seconds:g} s)"
        case Notice():
            if event.level != "info":
                line = f"Warning: {event.text}"
        case (
            AgentStart()
            | AgentEnd()
            | TurnStart()
            | TurnEnd()
            | MessageStart()
            | MessageUpdate()
            | MessageEnd()
            | ToolExecutionStart()
            | ToolExecutionUpdate()
            | ToolExecutionEnd()
            | QueueChanged()
            | SessionSwitched()
            | ModelChanged()
            | ThinkingLevelChanged()
            | SessionNameChanged()
            | BashExecutionStart()
            | BashExecutionUpdate()
            | BashExecutionEnd()
            | AutoCompactionStart()
            | AutoCompactionEnd()
            | AutoRetryEnd()
            | SummarizationRetryScheduled()
            | SummarizationRetryAttemptStart()
            | SummarizationRetryFinished()
            | ExtensionErrorEvent()
            | EntryAppendedEvent()
            | SubagentEvent()
        ):
            pass
        case _:
            assert_never(event)
    if line is not None:
        with contextlib.suppress(OSError):
            print(line, file=sys.stderr)


def _last_assistant(session: AgentSession) -> AssistantMessage | None:
    from pi_coder.ai.types import AssistantMessage

    for message in reversed(session.messages):
        if isinstance(message, AssistantMessage):
            return message
        if message.role in ("user", "toolResult"):
            return None
    return None


def _failed(session: AgentSession) -> bool:
    message = _last_assistant(session)
    return message is not None and message.stop_reason in ("error", "aborted")


def _print_final(session: AgentSession) -> int:
    from pi_coder.ai.types import TextContent

    message = _last_assistant(session)
    if message is None:
        return 0
    reason = message.stop_reason
    if reason in ("error", "aborted"):
        print(message.error_message or f"Request {reason}", file=sys.stderr)
        return 1
    printed = False
    for block in message.content:
        if isinstance(block, TextContent):
            print(block.text)
            printed = printed or bool(block.text.strip())
    sys.stdout.flush()
    if reason == "length":
        print(truncation_warning(printed), file=sys.stderr)
        return 1
    return 0


TRUNCATED = "Response was truncated before completion."
"""The TUI's line for an answer cut off by the output limit (stop reason ``length``)."""


def truncation_warning(printed_text: bool) -> str:
    """The stderr line of ``-p`` for an answer cut off by ``max_tokens`` (exit 1)."""
    if printed_text:
        return f"Warning: {TRUNCATED} The model reached its output limit (max_tokens); the text above is incomplete."
    return (
        f"Warning: {TRUNCATED} The model used its whole output limit (max_tokens) "
        "before writing an answer (a reasoning model may have spent it thinking)."
    )
