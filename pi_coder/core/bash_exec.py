"""User shell commands (``!cmd`` / ``!!cmd``) run through the bash tool's machinery.

No timeout; output sanitised (ANSI and control characters stripped), tail-truncated to 2,000
lines / 50 KB with the full output spilled to a temp file; aborting kills the process group
and records ``cancelled`` with no exit code.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from pi_coder.ai.abort import AbortSignal
from pi_coder.session.messages import BashExecutionMessage

__all__ = ["execute_user_bash"]


async def execute_user_bash(
    command: str,
    cwd: str | os.PathLike[str],
    *,
    signal: AbortSignal | None = None,
    on_output: Callable[[str, str], Any] | None = None,
    shell_path: str | None = None,
    command_prefix: str | None = None,
    exclude_from_context: bool = False,
    env: Mapping[str, str] | None = None,
    max_file_bytes: int | None = None,
    keep_background: bool = False,
) -> BashExecutionMessage:
    """Run ``command`` like the bash tool does and describe the outcome as a message.

    Args:
        command: The shell command (without the ``!``/``!!`` prefix).
        cwd: Working directory.
        signal: Aborting it kills the command (``cancelled=True``, ``exit_code=None``).
        on_output: ``on_output(output, delta)``: the output so far (tail-truncated text) and the
            text that arrived since the previous call (all of it, untruncated; Pi's ``delta``).
            A last call with the remaining delta follows when the command ends.
        shell_path: The ``shell_path`` setting.
        command_prefix: The ``shell_command_prefix`` setting.
        exclude_from_context: ``!!``: stored and shown, never sent to the model.
        env: The command's environment (``AgentSession.shell_environment()``); default pi's own.
        max_file_bytes: Cap of the full-output file (default the tools' 50 MB).
        keep_background: Leave its background processes running when pi exits.

    Returns:
        The ``bashExecution`` message. A command that cannot start (missing shell or working
        directory) gives a message with the error text as output and exit code 127.
    """
    from pi_coder.errors import ToolError
    from pi_coder.tools import run_shell_command

    pending: list[str] = []
    latest = [""]

    def chunk(text: str) -> None:
        pending.append(text)

    def update(partial: Any) -> None:
        latest[0] = partial.output
        if on_output is not None and pending:
            delta = "".join(pending)
            pending.clear()
            on_output(partial.output, delta)

    try:
        result = await run_shell_command(
            command,
            cwd,
            signal=signal,
            on_output=chunk,
            on_update=update,
            timeout=None,
            shell_path=shell_path,
            command_prefix=command_prefix,
            env=env,
            keep_background=keep_background,
            **({"max_file_bytes": max_file_bytes} if max_file_bytes else {}),
        )
    except ToolError as exc:
        return BashExecutionMessage(
            command=command,
            output=str(exc),
            exit_code=127,
            exclude_from_context=exclude_from_context or None,
        )
    if on_output is not None and pending:
        on_output(result.output, "".join(pending))
        pending.clear()
    return BashExecutionMessage(
        command=command,
        output=result.output,
        exit_code=None if result.cancelled else result.exit_code,
        cancelled=result.cancelled,
        truncated=result.truncated,
        full_output_path=result.full_output_path,
        exclude_from_context=exclude_from_context or None,
    )
