"""Restoring checkpoints: ``/undo``, ``/redo``, code restores of ``/tree`` and ``/fork``.

The base of :class:`pi_coder.checkpoints.checkpoints.Checkpoints` (which adds the recording side).
The plan of a restore comes from :mod:`pi_coder.checkpoints.plan`; files are written through the
shadow repository (:mod:`pi_coder.checkpoints.shadow_git`), with their permission bits.
"""

from __future__ import annotations

import asyncio
import builtins
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pi_coder.checkpoints.plan import (
    CheckpointInfo,
    Plan,
    Redo,
    RestoreResult,
    bash_text,
    code_branch,
    conflict_text,
    count,
    is_point,
    list_checkpoints,
    make_plan,
    quote,
    redo_step,
    run_checkpoint,
    user_text,
)
from pi_coder.checkpoints.scanner import Scanner
from pi_coder.checkpoints.shadow_git import (
    GitError,
    ShadowRepo,
    Snapshot,
    Unsaved,
    git_available,
    remove_file,
    write_file,
)
from pi_coder.session.entries import MessageEntry, UnknownEntry

if TYPE_CHECKING:
    from pi_coder.agent import Agent
    from pi_coder.session.store import SessionStore
    from pi_coder.settings import Settings

__all__ = ["CheckpointHost", "CheckpointRestore", "RestoreMode"]

RestoreMode = Literal["code", "conversation", "both"]


class CheckpointHost(Protocol):
    """What checkpoints use of their session (an ``AgentSession``), without importing it."""

    agent: Agent
    cwd: str
    settings: Settings

    @property
    def store(self) -> SessionStore: ...

    @property
    def session_file(self) -> str | None: ...

    @property
    def is_streaming(self) -> bool: ...

    def add_run_hook(self, hook: Any) -> None: ...

    def subscribe(self, listener: Callable[[Any], Awaitable[None] | None]) -> Callable[[], None]: ...

    async def navigate_tree(
        self, entry_id: str, summarize: bool = False, instructions: str | None = None
    ) -> str | None: ...

    def reload_context(self) -> None: ...

    async def fork(self, entry_id: str) -> str | None: ...


def _perm(blob: str) -> int | None:
    """The permission bits kept with an outside blob (``"<sha>:<octal>"``; older entries: none)."""
    _sha, _, perm = blob.partition(":")
    try:
        return int(perm, 8) if perm else None
    except ValueError:
        return None


class CheckpointRestore:
    """Restores of one session's files and conversation (see the module docstring)."""

    def __init__(
        self,
        session: CheckpointHost,
        *,
        warn: Callable[[str], Awaitable[None]],
        reloaded: Callable[[], Awaitable[None]],
    ) -> None:
        self.session = session
        self._warn = warn
        self._emit_reloaded = reloaded
        self.repo = ShadowRepo(session.cwd)
        self.scanner = Scanner(self.repo)
        """Takes every snapshot: with the folder watched, of the paths that changed alone."""
        self._disabled: str | None = None
        self._known: str | None = None
        """The snapshot of the folder as pi last left it (after a run or a restore)."""

    @property
    def enabled(self) -> bool:
        settings = self.session.settings.checkpoints
        return settings.enabled and self._disabled is None and self.session.store.is_persisted

    async def _ready(self) -> None:
        """Wait for a snapshot being taken in the background (the recording side overrides this)."""
        return None

    def _max_bytes(self) -> int:
        return int(self.session.settings.checkpoints.max_file_mb * 1024 * 1024)

    async def _take(self, only: builtins.list[str] | None = None) -> Snapshot:
        return await self.scanner.take(self._max_bytes(), only=only)

    async def _snapshot_or_raise(self) -> str:
        if not git_available():
            raise GitError("git was not found")
        await self._ready()
        return (await self._take()).commit

    def _check_idle(self) -> None:
        if self.session.is_streaming:
            raise RuntimeError("Wait for the agent to finish before restoring")

    # ------------------------------------------------------------------ reading

    def list(self) -> builtins.list[CheckpointInfo]:
        """Every checkpoint entry of the session, in file order."""
        return list_checkpoints(self.session.store)

    async def diff(self, checkpoint_id: str) -> str:
        """The unified diff of the files one checkpoint's run changed."""
        await self._ready()
        info = next((c for c in self.list() if c.id == checkpoint_id), None)
        if info is None:
            raise KeyError(f"Checkpoint {checkpoint_id} not found")
        return await self.repo.diff(info.snapshot, info.after, info.files)

    def _plan(self, entry_id: str) -> Plan:
        return make_plan(self.session.store, entry_id, self._known)

    def changes_code(self, entry_id: str) -> bool:
        """True when going to the point of ``entry_id`` would change files (checkpoints between here and there)."""
        store = self.session.store
        entry = store.get_entry(entry_id)
        if entry is None or not self.enabled:
            return False
        raw = run_checkpoint(entry)
        if raw is not None and isinstance(raw.get("promptId"), str) and store.get_entry(raw["promptId"]):
            entry_id = raw["promptId"]
        plan = self._plan(entry_id)
        return plan.target is not None and bool(plan.paths or plan.outside)

    def _point(self, entry_id: str) -> str:
        """``entry_id``, or for a checkpoint entry the prompt it belongs to (idle sessions only)."""
        self._check_idle()
        store = self.session.store
        entry = store.get_entry(entry_id)
        if entry is None:
            raise KeyError(f"Entry {entry_id} not found")
        raw = run_checkpoint(entry)
        if raw is not None and isinstance(raw.get("promptId"), str) and store.get_entry(raw["promptId"]):
            return str(raw["promptId"])
        return entry_id

    async def hand_edits(self, entry_id: str) -> builtins.list[str]:
        """Files changed by hand since pi last saw them that restoring code to ``entry_id`` would overwrite.

        Lets a caller confirm before a long step (``/tree`` summarising the branch); ``restore``
        checks again. Snapshots the present (kept, shared with the restore's own snapshot).
        """
        await self._ready()
        entry_id = self._point(entry_id)
        plan = self._plan(entry_id)
        if plan.target is None and not plan.outside:
            return []
        return await self._conflicts(plan, await self._snapshot_or_raise())

    async def _conflicts(self, plan: Plan, present: str) -> builtins.list[str]:
        if plan.expected is None or plan.target is None:
            out: builtins.list[str] = []
        else:
            now = await self.repo.entries(present, plan.paths)
            seen = await self.repo.entries(plan.expected, plan.paths)
            goal = await self.repo.entries(plan.target, plan.paths)
            out = [p for p in plan.paths if now.get(p) != seen.get(p) and now.get(p) != goal.get(p)]
        for path, expected in plan.expected_outside.items():
            current = await self.repo.store_blob(path, self._max_bytes())
            if isinstance(current, Unsaved):
                out.append(path)
            elif _sha(current) != _sha(expected) and _sha(current) != _sha(plan.outside.get(path)):
                out.append(path)
        return out

    async def _apply(
        self, plan: Plan, force: bool
    ) -> tuple[RestoreResult, str | None, dict[str, str | None]]:
        """Snapshot the present, check for hand edits, restore; returns (result, present, outside before)."""
        result = RestoreResult()
        if plan.target is None and not plan.outside:
            result.applied = True
            return result, None, {}
        present = await self._snapshot_or_raise()
        result.conflicts = await self._conflicts(plan, present)
        if result.conflicts and not force:
            return result, None, {}
        if plan.target is not None and plan.paths:
            result.restored = await self.repo.restore(plan.target, plan.paths)
        outside_before: dict[str, str | None] = {}
        for path, blob in plan.outside.items():
            now = await self.repo.store_blob(path, self._max_bytes())
            outside_before[path] = None if isinstance(now, Unsaved) else now
            if now == blob or (
                now is not None and blob is not None and _perm(blob) is None and _sha(now) == blob
            ):
                continue
            if blob is None:
                if not await asyncio.to_thread(remove_file, path, os.path.dirname(path)):
                    continue
            else:
                data = await self.repo.read_blob(blob)
                await asyncio.to_thread(write_file, path, "100644", data, _perm(blob), os.path.dirname(path))
            result.restored.append(path)
        self._known = (await self._take()).commit
        result.applied = True
        return result, present, outside_before

    # ------------------------------------------------------------------ restoring

    def _last_prompt(self) -> MessageEntry | None:
        for entry in reversed(self.session.store.get_branch()):
            if isinstance(entry, MessageEntry) and is_point(entry):
                return entry
        return None

    async def undo(self, force: bool = False) -> RestoreResult:
        """Undo the last prompt: its files back, the session leaf before it, its text for the editor.

        Refused (``applied`` False, the reason in ``message``) when the prompt's file changes
        were not recorded: a conversation-only restore (``/tree``) still goes back.
        """
        await self._ready()
        self._check_idle()
        prompt = self._last_prompt()
        if prompt is None:
            return RestoreResult(message="Nothing to undo")
        leaf = self.session.store.leaf_id
        result = await self.restore(prompt.id, "both", force=force, _redo_leaf=leaf)
        if result.applied:
            files = count(result.restored)
            result.message = f"Undid {quote(result.editor_text or '')}" + (
                f"; restored {files}" if files else ""
            )
        return result

    async def redo(self, force: bool = False) -> RestoreResult:
        """Reverse the last undo or restore (while nothing new was sent)."""
        await self._ready()
        self._check_idle()
        found = redo_step(self.session.store)
        if found is None:
            return RestoreResult(message="Nothing to redo")
        undo_id, step = found
        plan = Plan(step.present, step.paths, step.outside, step.after_undo, {})
        result, _present, outside_before = await self._apply(plan, force)
        if not result.applied:
            result.message = conflict_text(result.conflicts)
            return result
        store = self.session.store
        if step.leaf is None:
            store.reset_leaf()
        else:
            store.branch(step.leaf)
        self._record(_present, plan, outside_before, redid=undo_id)
        await self._reloaded()
        files = count(result.restored)
        what = "Redid the last undone prompt" if step.kind == "undo" else "Reversed the last restore"
        result.message = what + (f"; restored {files}" if files else "")
        return result

    async def restore(
        self,
        entry_id: str,
        mode: RestoreMode = "both",
        force: bool = False,
        _redo_leaf: str | None = None,
        *,
        summarize: bool = False,
        instructions: str | None = None,
    ) -> RestoreResult:
        """Restore code, conversation or both to the point of ``entry_id`` (a user message: before it).

        A checkpoint entry's id means its prompt. Raises ``KeyError`` for an unknown id.
        ``summarize``/``instructions``: as for ``navigate_tree`` (``/tree`` summarising the branch left).
        """
        await self._ready()
        entry_id = self._point(entry_id)
        store = self.session.store
        leaf = store.leaf_id
        pending = redo_step(store) if mode == "conversation" else None
        code_at = code_branch(store) if mode == "conversation" else []
        result = RestoreResult(applied=True)
        present: str | None = None
        plan: Plan | None = None
        outside_before: dict[str, str | None] = {}
        if mode in ("code", "both"):
            plan = self._plan(entry_id)
            if plan.unrecorded is not None:
                target = store.get_entry(entry_id)
                what = quote(self._point_text(target)) if isinstance(target, MessageEntry) else "this point"
                return RestoreResult(
                    message=f"Cannot restore files to before {what}: {plan.unrecorded}, so nothing was "
                    "restored (a conversation-only restore in /tree still goes back)"
                )
            result, present, outside_before = await self._apply(plan, force)
            if not result.applied:
                result.message = conflict_text(result.conflicts)
                return result
        target = store.get_entry(entry_id)
        if (
            mode in ("conversation", "both")
            and isinstance(target, MessageEntry)
            and target.role == "bashExecution"
        ):
            if target.parent_id is None:
                store.reset_leaf()
            else:
                store.branch(target.parent_id)
            await self._reloaded()
            result.editor_text = bash_text(target)
        elif mode in ("conversation", "both"):
            result.editor_text = await self.session.navigate_tree(entry_id, summarize, instructions)
        redo = None
        if plan is not None and present is not None:
            kind = "undo" if _redo_leaf is not None else "restore"
            redo_leaf = leaf if mode != "code" else store.leaf_id
            redo = Redo(redo_leaf, present, plan.paths, outside_before, self._known or present, kind)
        elif pending is not None:
            redo = pending[1]  # a conversation-only move keeps an earlier code restore redoable
        extra: dict[str, Any] = {}
        if mode == "conversation":
            extra["codeAt"] = code_at[-1].id if code_at else None  # the files stay where they were
        self._record(present, plan, outside_before, redo=redo, extra=extra)
        files = count(result.restored)
        result.message = f"Restored {files}" if files else "No files to restore"
        return result

    def _point_text(self, entry: MessageEntry) -> str:
        if entry.role == "bashExecution":
            return bash_text(entry)
        return user_text(entry.message)

    async def fork(self, entry_id: str, force: bool = False) -> tuple[RestoreResult, str | None]:
        """``/fork`` with code: restore the files to before ``entry_id``, then fork the session there.

        The restore's redo step is carried into the new session file (its leaf: the fork's), so
        ``/redo`` there brings the files back. Returns (the restore, the fork's editor text; None
        when an extension cancelled the fork, the files staying restored and redoable here).
        """
        result = await self.restore(entry_id, "code", force=force)
        if not result.applied:
            return result, None
        store = self.session.store
        last = store.get_leaf_entry()
        redo = last.raw.get("redo") if isinstance(last, UnknownEntry) and last.type == "checkpoint" else None
        text = await self.session.fork(entry_id)
        if text is not None and isinstance(redo, dict):
            carried = dict(redo, leaf=self.session.store.leaf_id)
            self.session.store.append_checkpoint(
                {"kind": "restore", "promptId": None, "files": [], "redo": carried}
            )
            self.session.reload_context()
        return result, text

    def _record(
        self,
        present: str | None,
        plan: Plan | None,
        outside_before: dict[str, str | None],
        *,
        redo: Redo | None = None,
        redid: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Append a ``kind: "restore"`` checkpoint entry at the (new) leaf, so a restart keeps the restore.

        ``redo``: what ``/redo`` needs to reverse this restore (kept in the entry, so it survives a
        restart); ``redid``: the restore entry this one reversed.
        """
        fields: dict[str, Any] = {"kind": "restore", "promptId": None, "files": [], **(extra or {})}
        if redo is not None:
            fields["redo"] = {
                "leaf": redo.leaf,
                "present": redo.present,
                "paths": redo.paths,
                "outside": redo.outside,
                "afterUndo": redo.after_undo,
                "kind": redo.kind,
            }
        if redid is not None:
            fields["redid"] = redid
        if present is not None and plan is not None and self._known is not None:
            fields.update(snapshot=present, after=self._known, files=plan.paths)
            outside = {path: [outside_before.get(path), blob] for path, blob in plan.outside.items()}
            if outside:
                fields["outside"] = outside
        self.session.store.append_checkpoint(fields)
        self.session.reload_context()

    async def _reloaded(self) -> None:
        self.session.reload_context()
        await self._emit_reloaded()


def _sha(blob: str | None) -> str | None:
    return blob.partition(":")[0] if blob is not None else None
