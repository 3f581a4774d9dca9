"""Reading ``checkpoint`` entries: listings, what a restore must change, what ``/redo`` reverses.

Pure functions over the session tree (no git, no files): :mod:`pi_coder.checkpoints.checkpoints` runs
them and applies the result. The entry format is described in that module and in
docs/checkpoints.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_coder.ai.types import TextContent
from pi_coder.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    UnknownEntry,
)

if TYPE_CHECKING:
    from pi_coder.session.entries import SessionEntry
    from pi_coder.session.store import SessionStore

__all__ = [
    "CheckpointInfo",
    "Plan",
    "Redo",
    "RestoreResult",
    "bash_text",
    "code_branch",
    "conflict_text",
    "count",
    "is_point",
    "list_checkpoints",
    "make_plan",
    "quote",
    "redo_step",
    "run_checkpoint",
    "user_text",
]


@dataclass(slots=True, kw_only=True)
class CheckpointInfo:
    """One ``checkpoint`` entry, for listings (``/checkpoints``, RPC ``get_checkpoints``)."""

    id: str
    prompt_id: str | None
    prompt: str
    snapshot: str
    after: str
    files: list[str]
    outside: list[str]
    timestamp: str
    on_branch: bool

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "promptId": self.prompt_id,
            "prompt": self.prompt,
            "snapshot": self.snapshot,
            "after": self.after,
            "files": self.files,
            "outside": self.outside,
            "timestamp": self.timestamp,
            "onBranch": self.on_branch,
        }


@dataclass(slots=True, kw_only=True)
class RestoreResult:
    """What a restore did (or, with ``conflicts`` and ``applied`` False, would do)."""

    applied: bool = False
    restored: list[str] = field(default_factory=list)
    """Files written or removed (relative to the folder; outside files by absolute path)."""
    conflicts: list[str] = field(default_factory=list)
    """Files changed by hand since pi last saw them (the restore needs ``force``)."""
    editor_text: str | None = None
    """The prompt text to put back in the editor (conversation restores)."""
    message: str = ""

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "applied": self.applied,
            "restored": self.restored,
            "conflicts": self.conflicts,
            "editorText": self.editor_text,
            "message": self.message,
        }


@dataclass(slots=True)
class Plan:
    target: str | None
    paths: list[str]
    outside: dict[str, str | None]
    expected: str | None
    expected_outside: dict[str, str | None]
    unrecorded: str | None = None
    """Why files of a run on the way were not recorded (checkpoints were off): no restore."""


@dataclass(slots=True)
class Redo:
    leaf: str | None
    present: str
    paths: list[str]
    outside: dict[str, str | None]
    after_undo: str
    kind: str = "undo"
    """``undo`` (``/undo``) or ``restore`` (a ``/tree``, ``/fork`` or RPC restore): for the message."""


def _raw(entry: SessionEntry) -> dict[str, Any] | None:
    """Any ``checkpoint`` entry (runs, restores, ``off`` markers)."""
    if isinstance(entry, UnknownEntry) and entry.type == "checkpoint":
        return entry.raw
    return None


def run_checkpoint(entry: SessionEntry) -> dict[str, Any] | None:
    """A checkpoint entry with snapshots (a run's, or a restore's)."""
    raw = _raw(entry)
    if raw is not None and isinstance(raw.get("snapshot"), str) and isinstance(raw.get("after"), str):
        return raw
    return None


def is_point(entry: SessionEntry) -> bool:
    """An undo point: a prompt or a user ``!`` command (undoing it goes back to before it)."""
    return isinstance(entry, MessageEntry) and entry.role in ("user", "bashExecution")


def bash_text(entry: MessageEntry) -> str:
    """``!cmd`` (``!!cmd`` when kept out of the context) for the editor."""
    command = str(entry.message_field("command") or "")
    excluded = entry.message_field("excludeFromContext")
    return ("!!" if excluded else "!") + command


def list_checkpoints(store: SessionStore) -> list[CheckpointInfo]:
    """Every run's checkpoint entry of the session, in file order."""
    on_branch = {entry.id for entry in store.get_branch()}
    out: list[CheckpointInfo] = []
    for entry in store.get_entries():
        raw = run_checkpoint(entry)
        if raw is None or raw.get("kind") == "restore":
            continue
        prompt_id = raw.get("promptId") if isinstance(raw.get("promptId"), str) else None
        prompt_entry = store.get_entry(prompt_id) if prompt_id else None
        prompt = ""
        if isinstance(prompt_entry, MessageEntry) and prompt_entry.role == "bashExecution":
            prompt = bash_text(prompt_entry)
        elif isinstance(prompt_entry, MessageEntry):
            prompt = user_text(prompt_entry.message)
        outside = raw.get("outside")
        out.append(
            CheckpointInfo(
                id=entry.id,
                prompt_id=prompt_id,
                prompt=prompt,
                snapshot=raw["snapshot"],
                after=raw["after"],
                files=[f for f in raw.get("files") or [] if isinstance(f, str)],
                outside=sorted(outside) if isinstance(outside, dict) else [],
                timestamp=entry.timestamp,
                on_branch=entry.id in on_branch,
            )
        )
    return out


def code_branch(store: SessionStore) -> list[SessionEntry]:
    """The branch the files on disk belong to.

    Normally the present branch; after a conversation-only restore (``codeAt``), the branch the
    files were left on, until a run or a code restore brings them to the present branch.
    """
    branch = store.get_branch()
    for entry in reversed(branch):
        raw = _raw(entry)
        if raw is None:
            continue
        if raw.get("kind") == "restore" and "codeAt" in raw:
            at = raw["codeAt"]
            return store.get_branch(at) if isinstance(at, str) and store.get_entry(at) else branch
        if run_checkpoint(entry) is not None:
            return branch
    return branch


def make_plan(store: SessionStore, target_id: str, known: str | None) -> Plan:
    """What restoring the files to the point before/at ``target_id`` means.

    ``known``: the snapshot of the files as pi last left them (None: the last checkpoint's).
    """
    target = store.get_entry(target_id)
    if target is None:
        raise KeyError(f"Entry {target_id} not found")
    current = code_branch(store)
    if is_point(target):
        point = store.get_branch(target.parent_id) if target.parent_id else []
    else:
        point = store.get_branch(target_id)
    common = 0
    while common < min(len(current), len(point)) and current[common].id == point[common].id:
        common += 1
    undone = [raw for entry in current[common:] if (raw := run_checkpoint(entry)) is not None]
    redone = [raw for entry in point[common:] if (raw := run_checkpoint(entry)) is not None]
    off = [raw for entry in current[common:] if (raw := _raw(entry)) is not None and raw.get("kind") == "off"]
    paths: dict[str, None] = {}
    outside: dict[str, str | None] = {}
    expected_outside: dict[str, str | None] = {}
    for raw in undone:
        paths.update(dict.fromkeys(raw.get("files") or []))
        restore = raw.get("kind") == "restore"
        for path, (old, new) in (raw.get("outside") or {}).items():
            # A run's "before" is this branch's state; a restore's "before" is the branch it
            # left, its "after" this branch's.
            outside.setdefault(path, new if restore else old)
            expected_outside[path] = new
    for raw in redone:
        paths.update(dict.fromkeys(raw.get("files") or []))
        for path, (_old, new) in (raw.get("outside") or {}).items():
            outside[path] = new
    if redone:
        target_commit: str | None = redone[-1]["after"]
    elif undone:
        first = undone[0]
        target_commit = first["after"] if first.get("kind") == "restore" else first["snapshot"]
    else:
        target_commit = None
    last = next((raw for entry in reversed(current) if (raw := run_checkpoint(entry)) is not None), None)
    expected = known or (last["after"] if last else None)
    reason = str(off[0].get("reason") or "checkpoints were off") if off else None
    return Plan(target_commit, list(paths), outside, expected, expected_outside, reason)


def redo_step(store: SessionStore) -> tuple[str, Redo] | None:
    """The latest restore on the present branch not yet redone, while nothing new was said.

    Read from the session's restore entries (their ``redo`` field), so ``/redo`` works after a
    restart too. A message or a run's checkpoint after the restore ends the chance to redo.
    """
    redone: set[str] = set()
    for entry in reversed(store.get_branch()):
        raw = _raw(entry)
        if raw is None:
            if isinstance(entry, (MessageEntry, CustomMessageEntry, CompactionEntry, BranchSummaryEntry)):
                return None
            continue
        if raw.get("kind") == "off":
            continue
        if raw.get("kind") != "restore":
            return None
        if isinstance(raw.get("redid"), str):
            redone.add(raw["redid"])
            continue
        data = raw.get("redo")
        if isinstance(data, dict) and entry.id not in redone and isinstance(data.get("present"), str):
            kept = data.get("outside")
            outside: dict[Any, Any] = kept if isinstance(kept, dict) else {}
            leaf = data.get("leaf")
            return entry.id, Redo(
                leaf if isinstance(leaf, str) else None,
                data["present"],
                [p for p in data.get("paths") or [] if isinstance(p, str)],
                {str(k): v if isinstance(v, str) else None for k, v in outside.items()},
                str(data.get("afterUndo") or data["present"]),
                "restore" if data.get("kind") == "restore" else "undo",
            )
    return None


def user_text(message: Any) -> str:
    """The text of a user message (text blocks joined), or ``""`` (as ``core._queue.user_text``)."""
    if message.role != "user":
        return ""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


def count(paths: list[str]) -> str:
    return f"{len(paths)} file" + ("" if len(paths) == 1 else "s") if paths else ""


def quote(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return f'"{line[:60]}…"' if len(line) > 60 else f'"{line}"'


def conflict_text(conflicts: list[str]) -> str:
    shown = ", ".join(conflicts[:5]) + (f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else "")
    return f"Changed by hand since pi saw them (restore not done; force to overwrite): {shown}"
