"""``/clone``, ``/export [file]``, ``/import <file>``, ``/changelog`` and ``/debug``.

``/export`` writes HTML unless the file name ends in ``.jsonl``, then the current branch as a
session file (``export/jsonl.py``). ``/import`` copies a session file into this folder's
session directory and switches to the copy (``AgentSession.import_session``). ``/clone`` uses
``AgentSession.clone`` (the RPC ``clone`` too).
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.tui.context import CommandContext

__all__ = ["changelog_command", "clone_command", "debug_command", "export_command", "import_command"]

_BUSY = "Wait until the agent is done (or press Esc) first."


def _resolve(app: CommandContext, arg: str) -> str:
    path = os.path.expanduser(arg.strip())
    return path if os.path.isabs(path) else os.path.join(str(app.session.cwd), path)


def _is_file(path: str) -> bool:
    return os.path.isfile(path)


async def clone_command(app: CommandContext, args: str) -> None:
    session = app.session
    if session.is_streaming:
        await app.notice(f"Cannot clone while the agent is working. {_BUSY}", "warning")
        return
    try:
        cancelled = await session.clone()
    except Exception as exc:
        await app.notice(f"Clone failed: {exc}", "error")
        return
    if cancelled:
        await app.notice("Clone cancelled by an extension")
        return
    app.status(f"Cloned to new session: {session.session_file or 'in memory'}")  # the transcript was rebuilt
    app.refresh_footer()


async def export_command(app: CommandContext, args: str) -> None:
    from pi_coder.export.jsonl import export_branch_jsonl, is_jsonl_path

    session = app.session
    arg = args.strip()
    if arg and is_jsonl_path(arg):
        try:
            path = export_branch_jsonl(session.store, _resolve(app, arg))
        except OSError as exc:
            await app.notice(f"Export failed: {exc.strerror or exc}", "error")
            return
        await app.notice(f"Session exported to: {path}")
        return
    from pi_coder.export.html import default_export_path, export_store_html

    name = session.session_file or f"{session.session_id}.jsonl"
    target = _resolve(app, arg) if arg else str(default_export_path(name, session.cwd))
    try:
        html = export_store_html(session.store, target)
    except OSError as exc:
        await app.notice(f"Export failed: {exc.strerror or exc}", "error")
        return
    await app.notice(f"Session exported to: {html}")


async def import_command(app: CommandContext, args: str) -> None:
    from pi_coder.errors import PiError

    session = app.session
    if not args.strip():
        await app.notice("Usage: /import <session.jsonl>", "warning")
        return
    if session.is_streaming:
        await app.notice(f"Cannot import while the agent is working. {_BUSY}", "warning")
        return
    path = _resolve(app, args)
    if not _is_file(path):
        await app.notice(f"Import failed: no such file: {path}", "error")
        return
    try:
        cancelled = await session.import_session(path)
    except (PiError, OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else None
        await app.notice(f"Import failed: {reason or exc}", "error")
        return
    if cancelled:
        await app.notice("Import cancelled by an extension")
        return
    app.status(f"Imported {path} as {session.session_file}")  # the transcript was rebuilt
    app.refresh_footer()


async def changelog_command(app: CommandContext, args: str) -> None:
    from pi_coder.core.changelog import read_changelog

    text = read_changelog()
    if text is None:
        await app.notice("No CHANGELOG.md found in this installation", "warning")
        return
    await app.show_markdown(text)


async def debug_command(app: CommandContext, args: str) -> None:
    from pi_coder.core.debug_report import write_debug_report

    size = shutil.get_terminal_size()
    extra = [
        f"- Terminal: {os.environ.get('TERM', '?')}, {size.columns}x{size.lines}",
        f"- App size: {app.size.width}x{app.size.height}",
        f"- Theme: {app.session.settings.theme or 'dark'}",
        f"- Screens open: {len(app.screen_stack)}",
    ]
    try:
        path, text = write_debug_report(app.session, extra=extra)
    except OSError as exc:
        await app.notice(f"Could not write the debug report: {exc.strerror or exc}", "error")
        return
    await app.show_markdown(text + f"\nWritten to `{path}` (no keys in it; review before sharing).")
