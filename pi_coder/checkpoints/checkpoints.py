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

Pi keeps such entries as unknown ones, so session files stay interchangeable. Outside blobs are
``"<sha>:<octal permission bits>"``; permission bits of files in the folder that differ from the
umask's default ride in the snapshot commit's message. A run whose changes could not be recorded
(checkpoints off) leaves ``{"kind": "off", "reason": ...}`` so an undo says so instead of
pretending. Files outside the folder are read only when they are regular files under the size
limit, opened without blocking; the others are named in the tool's result ("not undoable").

Restoring code to a point of the tree only touches the files that runs changed between the
present branch and that point; the present is snapshotted first (so a restore can be redone), and
files that were changed by hand since pi last saw them are reported as conflicts and left alone
unless the caller forces the restore. Each restore appends a ``kind: "restore"`` checkpoint entry
whose ``redo`` field holds what ``/redo`` needs, so redo works after a restart; a redo's entry
names the restore it reversed (``redid``); a conversation-only restore notes where the files
stayed (``codeAt``). The entries are read by :mod:`pi_coder.checkpoints.plan` and restores
applied by :mod:`pi_coder.checkpoints.restore`; docs/checkpoints.md has the whole picture.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from pi_coder.agent.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    hook_result,
)
from pi_coder.ai.abort import AbortSignal
from pi_coder.checkpoints.plan import CheckpointInfo, RestoreResult
from pi_coder.checkpoints.restore import CheckpointHost, CheckpointRestore, RestoreMode
from pi_coder.checkpoints.shadow_git import GitError, Unsaved, git_available
from pi_coder.session.entries import MessageEntry

__all__ = [
    "READ_ONLY_TOOLS",
    "CheckpointHost",
    "CheckpointInfo",
    "Checkpoints",
    "RestoreMode",
    "RestoreResult",
]

_log = logging.getLogger(__name__)

READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})
"""Built-in tools that never change files; other tools count as mutating unless ``read_only``."""


class Checkpoints(CheckpointRestore):
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
        super().__init__(session, warn=warn, reloaded=reloaded)
        self._off_reason: str | None = None
        self._warned: set[str] = set()
        self._before: str | None = None
        self._prompt_id: str | None = None
        self._outside: dict[str, str | None] = {}
        self._unsaved: dict[str, list[str]] = {}
        """Tool call id -> "path (why)" of outside targets that could not be kept."""
        self._off_run: str | None = None
        """Why this run's changes are not being recorded (a mutating call met checkpoints off)."""
        self._counted = False
        self._pruned = False
        self._prune_task: asyncio.Task[None] | None = None
        self._early: asyncio.Task[str | None] | None = None
        """The run's snapshot, started with the prompt (in parallel with the model's answer)."""
        self._recording: asyncio.Task[None] | None = None
        """The run's closing snapshot and entry, written after the run settled (off its path)."""
        self._paths: list[str] | None = []
        """The folder's paths this run's file-changing calls named, while all were ``write``/``edit``
        (None once another kind ran): the closing snapshot then looks at these alone."""
        self._warm: asyncio.Task[str | None] | None = None
        """A folder's first snapshot, started with the session (see :meth:`warm_up`)."""

    # ------------------------------------------------------------------ wiring

    def install(self) -> None:
        """Hook into the agent (before and after each tool call) and the session's runs."""
        agent = self.session.agent
        inner = agent.before_tool_call
        inner_after = agent.after_tool_call

        async def before_tool_call(
            ctx: BeforeToolCallContext, signal: AbortSignal | None
        ) -> BeforeToolCallResult | None:
            if inner is not None:
                answer = inner(ctx, signal)
                decision = hook_result(await answer if isinstance(answer, Awaitable) else answer, BeforeToolCallResult)
                if decision is not None:
                    return decision
            await self.before_tool(ctx.tool_call.name, ctx.args, ctx.tool_call.id)
            return None

        async def after_tool_call(ctx: AfterToolCallContext, signal: AbortSignal | None) -> AfterToolCallResult | None:
            override = None
            if inner_after is not None:
                answer = inner_after(ctx, signal)
                override = hook_result(await answer if isinstance(answer, Awaitable) else answer, AfterToolCallResult)
            notes = self._unsaved.pop(ctx.tool_call.id, None)
            if not notes:
                return override
            from pi_coder.ai.types import TextContent

            content = list((override.content if override is not None else None) or ctx.result.content)
            content.append(TextContent(text="not undoable: " + "; ".join(notes)))
            if override is None:
                return AfterToolCallResult(content=content)
            override.content = content
            return override

        agent.before_tool_call = before_tool_call
        agent.after_tool_call = after_tool_call
        self.session.add_run_hook(self)
        self.session.subscribe(self._on_event)

    def warm_up(self) -> None:
        """Start watching the folder and take its first snapshot of this process, in the background.

        Called by the TUI (after its first frame), RPC (when serving starts) and ``pi -p`` (before
        its first prompt). The snapshot is a full scan (in a new folder, the store's first
        snapshot of all files); the watcher started just before it makes every later snapshot a
        look at the changed paths alone (:mod:`pi_coder.checkpoints.scanner`). The first prompt is
        not delayed by it: its own snapshot waits for this one (the scanner's lock) only when a
        file-changing tool needs it. Closing the session cancels it; what it added by then is kept
        for the next start.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self.enabled and self._warm is None and git_available():
            settings = self.session.settings.checkpoints
            if self.repo.excludes_current(() if settings.keep_secrets else _secret_patterns()):
                self.scanner.prestart()  # git starts now, not when the loop next gets to the task
            self._warm = loop.create_task(self._snapshot())

    def close(self) -> None:
        """Stop watching the folder (the session is closing; call after :meth:`settled`)."""
        self.scanner.stop("the session closed")

    async def _notice(self, key: str, text: str) -> None:
        if key in self._warned:
            return
        self._warned.add(key)
        await self._warn(text)

    async def _disable(self, key: str, text: str) -> None:
        self._disabled = key
        self.scanner.stop(text)
        self._off_reason = text
        await self._notice(key, text)

    def _on_event(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if (
            kind == "message_end"
            and self._prompt_id is None
            and event.message.role == "user"
        ):
            leaf = self.session.store.get_leaf_entry()
            if isinstance(leaf, MessageEntry) and leaf.role == "user":
                self._prompt_id = leaf.id
        elif kind == "session_switched" and getattr(event, "reason", None) in ("new", "switch", "fork"):
            self._reset_run()
            self._known = None

    def _reset_run(self) -> None:
        self._before, self._prompt_id, self._outside, self._off_run = None, None, {}, None
        self._paths = []

    def abort(self) -> None:
        return None

    async def before_prompt(self, session: object) -> None:
        recording, self._recording = self._recording, None
        if recording is not None:  # the last run's entry
            await recording
        self._reset_run()
        if self.enabled and self._early is None and git_available():
            # Taken while the model thinks: the first file-changing call usually finds it done.
            self._early = asyncio.get_running_loop().create_task(self._snapshot())

    async def _ready(self) -> None:
        early, self._early = self._early, None
        if early is not None:
            try:
                await early
            except (GitError, OSError):
                pass
        recording, self._recording = self._recording, None
        if recording is not None:
            await recording

    async def settled(self) -> None:
        """Wait until the last run's checkpoint entry is written (listings, restores, closing)."""
        await self._ready()
        warm, self._warm = self._warm, None
        if warm is not None and not warm.done():
            warm.cancel()  # nobody waits for it: a prompt's own snapshot would (see warm_up)
        if warm is not None:
            try:
                await warm
            except (GitError, OSError, asyncio.CancelledError):
                pass

    def _mutating(self, name: str) -> bool:
        if name in READ_ONLY_TOOLS:
            return False
        tool = next((t for t in self.session.agent.state.tools if getattr(t, "name", None) == name), None)
        return not getattr(tool, "read_only", False)

    async def before_tool(self, name: str, args: Any, call_id: str = "") -> None:
        """Snapshot before the first file-changing tool call of a run (and keep outside files)."""
        if not self._mutating(name):
            return
        if not self.enabled:
            if self._off_reason is not None and self._off_run is None:
                self._off_run = self._off_reason
            return
        try:
            if self._before is None:
                early, self._early = self._early, None
                snap = await early if early is not None else await self._snapshot()
                if snap is None:
                    self._off_run = self._off_reason or "checkpoints were off"
                    return
                self._before = snap
            targets: list[str] = []
            fields = args.model_dump() if isinstance(args, BaseModel) else args if isinstance(args, dict) else {}
            if name in ("write", "edit"):
                path = fields.get("path")
                if isinstance(path, str):
                    targets.append(path)
                    await self._note_path(path)
                else:
                    self._paths = None
            elif name == "bash":
                command = fields.get("command")
                if isinstance(command, str):
                    from pi_coder.checkpoints.bash_targets import outside_targets

                    targets += await asyncio.to_thread(outside_targets, command, self.session.cwd)
            if name not in ("write", "edit"):
                self._paths = None  # bash and other tools may change any file: a full scan after
            for target in targets:
                why = await self._keep_outside(target)
                if why is not None:
                    self._unsaved.setdefault(call_id, []).append(why)
        except (GitError, OSError) as exc:
            await self._disable("error", f"Checkpoints are off for this session: {exc}")
            self._off_run = self._off_reason

    # ------------------------------------------------------------------ user shell commands

    async def before_user_bash(self, command: str) -> None:
        """Before a ``!`` command: snapshot like a mutating tool call (during a run, the run's snapshot)."""
        if not self.session.is_streaming:
            await self.settled()
        await self.before_tool("bash", {"command": command})
        self._unsaved.pop("", None)

    async def after_user_bash(self, entry_id: str) -> None:
        """After a ``!`` command run while idle: record its changes, with its entry as the undo point."""
        if self._before is None and self._off_run is None:
            return
        self._prompt_id = entry_id
        try:
            await self._record_run(self.session.store)
        finally:
            self._reset_run()

    async def _note_path(self, path: str) -> None:
        """Remember a ``write``/``edit`` target inside the folder (see ``_paths``)."""
        if self._paths is None:
            return
        full = await asyncio.to_thread(_resolve, self.session.cwd, path)
        root = self.repo.cwd.rstrip(os.sep) + os.sep
        if full.startswith(root):
            self._paths.append(full[len(root) :])
        elif full == self.repo.cwd:
            self._paths = None

    async def _keep_outside(self, path: str) -> str | None:
        """Keep a target outside the folder; returns "path (why)" when it cannot be kept."""
        full = await asyncio.to_thread(_resolve, self.session.cwd, path)
        if full == self.repo.cwd or full.startswith(self.repo.cwd.rstrip(os.sep) + os.sep):
            return None
        if full not in self._outside:
            kept = await self.repo.store_blob(full, self._max_bytes())
            if isinstance(kept, Unsaved):
                return f"{full} ({kept})"
            self._outside[full] = kept
        return None

    async def _snapshot(self, only: list[str] | None = None) -> str | None:
        settings = self.session.settings.checkpoints
        if not git_available():
            await self._disable(
                "git", "Checkpoints need git, which was not found: /undo cannot restore files"
            )
            return None
        await self.repo.set_excludes(() if settings.keep_secrets else _secret_patterns())
        if not self._counted and not self.repo.has_snapshot():
            # Once per folder: later snapshots check the files they add (Snapshot.added).
            count = await self.repo.count_files(settings.max_files)
            if count > settings.max_files:
                await self._too_many(settings.max_files)
                return None
        self._counted = True
        snap = await self._take(only)
        if snap.added > settings.max_files:
            await self._too_many(settings.max_files)
            return None
        if snap.skipped_large:
            first = snap.skipped_large[0]
            more = f" and {len(snap.skipped_large) - 1} more" if len(snap.skipped_large) > 1 else ""
            await self._notice(
                "large", f"Checkpoints leave out files over {settings.max_file_mb:g} MB: {first}{more}"
            )
        return snap.commit

    async def _too_many(self, limit: int) -> None:
        await self._disable(
            "files",
            f"Checkpoints are off here: the folder has more than {limit} files (setting checkpoints.max_files)",
        )

    async def after_run(self, session: Any, message: object) -> bool:
        """Record the run in the background: the session is idle (and the prompt back) at once."""
        early, self._early = self._early, None
        store = session.store

        async def record() -> None:
            if early is not None:
                # No file-changing call used the snapshot started with the prompt: stop it (a
                # question asked in a large folder does not wait for a snapshot at exit).
                early.cancel()
                try:
                    await early
                except (GitError, OSError, asyncio.CancelledError):
                    pass
            try:
                await self._record_run(store)
            except Exception:  # a background task: log, never lose the session over it
                _log.exception("recording a checkpoint failed")

        self._recording = asyncio.get_running_loop().create_task(record())
        return False

    async def _record_run(self, store: Any) -> None:
        before, self._before = self._before, None
        paths, self._paths = self._paths, []
        off = self._off_run if before is None else None if self.enabled else self._off_reason
        if off is not None and store.is_persisted:
            # So an undo of this prompt says its files were not recorded instead of pretending.
            store.append_checkpoint({"kind": "off", "promptId": self._prompt_id, "reason": off})
        self._off_run = None
        if before is None or off is not None:
            return
        try:
            after = await self._snapshot(only=paths)
            if after is None:
                store.append_checkpoint(
                    {"kind": "off", "promptId": self._prompt_id, "reason": self._off_reason}
                )
                return
            files = await self.repo.changed_paths(before, after) if after != before else []
            outside: dict[str, list[str | None]] = {}
            for path, old in self._outside.items():
                new = await self.repo.store_blob(path, self._max_bytes())
                kept = None if isinstance(new, Unsaved) else new
                if kept != old:
                    outside[path] = [old, kept]
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
                store.append_checkpoint(fields)
            self._auto_prune()
        except (GitError, OSError) as exc:
            await self._disable("error", f"Checkpoints are off for this session: {exc}")

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
        try:
            try:
                due = time.time() - marker.stat().st_mtime > 86400
            except OSError:  # first use of this shadow repository: nothing old to prune yet
                marker.touch()
                due = False
            # Measuring the store walks all its files: at most once an hour, not every process.
            sized = self.repo.dir / "sized"
            try:
                measure = time.time() - sized.stat().st_mtime > 3600
            except OSError:
                measure = True
            if measure and limit:
                sized.touch()
            if due or (measure and limit and await asyncio.to_thread(self.repo.disk_bytes) > limit):
                marker.touch()
                await self.repo.prune(settings.max_age_days, limit)
        except (GitError, OSError) as exc:
            _log.warning("checkpoint pruning failed: %s", exc)


def _secret_patterns() -> tuple[str, ...]:
    """The permission layer's secret files, as ignore patterns (those inside a folder)."""
    from pi_coder.permissions.rules import DEFAULT_SECRET_PATTERNS

    return tuple(p for p in DEFAULT_SECRET_PATTERNS if not p.startswith(("~", "/")))


def _resolve(cwd: str, path: str) -> str:
    from pi_coder.tools import real_path

    return str(real_path(path, cwd))
