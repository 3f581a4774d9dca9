"""Taking snapshots cheaply: with the folder watched, only the paths that changed are looked at.

:class:`Scanner` is the one way snapshots are taken (runs, ``!`` commands, restores). The first
snapshot of a process is a full scan (git's ``ls-files`` against the shadow index's stat cache)
taken after a :mod:`~pi_coder.checkpoints.watch` watcher is up; from then on each snapshot asks
the watcher what changed and hands git those paths alone, so "nothing changed" costs no git call
(the last snapshot is the answer) and seven changed files cost a look at seven paths. A full scan
is taken again whenever the partial one cannot be trusted:

- the watcher may have missed something (queue overflow, a ``.gitignore`` or exclude file changed:
  it starts over and says so), stopped (watch limit, the folder moved) or could not start (not
  Linux, a network file system, too many folders): then every snapshot is a full scan, as before
  the watcher existed, with the ``only`` hint of write/edit runs still used;
- the store's last snapshot is not the one this process took (another ``pi`` in the same folder
  took one since, or pruning dropped it);
- the last snapshot failed or was cancelled half-way (what it drained is not recorded anywhere);
- more than :data:`MAX_PATHS` paths changed (a full scan is cheaper than naming them all).

docs/checkpoints.md has the measurements behind this.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pi_coder.checkpoints.shadow_git import Scan, ShadowRepo, Snapshot

if TYPE_CHECKING:
    from pi_coder.checkpoints.watch import FolderWatch

__all__ = ["MAX_PATHS", "Scanner"]

_log = logging.getLogger(__name__)

MAX_PATHS = 1000
"""Past this many changed paths a snapshot scans the whole folder."""


class Scanner:
    """Snapshots of one shadow repository's folder (see the module docstring)."""

    def __init__(self, repo: ShadowRepo, *, watch: bool = True) -> None:
        self.repo = repo
        self._lock = asyncio.Lock()
        self._watch: FolderWatch | None = None
        self.unwatched: str | None = None if watch else "watching is off"
        """Why the folder is not watched (None while it is, or before the first snapshot)."""
        self._base: str | None = None
        """The commit of the last snapshot taken while watching: the base of the next partial one."""
        self._pending: Scan | None = None
        """A full scan started by :meth:`prestart`, for the next snapshot."""
        self.full_scans = 0
        self.partial_scans = 0

    @property
    def watching(self) -> bool:
        return self._watch is not None and self._watch.alive

    def _start(self) -> None:
        """Start the watcher (before a full scan, so that scan is its base)."""
        from pi_coder.checkpoints import watch  # ctypes: only where checkpoints run

        excludes = self.repo.excludes or ()
        root = self.repo.dir.parent
        started = watch.start(self.repo.cwd, skip=[str(root)], excludes=excludes)
        if isinstance(started, str):
            self._gave_up(started)
        else:
            self._watch = started

    def _gave_up(self, reason: str) -> None:
        self.unwatched = reason
        self._watch = None
        self._base = None
        _log.info("checkpoints: full scans of %s (%s)", self.repo.cwd, reason)

    def _changed(self) -> set[str] | None:
        """What changed since the base (None: scan everything), the watcher restarted if needed."""
        if self._watch is None and self.unwatched is None:
            self._start()
            return None
        current = self._watch
        if current is None:
            return None
        excludes = tuple(self.repo.excludes or ())
        if current.excludes != excludes:  # other files count now: watch (and prune) anew
            current.reset(excludes)
            dirty = None
        else:
            dirty = current.drain()
        if not current.alive:
            self._gave_up(current.reason or "the watcher stopped")
        return dirty

    def prestart(self) -> None:
        """Start watching and the first full scan right now, before the event loop gets to it.

        For the first snapshot of a process (``warm_up``): its git process then runs while the
        prompt is being sent instead of after. Does nothing once watching started, or when the
        store is not ready for it (:meth:`ShadowRepo.start_scan`): :meth:`take` does it all then.
        """
        if self._watch is not None or self.unwatched is not None or self._lock.locked():
            return
        self._start()
        self._pending = self.repo.start_scan()  # after the watcher: the scan is its base

    async def take(self, max_file_bytes: int, only: Sequence[str] | None = None) -> Snapshot:
        """A snapshot of the folder now.

        ``only``: without a watcher, the paths known to be the only ones changed since the last
        snapshot (see :meth:`ShadowRepo.snapshot`); with one, the watcher knows better.
        """
        async with self._lock:
            pending, self._pending = self._pending, None
            if pending is not None:  # started after the watcher, with nothing drained since
                self._base = None
                self.full_scans += 1
                snap = await self.repo.snapshot(max_file_bytes, scan=pending)
                if self.watching:
                    self._base = snap.commit
                return snap
            dirty = self._changed()
            base, self._base = self._base, None  # a snapshot cut short leaves no base behind
            last = self.repo.last_commit()
            if dirty is not None and base is not None and last == base and len(dirty) <= MAX_PATHS:
                self.partial_scans += 1
                snap = await self.repo.snapshot(max_file_bytes, only=sorted(dirty))
            else:
                self.full_scans += 1
                snap = await self.repo.snapshot(max_file_bytes, only=only if self._watch is None else None)
            if self.watching:
                self._base = snap.commit
            return snap

    def stop(self, reason: str = "checkpoints are off") -> None:
        """Stop watching (checkpoints turned off, the session closing)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.cancel()
        if self._watch is not None:
            self._watch.stop(reason)
        self._watch = None
        self._base = None
        self.unwatched = reason
