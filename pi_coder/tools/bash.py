"""The bash tool: run a command in the session cwd with a timeout, streaming its output."""

from __future__ import annotations

import asyncio
import inspect
import os

from pydantic import Field

from pi_coder.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.types import TextContent
from pi_coder.errors import ToolError
from pi_coder.tools._env import safe_environment
from pi_coder.tools._schema import ToolParams
from pi_coder.tools._settings import ToolSettings
from pi_coder.tools._shell import ShellResult, run_shell_command, sweep_old_output_files
from pi_coder.tools._truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

__all__ = ["BashParams", "command_environment", "create_bash_tool", "format_shell_output"]


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _description(settings: ToolSettings) -> str:
    return (
        "Execute a bash command in the current working directory. Returns stdout and stderr. Output is "
        f"truncated to last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit "
        "first). If truncated, full output is saved to a temp file. Optionally provide a timeout in "
        f"seconds (default {_seconds(settings.bash_default_timeout)}, maximum "
        f"{_seconds(settings.bash_max_timeout)}). " + _background_note(settings.keep_background)
    )


def _background_note(keep: bool) -> str:
    if keep:
        return "Background processes (`cmd > file.log 2>&1 &`) keep running after the command and after pi exits."
    return (
        "Processes left running in the background (`cmd &`, nohup) are killed when pi exits unless started "
        "with `setsid`: for a server that must keep running, use `setsid cmd > file.log 2>&1 &`."
    )


class BashParams(ToolParams):
    command: str = Field(description="Bash command to execute")
    timeout: float | None = Field(
        default=None, description="Timeout in seconds (optional; default 120, maximum 600)"
    )


def format_shell_output(result: ShellResult) -> str:
    """The shown output of a run: tail text (or ``(no output)``) plus Pi's truncation notice."""
    text = result.output or "(no output)"
    trunc = result.truncation
    if trunc is None or not trunc.truncated:
        return text
    if not result.full_output_path:
        where = "Full output unavailable"
    elif result.full_output_capped:
        where = f"Full output (only its last {format_size(result.full_output_bytes)}; file size cap): {result.full_output_path}"
    else:
        where = f"Full output: {result.full_output_path}"
    end = trunc.total_lines
    start = end - trunc.output_lines + 1
    if trunc.last_line_partial:
        line_size = format_size(result.last_line_bytes)
        notice = f"[Showing last {format_size(trunc.output_bytes)} of line {end} (line is {line_size}). {where}]"
    elif trunc.truncated_by == "lines":
        notice = f"[Showing lines {start}-{end} of {trunc.total_lines}. {where}]"
    else:
        notice = (
            f"[Showing lines {start}-{end} of {trunc.total_lines} ({format_size(DEFAULT_MAX_BYTES)} limit). {where}]"
        )
    return f"{text}\n\n{notice}"


def _details(result: ShellResult) -> dict[str, object] | None:
    details: dict[str, object] = {}
    if result.truncation is not None and result.truncation.truncated:
        details["truncation"] = result.truncation.to_details()
    if result.full_output_path and result.truncated:
        details["fullOutputPath"] = result.full_output_path
    return details or None


def command_environment(settings: ToolSettings) -> dict[str, str]:
    """The environment of one command: pi's without secrets, plus the agent markers."""
    extra = settings.env_extra() if settings.env_extra is not None else None
    return safe_environment(os.environ, allow=settings.env_allow, secret_names=settings.secret_env_names, extra=extra)


def create_bash_tool(cwd: str | os.PathLike[str], settings: ToolSettings | None = None) -> AgentTool[BashParams]:
    """The ``bash`` tool bound to ``cwd``."""
    settings = settings or ToolSettings()
    sweep_old_output_files()

    async def execute(
        tool_call_id: str, args: BashParams, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        timeout = settings.bash_default_timeout if not args.timeout or args.timeout <= 0 else args.timeout
        timeout = min(timeout, settings.bash_max_timeout)

        def push(partial: ShellResult) -> None:
            if on_update is not None:
                text = format_shell_output(partial)
                outcome = on_update(AgentToolResult(content=[TextContent(text=text)], details=_details(partial)))
                if inspect.isawaitable(outcome):
                    asyncio.ensure_future(outcome)

        result = await run_shell_command(
            args.command,
            cwd,
            signal=signal,
            on_update=push if on_update is not None else None,
            timeout=timeout,
            shell_path=settings.shell_path,
            command_prefix=settings.shell_command_prefix,
            env=command_environment(settings),
            max_file_bytes=settings.output_file_max_bytes,
            keep_background=settings.keep_background,
        )
        text = format_shell_output(result)
        if result.cancelled or result.timed_out:
            shown = "" if not result.output else text + "\n\n"
            if result.cancelled:
                raise ToolError(f"{shown}Command aborted")
            raise ToolError(f"{shown}Command timed out after {_seconds(timeout)} seconds")
        if result.exit_code != 0:
            raise ToolError(f"{text}\n\nCommand exited with code {result.exit_code}")
        return AgentToolResult(content=[TextContent(text=text)], details=_details(result))

    return AgentTool(
        name="bash", label="bash", description=_description(settings), parameters=BashParams, execute=execute
    )
