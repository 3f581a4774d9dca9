"""Coding tools: read, bash, edit, write (active by default) and grep, find, ls.

``create_coding_tools(cwd, settings)`` builds all of them; ``create_tools(cwd, names, settings)``
builds a chosen subset. Also exported for the core and the TUI: ``run_shell_command`` (the
bash machinery, for ``!cmd``), ``compute_edit_preview`` (pure), the truncation helpers and the
system-prompt snippets.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable

from pi_coder.agent.types import AgentTool
from pi_coder.tools._edits import EditError, EditPreview, compute_edit_preview, prepare_edit_arguments
from pi_coder.tools._env import is_secret_name, safe_environment
from pi_coder.tools._images import PreparedImage, detect_image_mime, prepare_image
from pi_coder.tools._paths import lexical_path, pin, real_path
from pi_coder.tools._prompts import TOOL_PROMPT_SNIPPETS, tool_prompt_guidelines
from pi_coder.tools._settings import ToolSettings
from pi_coder.tools._shell import (
    ShellResult,
    confine,
    kill_running_commands,
    resolve_shell,
    run_shell_command,
    sanitize_output,
    set_command_wrapper,
    set_confine_wrapper,
)
from pi_coder.tools._truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    TruncationResult,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)

__all__ = [
    "confine",
    "ALL_TOOL_NAMES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "DEFAULT_TOOL_NAMES",
    "GREP_MAX_LINE_LENGTH",
    "TOOL_PROMPT_SNIPPETS",
    "EditError",
    "EditPreview",
    "PreparedImage",
    "ShellResult",
    "ToolSettings",
    "TruncationResult",
    "compute_edit_preview",
    "create_coding_tools",
    "create_tool",
    "create_tools",
    "detect_image_mime",
    "format_size",
    "is_secret_name",
    "lexical_path",
    "pin",
    "kill_running_commands",
    "prepare_edit_arguments",
    "prepare_image",
    "real_path",
    "resolve_shell",
    "run_shell_command",
    "safe_environment",
    "sanitize_output",
    "set_command_wrapper",
    "set_confine_wrapper",
    "tool_prompt_guidelines",
    "truncate_head",
    "truncate_line",
    "truncate_tail",
]

DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")
ALL_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")

_FACTORIES = {name: f"pi_coder.tools.{name}:create_{name}_tool" for name in ALL_TOOL_NAMES}


def create_tool(name: str, cwd: str | os.PathLike[str], settings: ToolSettings | None = None) -> AgentTool:
    """Build one tool by name.

    Raises:
        KeyError: ``name`` is not one of ``ALL_TOOL_NAMES``.
    """
    module, _, factory = _FACTORIES[name].partition(":")
    tool: AgentTool = getattr(importlib.import_module(module), factory)(cwd, settings)
    return tool


def create_tools(
    cwd: str | os.PathLike[str], names: Iterable[str] = DEFAULT_TOOL_NAMES, settings: ToolSettings | None = None
) -> dict[str, AgentTool]:
    """Build the named tools bound to ``cwd``, keyed by name in the order given.

    Raises:
        KeyError: an unknown tool name.
    """
    settings = settings or ToolSettings()
    return {name: create_tool(name, cwd, settings) for name in names}


def create_coding_tools(cwd: str | os.PathLike[str], settings: ToolSettings | None = None) -> dict[str, AgentTool]:
    """All seven coding tools bound to ``cwd`` (the default active set is ``DEFAULT_TOOL_NAMES``)."""
    return create_tools(cwd, ALL_TOOL_NAMES, settings)
