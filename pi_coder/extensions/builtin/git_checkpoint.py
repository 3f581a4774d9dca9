"""git-checkpoint (docs/extensions-runtime.md#first-party-extensions): a ``git stash create`` snapshot per turn, offered back on fork.

``-e builtin:git-checkpoint``. Each ``turn_start`` records the working tree (a stash commit that
touches neither the index nor the stash list) for the current leaf entry. Forking from an entry
with a checkpoint asks (UI only) whether to restore the files with ``git stash apply``. Outside
a git repository it does nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    checkpoints: dict[str, str] = {}  # entry id -> stash commit

    async def in_git(ctx: Any) -> bool:
        out = await pi.exec("git", ["rev-parse", "--is-inside-work-tree"], cwd=ctx.cwd, timeout=5)
        return out.code == 0 and out.stdout.strip() == "true"

    @pi.on("turn_start")
    async def snapshot(event: Any, ctx: Any) -> None:
        leaf = ctx.session.leaf_id
        if leaf is None or leaf in checkpoints or not await in_git(ctx):
            return
        out = await pi.exec("git", ["stash", "create"], cwd=ctx.cwd, timeout=30)
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
            out = await pi.exec("git", ["stash", "apply", ref], cwd=ctx.cwd, timeout=60)
            ctx.ui.notify("Files restored" if out.code == 0 else f"git stash apply failed: {out.stderr.strip()}",
                          "info" if out.code == 0 else "error")
