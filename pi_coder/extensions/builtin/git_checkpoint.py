"""git-checkpoint (docs/extensions-runtime.md#first-party-extensions): a ``git stash create`` snapshot per turn, offered back on fork.

``-e builtin:git-checkpoint``. Each ``turn_start`` records the working tree (a stash commit that
touches neither the index nor the stash list) for the current leaf entry. Forking from an entry
with a checkpoint asks (UI only) whether to restore the files with ``git stash apply``. Outside
a git repository it does nothing.

Every git call runs with ``pi_coder.safe_git``'s overrides: a ``.git/config`` written by the model
or a sandboxed command (``core.fsmonitor``, hooks, pagers, ``diff.external``, filters, merge
drivers, textconv, and the same keys in files it includes) runs nothing here, outside any sandbox.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from pi_coder.safe_git import safe_git_options

if TYPE_CHECKING:
    from pi_coder.extensions import ExecResult, ExtensionAPI

Exec = Callable[..., Awaitable["ExecResult"]]


async def run_git(exec_: Exec, args: Sequence[str], cwd: str, timeout: float) -> ExecResult:
    """``git args...`` with the repository's program-running settings overridden (``safe_git``)."""
    listing = await exec_("git", ["--no-pager", "config", "--list", "--name-only"], cwd=cwd, timeout=timeout)
    options = safe_git_options(listing.stdout if listing.code == 0 else "")
    return await exec_("git", [*options, *args], cwd=cwd, timeout=timeout)


def extension(pi: ExtensionAPI) -> None:
    checkpoints: dict[str, str] = {}  # entry id -> stash commit

    async def in_git(ctx: Any) -> bool:
        out = await run_git(pi.exec, ["rev-parse", "--is-inside-work-tree"], ctx.cwd, 5)
        return out.code == 0 and out.stdout.strip() == "true"

    @pi.on("turn_start")
    async def snapshot(event: Any, ctx: Any) -> None:
        leaf = ctx.session.leaf_id
        if leaf is None or leaf in checkpoints or not await in_git(ctx):
            return
        out = await run_git(pi.exec, ["stash", "create"], ctx.cwd, 30)
        ref = out.stdout.strip()
        if out.code == 0 and ref:  # empty when the tree is clean: nothing to restore
            checkpoints[leaf] = ref

    @pi.on("session_before_fork")
    async def offer(event: Any, ctx: Any) -> None:
        ref = checkpoints.get(event.entry_id)
        if ref is None:
            entry = ctx.session.get_entry(event.entry_id)  # the fork point is a user message; its parent was the leaf
            ref = checkpoints.get(getattr(entry, "parent_id", None) or "")
        if ref is None or not ctx.has_ui:
            return
        if await ctx.ui.confirm("Restore files?", f"Restore the working tree saved at this point ({ref[:8]})?"):
            out = await run_git(pi.exec, ["stash", "apply", ref], ctx.cwd, 60)
            ctx.ui.notify("Files restored" if out.code == 0 else f"git stash apply failed: {out.stderr.strip()}",
                          "info" if out.code == 0 else "error")
