"""/undo, /redo and /checkpoints: the TUI side of ``pi_coder.checkpoints.checkpoints``."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pi_coder.checkpoints.checkpoints import Checkpoints
    from pi_coder.checkpoints.plan import RestoreResult
    from pi_coder.checkpoints.restore import RestoreMode
    from pi_coder.tui.context import CommandContext

__all__ = [
    "ask_restore_mode",
    "checkpoints_command",
    "confirm_hand_edits",
    "fork_with_code",
    "redo_command",
    "restore_both",
    "restore_code",
    "undo_command",
]


def _feature(app: CommandContext) -> Checkpoints:
    return app.session.checkpoints


async def _confirmed(app: CommandContext, conflicts: list[str], verb: str) -> bool:
    from pi_coder.tui.screens.dialogs import ConfirmDialog

    shown = "\n".join(f"  {path}" for path in conflicts[:10])
    more = f"\n  and {len(conflicts) - 10} more" if len(conflicts) > 10 else ""
    message = f"These files were changed by hand since pi last saw them:\n{shown}{more}\n\n{verb} anyway and overwrite them?"
    return bool(await app.push_screen_wait(ConfirmDialog(message, title=verb, yes="Overwrite", no="Keep them")))


class _Step(Protocol):
    """``Checkpoints.undo`` or ``Checkpoints.redo``."""

    def __call__(self, force: bool = False) -> Awaitable[RestoreResult]: ...


async def _run(app: CommandContext, step: str, verb: str, call: _Step) -> None:
    if app.session.is_streaming:
        await app.notice(f"Wait for the agent to finish before /{step}", "warning")
        return
    try:
        result = await call()
        if result.conflicts and not result.applied:
            if not await _confirmed(app, result.conflicts, verb):
                await app.notice(f"{verb} cancelled; nothing changed")
                return
            result = await call(force=True)
    except Exception as exc:  # GitError and friends: one line, never a traceback
        await app.notice(f"{verb} failed: {exc}", "error")
        return
    if result.editor_text is not None:
        app.editor.set_text(result.editor_text)
    if result.applied:
        from pi_coder.core.events import Notice

        # Through the session's events, so it lands after the transcript rebuilt for the move.
        await app.session.emit(Notice(level="info", text=result.message))
        return
    await app.notice(result.message, "info" if result.applied else "warning")


async def ask_restore_mode(app: CommandContext, entry_id: str, action: str) -> str | None:
    """For /tree and /fork: ``"both"``, ``"conversation"`` or ``"code"``; ``None`` when cancelled.

    Asks only when files changed after the chosen point; otherwise the answer is ``"conversation"``.
    """
    from pi_coder.tui.screens.dialogs import ChoiceDialog

    feature = _feature(app)
    try:
        await feature.settled()  # the last run's entry is written in the background
        changes = feature.changes_code(entry_id)
    except Exception:  # an unreadable checkpoint: offer the conversation as before
        changes = False
    if not changes:
        return "conversation"
    choice = await app.push_screen_wait(
        ChoiceDialog(
            "Restore",
            [("both", "Conversation and code"), ("conversation", "Conversation only"), ("code", "Code only")],
            message=f"Files changed after this point. What should {action} restore?",
        )
    )
    return choice if isinstance(choice, str) else None


async def _restore(app: CommandContext, entry_id: str, mode: RestoreMode) -> RestoreResult | None:
    """``checkpoints.restore`` (what RPC ``restore_checkpoint`` runs), confirming hand edits; None when not done."""
    feature = _feature(app)
    try:
        result = await feature.restore(entry_id, mode)
        if result.conflicts and not result.applied:
            if not await _confirmed(app, result.conflicts, "Restore"):
                await app.notice("Restore cancelled; nothing changed")
                return None
            result = await feature.restore(entry_id, mode, force=True)
    except Exception as exc:  # GitError and friends: one line, never a traceback
        await app.notice(f"Restore failed: {exc}", "error")
        return None
    if not result.applied:
        await app.notice(result.message, "warning")
        return None
    return result


async def restore_code(app: CommandContext, entry_id: str) -> bool:
    """Restore the files to the point of ``entry_id`` (confirming hand edits); True when done."""
    result = await _restore(app, entry_id, "code")
    if result is not None:
        await app.notice(result.message)
    return result is not None


async def confirm_hand_edits(app: CommandContext, entry_id: str) -> bool | None:
    """Before a restore of files and conversation: True to overwrite hand edits, False when there are none.

    None when the user keeps them (or the check failed: one notice), so nothing should change.
    """
    feature = _feature(app)
    try:
        conflicts = await feature.hand_edits(entry_id)
    except Exception as exc:
        await app.notice(f"Restore failed: {exc}", "error")
        return None
    if not conflicts:
        return False
    if not await _confirmed(app, conflicts, "Restore"):
        await app.notice("Restore cancelled; nothing changed")
        return None
    return True


async def restore_both(
    app: CommandContext,
    entry_id: str,
    summarize: bool = False,
    instructions: str | None = None,
    force: bool = False,
) -> tuple[bool, str | None]:
    """Files and conversation to the point of ``entry_id`` in one restore, so ``/redo`` reverses both.

    Hand edits are confirmed beforehand (:func:`confirm_hand_edits`); returns (done, text for the editor).
    """
    feature = _feature(app)
    try:
        result = await feature.restore(
            entry_id, "both", force=force, summarize=summarize, instructions=instructions
        )
    except Exception as exc:
        await app.notice(f"Restore failed: {exc}", "error")
        return False, None
    if not result.applied:
        await app.notice(result.message, "warning")
        return False, None
    from pi_coder.core.events import Notice

    # Through the session's events, so it lands after the transcript rebuilt for the move.
    await app.session.emit(Notice(level="info", text=result.message))
    return True, result.editor_text


async def fork_with_code(app: CommandContext, entry_id: str) -> tuple[bool, str | None]:
    """``/fork`` with "Conversation and code" (hand edits confirmed); returns (restored, fork text)."""
    force = await confirm_hand_edits(app, entry_id)
    if force is None:
        return False, None
    try:
        result, text = await _feature(app).fork(entry_id, force=force)
    except Exception as exc:
        await app.notice(f"Fork failed: {exc}", "error")
        return False, None
    if not result.applied:
        await app.notice(result.message, "warning")
        return False, None
    await app.notice(result.message)
    return True, text


async def undo_command(app: CommandContext, args: str) -> None:
    await _run(app, "undo", "Undo", _feature(app).undo)


async def redo_command(app: CommandContext, args: str) -> None:
    await _run(app, "redo", "Redo", _feature(app).redo)


async def checkpoints_command(app: CommandContext, args: str) -> None:
    """``/checkpoints``: files changed per prompt; ``/checkpoints <n>`` shows the diff of one."""
    feature = _feature(app)
    await feature.settled()
    infos = [info for info in feature.list() if info.on_branch]
    if not infos:
        await app.notice("No checkpoints yet: nothing on this branch changed files")
        return
    choice = args.strip()
    if choice:
        if not choice.isdigit() or not 1 <= int(choice) <= len(infos):
            await app.notice(f"Usage: /checkpoints [1-{len(infos)}]", "warning")
            return
        info = infos[int(choice) - 1]
        diff = await feature.diff(info.id)
        await app.show_markdown(
            f"**Checkpoint {choice}**: {info.prompt or '(no prompt)'}\n\n```diff\n{diff}\n```"
        )
        return
    lines = ["**Checkpoints** (this branch; `/checkpoints <n>` shows a diff, `/undo` restores the last)", ""]
    for number, info in enumerate(infos, 1):
        prompt = (info.prompt.strip().splitlines() or ["(no prompt)"])[0][:70]
        files = ", ".join(info.files[:6] + info.outside[:2])
        extra = len(info.files) + len(info.outside) - len(info.files[:6]) - len(info.outside[:2])
        lines.append(f"{number}. {prompt} — {files}" + (f" and {extra} more" if extra > 0 else ""))
    await app.show_markdown("\n".join(lines))
