"""Checkpoints: file snapshots tied to the session tree, for /undo, /redo and code restores.

Before the first file-changing tool call of a run (``write``, ``edit``, ``bash`` and any tool
not marked ``read_only``) the working folder is snapshotted into a shadow git repository
(:mod:`pi_coder.checkpoints.shadow_git`); files outside the folder that ``write``/``edit`` touch, or that
a bash command names as targets (:mod:`pi_coder.checkpoints.bash_targets`), are kept as blobs. A user
``!`` command run while idle gets the same pair of snapshots, with its ``bashExecution`` entry as
the undo point. After the run a second snapshot is taken and, when files changed, a
``checkpoint`` entry is appended to the session::

    {"type": "checkpoint", "id": ..., "parentId": ..., "timestamp": ...,
     "promptId": "<user message entry>", "snapshot": "<commit before>", "after": "<commit after>",
     "files": ["src/a.py", ...], "outside": {"/abs/path": ["<blob before>|null", "<blob after>|null"]}}

Pi keeps such entries as unknown ones, so session files stay interchangeable.

Restoring code to a point of the tree only touches the files that runs changed between the
present branch and that point; the present is snapshotted first (so a restore can be redone), and
files that were changed by hand since pi last saw them are reported as conflicts and left alone
unless the caller forces the restore. Each restore appends a ``kind: "restore"`` checkpoint entry
whose ``redo`` field holds what ``/redo`` needs, so redo works after a restart; a redo's entry
names the restore it reversed (``redid``).
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pi_coder.ai.types import TextContent
from pi_coder.checkpoints.shadow_git import GitError, ShadowRepo, git_available, remove_file, write_file
from pi_coder.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    UnknownEntry,
)

if TYPE_CHECKING:
    from pi_coder.agent import Agent
    from pi_coder.session.entries import SessionEntry
    from pi_coder.session.store import SessionStore
    from pi_coder.settings import Settings

__all__ = ["READ_ONLY_TOOLS", "CheckpointHost", "CheckpointInfo", "Checkpoints", "RestoreMode", "RestoreResult"]

_log = logging.getLogger(__name__)

READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})
"""Built-in tools that never change files; other tools count as mutating unless ``read_only``."""

RestoreMode = Literal["code", "conversation", "both"]


class CheckpointHost(Protocol):
    """What :class:`Checkpoints` uses of its session (an ``AgentSession``), without importing it."""

    agent: Agent
    cwd: str
    settings: Settings

    @property
    def store(self) -> SessionStore: ...

    @property
    def session_file(self) -> str | None: ...

    @property
    def is_streaming(self) -> bool: ...

    def add_run_hook(self, hook: Checkpoints) -> None: ...

    def subscribe(self, listener: Callable[[Any], Awaitable[None] | None]) -> Callable[[], None]: ...

    async def navigate_tree(
        self, entry_id: str, summarize: bool = False, instructions: str | None = None
    ) -> str | None: ...

    def reload_context(self) -> None: ...

    async def fork(self, entry_id: str) -> str | None: ...


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
class _Plan:
    target: str | None
    paths: list[str]
    outside: dict[str, str | None]
    expected: str | None
    expected_outside: dict[str, str | None]


@dataclass(slots=True)
class _Redo:
    leaf: str | None
    present: str
    paths: list[str]
    outside: dict[str, str | None]
    after_undo: str


def _checkpoint(entry: SessionEntry) -> dict[str, Any] | None:
    if isinstance(entry, UnknownEntry) and entry.type == "checkpoint":
        raw = entry.raw
        if isinstance(raw.get("snapshot"), str) and isinstance(raw.get("after"), str):
            return raw
    return None


def _is_prompt(entry: SessionEntry) -> bool:
    return isinstance(entry, MessageEntry) and entry.role == "user"


def _is_point(entry: SessionEntry) -> bool:
    """An undo point: a prompt or a user ``!`` command (undoing it goes back to before it)."""
    return isinstance(entry, MessageEntry) and entry.role in ("user", "bashExecution")


def _bash_text(entry: MessageEntry) -> str:
    """``!cmd`` (``!!cmd`` when kept out of the context) for the editor."""
    command = str(entry.message_field("command") or "")
    excluded = entry.message_field("excludeFromContext")
    return ("!!" if excluded else "!") + command


class Checkpoints:
    """The checkpoint feature of one :class:`AgentSession` (``session.checkpoints``).

    A run hook of the session (``core.session_hooks.RunHook``, matched by shape): it snapshots
    before the first file-changing tool call and records the checkpoint after the run. The
    session passes the two events this emits as callbacks: ``warn(text)`` (a warning notice) and
    ``reloaded()`` (the session was reloaded after a restore), so nothing here imports the core.
    """

    is_retrying = False
    is_compacting = False

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
        self._disabled: str | None = None
        self._warned: set[str] = set()
        self._before: str | None = None
        self._prompt_id: str | None = None
        self._outside: dict[str, str | None] = {}
        self._known: str | None = None
        self._counted = False
        self._pruned = False
        self._prune_task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ wiring

    def install(self) -> None:
        """Hook into the agent (before each tool call) and the session's runs."""
        agent = self.session.agent
        inner = agent.before_tool_call

        async def before_tool_call(ctx: Any, signal: Any) -> Any:
            if inner is not None:
                decision = inner(ctx, signal)
                if hasattr(decision, "__await__"):
                    decision = await decision
                if decision is not None:
                    return decision
            await self.before_tool(ctx.tool_call.name, ctx.args)
            return None

        agent.before_tool_call = before_tool_call
        self.session.add_run_hook(self)
        self.session.subscribe(self._on_event)

    @property
    def enabled(self) -> bool:
        settings = self.session.settings.checkpoints
        return settings.enabled and self._disabled is None and self.session.store.is_persisted

    async def _notice(self, key: str, text: str) -> None:
        if key in self._warned:
            return
        self._warned.add(key)
        await self._warn(text)

    async def _disable(self, key: str, text: str) -> None:
        self._disabled = key
        await self._notice(key, text)

    def _on_event(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if (
            kind == "message_end"
            and self._prompt_id is None
            and event.message.role == "user"
        ):
            leaf = self.session.store.get_leaf_entry()
            if leaf is not None and _is_prompt(leaf):
                self._prompt_id = leaf.id
        elif kind == "session_switched" and getattr(event, "reason", None) in ("new", "switch", "fork"):
            self._reset_run()
            self._known = None

    def _reset_run(self) -> None:
        self._before, self._prompt_id, self._outside = None, None, {}

    async def before_prompt(self, session: object) -> None:
        self._reset_run()

    def abort(self) -> None:
        return None

    def _mutating(self, name: str) -> bool:
        if name in READ_ONLY_TOOLS:
            return False
        tool = next((t for t in self.session.agent.state.tools if getattr(t, "name", None) == name), None)
        return not getattr(tool, "read_only", False)

    async def before_tool(self, name: str, args: Any) -> None:
        """Snapshot before the first file-changing tool call of a run (and keep outside files)."""
        if not self.enabled or not self._mutating(name):
            return
        try:
            if self._before is None:
                snap = await self._snapshot()
                if snap is None:
                    return
                self._before = snap
            if name in ("write", "edit"):
                path = getattr(args, "path", None) or (args.get("path") if isinstance(args, dict) else None)
                if isinstance(path, str):
                    await self._keep_outside(path)
            elif name == "bash":
                command = getattr(args, "command", None) or (args.get("command") if isinstance(args, dict) else None)
                if isinstance(command, str):
                    await self._keep_bash_targets(command)
        except (GitError, OSError) as exc:
            await self._disable("error", f"Checkpoints are off for this session: {exc}")

    async def _keep_bash_targets(self, command: str) -> None:
        from pi_coder.checkpoints.bash_targets import outside_targets

        for path in await asyncio.to_thread(outside_targets, command, self.session.cwd):
            await self._keep_outside(path)

    # ------------------------------------------------------------------ user shell commands

    async def before_user_bash(self, command: str) -> None:
        """Before a ``!`` command: snapshot like a mutating tool call (during a run, the run's snapshot)."""
        await self.before_tool("bash", {"command": command})

    async def after_user_bash(self, entry_id: str) -> None:
        """After a ``!`` command run while idle: record its changes, with its entry as the undo point."""
        if self._before is None:
            return
        self._prompt_id = entry_id
        try:
            await self.after_run(self.session, None)
        finally:
            self._reset_run()

    async def _keep_outside(self, path: str) -> None:
        full = await asyncio.to_thread(_resolve, self.session.cwd, path)
        if full == self.repo.cwd or full.startswith(self.repo.cwd.rstrip(os.sep) + os.sep):
            return
        if full not in self._outside:
            self._outside[full] = await self.repo.store_blob(full)

    async def _snapshot(self) -> str | None:
        settings = self.session.settings.checkpoints
        if not git_available():
            await self._disable(
                "git", "Checkpoints need git, which was not found: /undo cannot restore files"
            )
            return None
        if not self._counted:
            self._counted = True
            count = await self.repo.count_files(settings.max_files)
            if count > settings.max_files:
                await self._disable(
                    "files",
                    f"Checkpoints are off here: the folder has more than {settings.max_files} files "
                    "(setting checkpoints.max_files)",
                )
                return None
        snap = await self.repo.snapshot(int(settings.max_file_mb * 1024 * 1024))
        if snap.skipped_large:
            first = snap.skipped_large[0]
            more = f" and {len(snap.skipped_large) - 1} more" if len(snap.skipped_large) > 1 else ""
            await self._notice(
                "large", f"Checkpoints leave out files over {settings.max_file_mb:g} MB: {first}{more}"
            )
        return snap.commit

    async def after_run(self, session: object, message: object) -> bool:
        if self._before is None or not self.enabled:
            return False
        before, self._before = self._before, None
        try:
            after = await self._snapshot()
            if after is None:
                return False
            files = await self.repo.changed_paths(before, after)
            outside: dict[str, list[str | None]] = {}
            for path, old in self._outside.items():
                new = await self.repo.store_blob(path)
                if new != old:
                    outside[path] = [old, new]
            self._outside = {}
            self._known = after
            if files or outside:
                fields: dict[str, Any] = {
                    "promptId": self._prompt_id,
                    "snapshot": before,
                    "after": after,
                    "files": files,
                }
                if outside:
                    fields["outside"] = outside
                self.session.store.append_checkpoint(fields)
            self._auto_prune()
        except (GitError, OSError) as exc:
            await self._disable("error", f"Checkpoints are off for this session: {exc}")
        return False

    def _auto_prune(self) -> None:
        """Once per session, in the background (the run ends without waiting for ``git gc``)."""
        if self._pruned:
            return
        self._pruned = True
        self._prune_task = asyncio.get_running_loop().create_task(self._prune())

    async def _prune(self) -> None:
        settings = self.session.settings.checkpoints
        limit = settings.max_store_mb * 1024 * 1024
        marker = self.repo.dir / "pruned"
        import time

        try:
            try:
                due = time.time() - marker.stat().st_mtime > 86400
            except OSError:  # first use of this shadow repository: nothing old to prune yet
                marker.touch()
                due = False
            if due or (limit and await asyncio.to_thread(self.repo.disk_bytes) > limit):
                marker.touch()
                await self.repo.prune(settings.max_age_days, limit)
        except (GitError, OSError) as exc:
            _log.warning("checkpoint pruning failed: %s", exc)

    # ------------------------------------------------------------------ reading

    def list(self) -> list[CheckpointInfo]:
        """Every checkpoint entry of the session, in file order."""
        store = self.session.store
        on_branch = {entry.id for entry in store.get_branch()}
        out: list[CheckpointInfo] = []
        for entry in store.get_entries():
            raw = _checkpoint(entry)
            if raw is None or raw.get("kind") == "restore":
                continue
            prompt_id = raw.get("promptId") if isinstance(raw.get("promptId"), str) else None
            prompt_entry = store.get_entry(prompt_id) if prompt_id else None
            prompt = ""
            if isinstance(prompt_entry, MessageEntry) and prompt_entry.role == "bashExecution":
                prompt = _bash_text(prompt_entry)
            elif isinstance(prompt_entry, MessageEntry):
                prompt = _user_text(prompt_entry.message)
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

    async def diff(self, checkpoint_id: str) -> str:
        """The unified diff of the files one checkpoint's run changed."""
        info = next((c for c in self.list() if c.id == checkpoint_id), None)
        if info is None:
            raise KeyError(f"Checkpoint {checkpoint_id} not found")
        return await self.repo.diff(info.snapshot, info.after, info.files)

    # ------------------------------------------------------------------ planning

    def _plan(self, target_id: str) -> _Plan:
        """What restoring the files to the point before/at ``target_id`` means."""
        store = self.session.store
        target = store.get_entry(target_id)
        if target is None:
            raise KeyError(f"Entry {target_id} not found")
        current = store.get_branch()
        point = store.get_branch(target.parent_id) if _is_point(target) and target.parent_id else []
        if not _is_point(target):
            point = store.get_branch(target_id)
        common = 0
        while common < min(len(current), len(point)) and current[common].id == point[common].id:
            common += 1
        undone = [raw for entry in current[common:] if (raw := _checkpoint(entry)) is not None]
        redone = [raw for entry in point[common:] if (raw := _checkpoint(entry)) is not None]
        paths: dict[str, None] = {}
        outside: dict[str, str | None] = {}
        expected_outside: dict[str, str | None] = {}
        for raw in undone:
            paths.update(dict.fromkeys(raw.get("files") or []))
            for path, (old, new) in (raw.get("outside") or {}).items():
                outside.setdefault(path, old)
                expected_outside[path] = new
        for raw in redone:
            paths.update(dict.fromkeys(raw.get("files") or []))
            for path, (_old, new) in (raw.get("outside") or {}).items():
                outside[path] = new
        if redone:
            target_commit: str | None = redone[-1]["after"]
        elif undone:
            target_commit = undone[0]["snapshot"]
        else:
            target_commit = None
        last = next((raw for entry in reversed(current) if (raw := _checkpoint(entry)) is not None), None)
        expected = self._known or (last["after"] if last else None)
        return _Plan(target_commit, list(paths), outside, expected, expected_outside)

    def changes_code(self, entry_id: str) -> bool:
        """True when going to the point of ``entry_id`` would change files (checkpoints between here and there)."""
        store = self.session.store
        entry = store.get_entry(entry_id)
        if entry is None or not self.enabled:
            return False
        raw = _checkpoint(entry)
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
        raw = _checkpoint(entry)
        if raw is not None and isinstance(raw.get("promptId"), str) and store.get_entry(raw["promptId"]):
            return str(raw["promptId"])
        return entry_id

    async def hand_edits(self, entry_id: str) -> builtins.list[str]:
        """Files changed by hand since pi last saw them that restoring code to ``entry_id`` would overwrite.

        Lets a caller confirm before a long step (``/tree`` summarising the branch); ``restore``
        checks again. Snapshots the present (kept, shared with the restore's own snapshot).
        """
        entry_id = self._point(entry_id)
        plan = self._plan(entry_id)
        if plan.target is None and not plan.outside:
            return []
        return await self._conflicts(plan, await self._snapshot_or_raise())

    async def _conflicts(self, plan: _Plan, present: str) -> builtins.list[str]:
        if plan.expected is None or plan.target is None:
            out: builtins.list[str] = []
        else:
            now = await self.repo.entries(present, plan.paths)
            seen = await self.repo.entries(plan.expected, plan.paths)
            goal = await self.repo.entries(plan.target, plan.paths)
            out = [p for p in plan.paths if now.get(p) != seen.get(p) and now.get(p) != goal.get(p)]
        for path, expected in plan.expected_outside.items():
            current = await self.repo.store_blob(path)
            if current != expected and current != plan.outside.get(path):
                out.append(path)
        return out

    async def _apply(
        self, plan: _Plan, force: bool
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
            outside_before[path] = await self.repo.store_blob(path)
            if outside_before[path] == blob:
                continue
            if blob is None:
                await asyncio.to_thread(remove_file, path, os.path.dirname(path))
            else:
                await asyncio.to_thread(write_file, path, "100644", await self.repo.read_blob(blob))
            result.restored.append(path)
        self._known = (await self.repo.snapshot(self._max_bytes())).commit
        result.applied = True
        return result, present, outside_before

    def _max_bytes(self) -> int:
        return int(self.session.settings.checkpoints.max_file_mb * 1024 * 1024)

    async def _snapshot_or_raise(self) -> str:
        if not git_available():
            raise GitError("git was not found")
        return (await self.repo.snapshot(self._max_bytes())).commit

    # ------------------------------------------------------------------ restoring

    def _last_prompt(self) -> MessageEntry | None:
        for entry in reversed(self.session.store.get_branch()):
            if isinstance(entry, MessageEntry) and _is_point(entry):
                return entry
        return None

    async def undo(self, force: bool = False) -> RestoreResult:
        """Undo the last prompt: its files back, the session leaf before it, its text for the editor."""
        self._check_idle()
        prompt = self._last_prompt()
        if prompt is None:
            return RestoreResult(message="Nothing to undo")
        leaf = self.session.store.leaf_id
        result = await self.restore(prompt.id, "both", force=force, _redo_leaf=leaf)
        if result.applied:
            files = _count(result.restored)
            result.message = f"Undid {_quote(result.editor_text or '')}" + (
                f"; restored {files}" if files else ""
            )
        return result

    def _redo_step(self) -> tuple[str, _Redo] | None:
        """The latest restore on the present branch not yet redone, while nothing new was said.

        Read from the session's restore entries (their ``redo`` field), so ``/redo`` works after a
        restart too. A message or a run's checkpoint after the restore ends the chance to redo.
        """
        redone: set[str] = set()
        for entry in reversed(self.session.store.get_branch()):
            raw = entry.raw if isinstance(entry, UnknownEntry) and entry.type == "checkpoint" else None
            if raw is None:
                if isinstance(entry, (MessageEntry, CustomMessageEntry, CompactionEntry, BranchSummaryEntry)):
                    return None
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
                return entry.id, _Redo(
                    leaf if isinstance(leaf, str) else None,
                    data["present"],
                    [p for p in data.get("paths") or [] if isinstance(p, str)],
                    {str(k): v if isinstance(v, str) else None for k, v in outside.items()},
                    str(data.get("afterUndo") or data["present"]),
                )
        return None

    async def redo(self, force: bool = False) -> RestoreResult:
        """Reverse the last undo (while nothing new was sent)."""
        self._check_idle()
        found = self._redo_step()
        if found is None:
            return RestoreResult(message="Nothing to redo")
        undo_id, step = found
        plan = _Plan(step.present, step.paths, step.outside, step.after_undo, {})
        result, _present, outside_before = await self._apply(plan, force)
        if not result.applied:
            result.message = _conflict_text(result.conflicts)
            return result
        store = self.session.store
        if step.leaf is None:
            store.reset_leaf()
        else:
            store.branch(step.leaf)
        self._record(_present, plan, outside_before, redid=undo_id)
        await self._reloaded()
        files = _count(result.restored)
        result.message = "Redid the last undone prompt" + (f"; restored {files}" if files else "")
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
        entry_id = self._point(entry_id)
        store = self.session.store
        leaf = store.leaf_id
        pending = self._redo_step() if mode == "conversation" else None
        result = RestoreResult(applied=True)
        present: str | None = None
        plan: _Plan | None = None
        outside_before: dict[str, str | None] = {}
        if mode in ("code", "both"):
            plan = self._plan(entry_id)
            result, present, outside_before = await self._apply(plan, force)
            if not result.applied:
                result.message = _conflict_text(result.conflicts)
                return result
        target = store.get_entry(entry_id)
        if mode in ("conversation", "both") and isinstance(target, MessageEntry) and target.role == "bashExecution":
            if target.parent_id is None:
                store.reset_leaf()
            else:
                store.branch(target.parent_id)
            await self._reloaded()
            result.editor_text = _bash_text(target)
        elif mode in ("conversation", "both"):
            result.editor_text = await self.session.navigate_tree(entry_id, summarize, instructions)
        redo = None
        if plan is not None and present is not None:
            redo = _Redo(leaf if mode != "code" else store.leaf_id, present, plan.paths, outside_before, self._known or present)
        elif pending is not None:
            redo = pending[1]  # a conversation-only move keeps an earlier code restore redoable
        self._record(present, plan, outside_before, redo=redo)
        files = _count(result.restored)
        result.message = f"Restored {files}" if files else "No files to restore"
        return result

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
            self.session.store.append_checkpoint({"kind": "restore", "promptId": None, "files": [], "redo": carried})
            self.session.reload_context()
        return result, text

    def _record(
        self,
        present: str | None,
        plan: _Plan | None,
        outside_before: dict[str, str | None],
        *,
        redo: _Redo | None = None,
        redid: str | None = None,
    ) -> None:
        """Append a ``kind: "restore"`` checkpoint entry at the (new) leaf, so a restart keeps the restore.

        ``redo``: what ``/redo`` needs to reverse this restore (kept in the entry, so it survives a
        restart); ``redid``: the restore entry this one reversed.
        """
        fields: dict[str, Any] = {"kind": "restore", "promptId": None, "files": []}
        if redo is not None:
            fields["redo"] = {
                "leaf": redo.leaf,
                "present": redo.present,
                "paths": redo.paths,
                "outside": redo.outside,
                "afterUndo": redo.after_undo,
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

    def _check_idle(self) -> None:
        if self.session.is_streaming:
            raise RuntimeError("Wait for the agent to finish before restoring")


def _user_text(message: Any) -> str:
    """The text of a user message (text blocks joined), or ``""`` (as ``core._queue.user_text``)."""
    if message.role != "user":
        return ""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


def _resolve(cwd: str, path: str) -> str:
    return os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))


def _count(paths: list[str]) -> str:
    return f"{len(paths)} file" + ("" if len(paths) == 1 else "s") if paths else ""


def _quote(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return f'"{line[:60]}…"' if len(line) > 60 else f'"{line}"'


def _conflict_text(conflicts: list[str]) -> str:
    shown = ", ".join(conflicts[:5]) + (f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else "")
    return f"Changed by hand since pi saw them (restore not done; force to overwrite): {shown}"
