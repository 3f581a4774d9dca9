"""``pi -c --undo`` and ``pi checkpoints gc``: checkpoints from the command line."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from typing import TYPE_CHECKING

from pi_coder.checkpoints.shadow_git import GitError

if TYPE_CHECKING:
    from pi_coder.checkpoints.plan import RestoreResult
    from pi_coder.core.agent_session import AgentSession

__all__ = ["run_checkpoints_command", "run_undo"]

_USAGE = "Usage: pi checkpoints gc   (prune file snapshots past checkpoints.max_age_days / max_store_mb)"


def run_undo(session: AgentSession, *, force: bool = False) -> int:
    """Undo the session's last prompt (files and conversation); prints one line; returns the exit code."""

    async def undo() -> RestoreResult:
        try:
            return await session.checkpoints.undo(force=force)
        finally:
            await session.close()

    try:
        result = asyncio.run(undo())
    except (GitError, OSError) as exc:
        print(f"Cannot undo: {exc}", file=sys.stderr)
        return 1
    if not result.applied:
        print(
            result.message if not result.conflicts else result.message.replace("force", "--force"),
            file=sys.stderr,
        )
        return 1
    print(result.message)
    return 0


def run_checkpoints_command(args: list[str]) -> int:
    """``pi checkpoints gc [--all]``: prune every folder's shadow repository."""
    if args[:1] != ["gc"] or len(args) > 2 or (len(args) == 2 and args[1] != "--all"):
        print(_USAGE, file=sys.stderr)
        return 2
    from pi_coder.checkpoints.shadow_git import ShadowRepo, git_available, shadow_root
    from pi_coder.settings import load_settings

    if not git_available():
        print("pi checkpoints gc needs git, which was not found", file=sys.stderr)
        return 1
    settings = load_settings(".").settings.checkpoints
    root = shadow_root()
    if not root.is_dir():
        print("No checkpoints stored")
        return 0
    everything = len(args) == 2
    total_refs = total_bytes = gone = 0
    for folder in sorted(root.iterdir()):
        cwd_file = folder / "cwd"
        if not cwd_file.is_file():
            continue
        cwd = cwd_file.read_text().strip()
        if not os.path.isdir(cwd):  # the folder is gone: so are its checkpoints
            shutil.rmtree(folder, ignore_errors=True)
            gone += 1
            continue
        repo = ShadowRepo(cwd, root)
        repo.dir, repo.git_dir = folder, folder / "git"
        try:
            days = -1 if everything else settings.max_age_days
            removed, size = asyncio.run(repo.prune(days, settings.max_store_mb * 1024 * 1024))
        except GitError as exc:
            print(f"{folder.name}: {exc}", file=sys.stderr)
            continue
        total_refs += removed
        total_bytes += size
    note = f"; removed the stores of {gone} folders that no longer exist" if gone else ""
    print(f"Pruned {total_refs} snapshots; {total_bytes / 1e6:.1f} MB of checkpoints kept{note}")
    return 0
