"""pi_coder's tools as Claude Code's hooks name them, both ways (README "Hooks" has the table).

``to_claude`` gives the ``tool_name`` and ``tool_input`` a hook reads; ``to_pi`` turns a hook's
``updatedInput`` back into the pi tool's arguments; ``tool_response`` is PostToolUse's result.
Tools without a Claude Code counterpart (extension tools, MCP tools already named
``mcp__server__tool``) keep their name and arguments.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["CLAUDE_NAMES", "to_claude", "to_pi", "tool_response"]

CLAUDE_NAMES: Mapping[str, str] = {
    "bash": "Bash",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "grep": "Grep",
    "find": "Glob",
    "ls": "LS",
}
"""pi tool -> Claude Code tool (``edit`` with several edits is ``MultiEdit``)."""

_CLAUDE_ONLY = frozenset(
    {"description", "run_in_background", "replace_all", "output_mode", "type", "multiline"}
)
"""Claude Code fields pi's tools have no use for (dropped from ``updatedInput``)."""


def _absolute(path: object, cwd: str) -> object:
    if not isinstance(path, str):
        return path
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def to_claude(name: str, args: Mapping[str, Any], cwd: str) -> tuple[str, dict[str, Any]]:
    """``(tool_name, tool_input)`` for the call of pi tool ``name`` with ``args`` (by alias)."""
    data = dict(args)
    if name not in CLAUDE_NAMES:
        return name, data
    out: dict[str, Any] = {}
    if "path" in data:
        key = "file_path" if name in ("read", "write", "edit") else "path"
        value = data.pop("path")
        out[key] = _absolute(value, cwd) if value is not None else None
    if name == "bash" and data.get("timeout") is not None:
        out["timeout"] = int(float(data.pop("timeout")) * 1000)  # Claude Code's Bash timeout is in ms
    if name == "edit":
        edits = data.pop("edits", None) or []
        pairs = [{"old_string": e.get("oldText", ""), "new_string": e.get("newText", "")} for e in edits]
        if len(pairs) == 1:
            out.update(pairs[0])
            out["replace_all"] = False
        else:
            out["edits"] = pairs
            return "MultiEdit", {**out, **data}
    if name == "grep":
        for pi_key, claude_key in (("ignoreCase", "-i"), ("context", "-C"), ("limit", "head_limit")):
            if pi_key in data:
                out[claude_key] = data.pop(pi_key)
    out.update(data)
    return CLAUDE_NAMES[name], {k: v for k, v in out.items() if v is not None}


def to_pi(
    name: str, claude_input: Mapping[str, Any], original: Mapping[str, Any], cwd: str
) -> dict[str, Any]:
    """The pi arguments for a hook's ``updatedInput`` (fields it leaves out keep their values)."""
    if name not in CLAUDE_NAMES:
        return {**original, **claude_input}
    _, current = to_claude(name, original, cwd)
    merged = {**current, **claude_input}
    out: dict[str, Any] = {}
    for key in ("file_path", "path"):
        if key in merged:
            value = merged.pop(key)
            before = original.get("path")
            # keep the model's own (relative) spelling when the hook left the path alone
            same = isinstance(before, str) and _absolute(before, cwd) == _absolute(value, cwd)
            out["path"] = before if same else value
    if name == "bash" and merged.get("timeout") is not None:
        out["timeout"] = float(merged.pop("timeout")) / 1000
    if name == "edit":
        if "edits" in merged:
            edits = merged.pop("edits")
            out["edits"] = [
                {"oldText": e.get("old_string", ""), "newText": e.get("new_string", "")} for e in edits
            ]
        if "old_string" in merged or "new_string" in merged:
            out["edits"] = [
                {"oldText": merged.pop("old_string", ""), "newText": merged.pop("new_string", "")}
            ]
    if name == "grep":
        for pi_key, claude_key in (("ignoreCase", "-i"), ("context", "-C"), ("limit", "head_limit")):
            if claude_key in merged:
                out[pi_key] = merged.pop(claude_key)
    for key, value in merged.items():
        if key not in _CLAUDE_ONLY:
            out[key] = value
    return out


def tool_response(name: str, args: Mapping[str, Any], text: str, is_error: bool, cwd: str) -> dict[str, Any]:
    """PostToolUse's ``tool_response``: the result text, plus Claude Code's fields where they map."""
    response: dict[str, Any] = {"content": text, "isError": is_error}
    if name == "bash":
        response.update(stdout=text, stderr="", interrupted=False, isImage=False)
    elif name in ("read", "write", "edit") and isinstance(args.get("path"), str):
        response.update(filePath=_absolute(args["path"], cwd), success=not is_error)
    return response
