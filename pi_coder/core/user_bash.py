"""UserBash: the user's ``!cmd`` / ``!!cmd`` commands of one session.

It runs a command (or lets an extension's ``user_bash`` handler run it), streams its output as
``bash_execution_*`` events, records the result in the transcript and the session file, and
holds results back while the agent runs, to append them before the next prompt. The session
host owns one (``AgentSession.run_bash``); see docs/session-host.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pi_coder.ai.abort import AbortController
from pi_coder.core.bash_exec import execute_user_bash
from pi_coder.core.events import BashExecutionEnd, BashExecutionStart, BashExecutionUpdate, Event
from pi_coder.session.messages import BashExecutionMessage

if TYPE_CHECKING:
    from pi_coder.agent import Agent
    from pi_coder.checkpoints.checkpoints import Checkpoints
    from pi_coder.core.host import ExtensionHooks
    from pi_coder.session.store import SessionStore
    from pi_coder.settings import Settings

__all__ = ["UserBash", "UserBashHost"]


class UserBashHost(Protocol):
    """What ``!`` commands use of the session host (``AgentSession``)."""

    cwd: str
    agent: Agent
    settings: Settings
    checkpoints: Checkpoints
    extensions: ExtensionHooks | None

    @property
    def store(self) -> SessionStore: ...

    @property
    def is_streaming(self) -> bool: ...

    async def emit(self, event: Event) -> None: ...

    def emit_nowait(self, event: Event) -> None: ...

    def shell_environment(self) -> dict[str, str]: ...

    def _check_saved(self) -> None: ...


class UserBash:
    """The running ``!`` command (at most one) and the results waiting for the run to end."""

    def __init__(self, host: UserBashHost) -> None:
        self._host = host
        self._controller: AbortController | None = None
        self._pending: list[BashExecutionMessage] = []

    @property
    def running(self) -> bool:
        return self._controller is not None

    @property
    def pending(self) -> list[BashExecutionMessage]:
        """``!`` commands that finished while the agent ran, waiting to be appended (a copy)."""
        return list(self._pending)

    async def run(
        self, command: str, *, exclude_from_context: bool = False, request_id: object = None
    ) -> BashExecutionMessage:
        """Run ``command`` and record it (held back while the agent runs).

        Raises:
            RuntimeError: Another ``!`` command is running.
        """
        if self._controller is not None:
            raise RuntimeError("A bash command is already running. Press Esc to cancel it first.")
        host = self._host
        controller = self._controller = AbortController()
        seen = [""]

        def from_extension(out: str) -> None:
            # An extension's handler reports the output so far; the delta is what is new.
            previous, seen[0] = seen[0], out
            delta = out[len(previous) :] if out.startswith(previous) else out
            host.emit_nowait(BashExecutionUpdate(command=command, output=out, delta=delta, id=request_id))

        def from_shell(out: str, delta: str) -> None:
            host.emit_nowait(BashExecutionUpdate(command=command, output=out, delta=delta, id=request_id))

        try:
            await host.emit(BashExecutionStart(command=command, exclude_from_context=exclude_from_context))
            ran_idle = not host.is_streaming
            await host.checkpoints.before_user_bash(command)  # so /undo covers it
            handled = None
            if host.extensions is not None:
                handled = await host.extensions.on_user_bash(
                    command,
                    exclude_from_context,
                    controller.signal,
                    from_extension,
                )
            settings = host.settings
            message = handled or await execute_user_bash(
                command,
                host.cwd,
                signal=controller.signal,
                on_output=from_shell,
                shell_path=settings.shell_path,
                command_prefix=settings.shell_command_prefix,
                exclude_from_context=exclude_from_context,
                env=host.shell_environment(),
                max_file_bytes=int(settings.bash.max_output_file_mb * 1024 * 1024),
                keep_background=settings.bash.keep_background,
            )
        finally:
            self._controller = None
        if host.is_streaming:
            self._pending.append(message)
        else:
            self._append(message)
            leaf = host.store.leaf_id
            if ran_idle and leaf is not None:
                await host.checkpoints.after_user_bash(leaf)
        await host.emit(BashExecutionEnd(message=message))
        return message

    def abort(self) -> None:
        """Kill the running ``!`` command, if any."""
        if self._controller is not None:
            self._controller.abort()

    def flush(self) -> None:
        """Append the held-back results (before a prompt and after a run)."""
        pending, self._pending = self._pending, []
        for message in pending:
            self._append(message)

    def discard_pending(self) -> None:
        """Drop the held-back results (the session is being replaced)."""
        self._pending.clear()

    def _append(self, message: BashExecutionMessage) -> None:
        self._host.agent.state.messages.append(message)
        self._host.store.append_message(message)
        self._host._check_saved()
