"""The edit tool: one or more targeted replacements in a file, applied all or nothing."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field

from pi_coder.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from pi_coder.ai.abort import AbortSignal
from pi_coder.ai.types import TextContent
from pi_coder.errors import ToolError
from pi_coder.tools._edits import EditPreview, apply_edits, prepare_edit_arguments
from pi_coder.tools._files import read_regular_bytes, refuse_special, write_file_atomic
from pi_coder.tools._locks import file_mutation_lock
from pi_coder.tools._paths import lexical_path, pinned
from pi_coder.tools._schema import ToolParams
from pi_coder.tools._settings import ToolSettings

__all__ = ["EditItem", "EditParams", "create_edit_tool"]

DESCRIPTION = (
    "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, "
    "non-overlapping region of the original file. If two changes affect the same block or nearby "
    "lines, merge them into one edit instead of emitting overlapping edits. Do not include large "
    "unchanged regions just to connect distant changes."
)

_TIER_NOTES = {
    "trailing_whitespace": "ignoring trailing whitespace",
    "unicode": "ignoring Unicode quote/dash/space differences",
    "indentation": "ignoring indentation (the replacement was re-indented to match)",
}


class EditItem(ToolParams):
    old_text: str = Field(
        alias="oldText",
        description=(
            "Exact text for one targeted replacement. It must be unique in the original file and "
            "must not overlap with any other edits[].oldText in the same call."
        ),
    )
    new_text: str = Field(alias="newText", description="Replacement text for this targeted edit.")


class EditParams(ToolParams):
    path: str = Field(description="Path to the file to edit (relative or absolute)")
    edits: list[EditItem] = Field(
        min_length=1,
        description=(
            "One or more targeted replacements. Each edit is matched against the original file, not "
            "incrementally. Do not include overlapping or nested edits. If two changes touch the same "
            "block or nearby lines, merge them into one edit instead."
        ),
    )


def _load(file: Path, shown: str, spelled: str) -> str:
    refuse_special(spelled, shown, "edit only changes regular files")
    if not file.exists():
        raise ToolError(f"File not found: {shown}")
    data = read_regular_bytes(file, shown, "edit only changes regular files")
    if not os.access(file, os.W_OK):
        raise ToolError(f"File is not readable and writable: {shown}")
    if b"\x00" in data[:8192]:
        raise ToolError(f"Cannot edit binary file: {shown}")
    return data.decode("utf-8", "surrogateescape")


def _store(file: Path, content: str, shown: str) -> None:
    write_file_atomic(file, content.encode("utf-8", "surrogateescape"), shown)


def _summary(preview: EditPreview, shown: str) -> str:
    count = len(preview.tiers)
    text = f"Successfully replaced text in {shown}." if count == 1 else f"Successfully replaced {count} blocks in {shown}."
    notes = [
        (f"edits[{i}]" if count > 1 else "The text") + f" matched {_TIER_NOTES[tier]}"
        for i, tier in enumerate(preview.tiers)
        if tier != "exact"
    ]
    if notes:
        text += "\nNote: " + "; ".join(notes) + "."
    return text


def create_edit_tool(cwd: str | os.PathLike[str], settings: ToolSettings | None = None) -> AgentTool[EditParams]:
    """The ``edit`` tool bound to ``cwd``."""

    async def execute(
        tool_call_id: str, args: EditParams, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        file = pinned(tool_call_id, args.path, cwd)
        edits = [(e.old_text, e.new_text) for e in args.edits]
        async with file_mutation_lock(file):
            if signal is not None and signal.aborted:
                raise ToolError("Operation aborted")
            original = await asyncio.to_thread(_load, file, args.path, lexical_path(args.path, cwd))
            preview = await asyncio.to_thread(apply_edits, original, edits, args.path)
            if signal is not None and signal.aborted:
                raise ToolError("Operation aborted")
            await asyncio.to_thread(_store, file, preview.new_content, args.path)
        details = {
            "diff": preview.diff,
            "firstChangedLine": preview.first_changed_line,
            "patch": preview.patch,
            "matchTiers": list(preview.tiers),
        }
        return AgentToolResult(content=[TextContent(text=_summary(preview, args.path))], details=details)

    return AgentTool(
        name="edit",
        label="edit",
        description=DESCRIPTION,
        parameters=EditParams,
        execute=execute,
        prepare_arguments=prepare_edit_arguments,
    )
