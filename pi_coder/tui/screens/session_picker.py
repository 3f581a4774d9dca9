"""Session picker (``pi -r``, ``/resume``): this folder's sessions or all, searchable (pi-product 3.4).

Lines show the session name (or its first message), the message count and how long ago it was
active, and the folder in the "All" view; forks and clones sit under the session they came from
(``└─``) while the list is in recent order without a search; Ctrl+P shows the highlighted session's file path. Keys: Tab current
folder / all, Ctrl+S sort (recent / relevance), Ctrl+N named sessions only, Ctrl+P paths,
Ctrl+R rename, Ctrl+D (or Ctrl+Backspace on an empty search) delete after a confirmation.
Listing runs in a thread. The result is the chosen file's ``Path``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.actions import SkipAction
from textual.binding import Binding, BindingType

from pi_coder.session.listing import SessionInfo, cached_sessions, list_all_sessions, list_sessions
from pi_coder.tui.format import shorten_home
from pi_coder.tui.screens._fuzzy import rank
from pi_coder.tui.screens._picker import PickerEntry, PickerScreen
from pi_coder.tui.screens._rows import Row
from pi_coder.tui.screens.dialogs import ConfirmDialog, InputDialog
from pi_coder.tui.theming import theme_style

__all__ = ["SessionPicker", "delete_session_file", "format_age", "rename_session_file"]

_TITLES = {"current": "Resume Session (Current Folder)", "all": "Resume Session (All)"}
_FIRST_MESSAGE_LIMIT = 200


def _short_dir(cwd: str) -> str:
    """``~/code/project`` for the "All" view (the last two parts of long paths)."""
    shown = shorten_home(cwd)
    parts = shown.split("/")
    return shown if len(parts) <= 3 else ".../" + "/".join(parts[-2:])


def format_age(then: datetime, now: datetime) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago``, ``3w ago``, else the date (UTC)."""
    seconds = (now - then).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    if seconds < 7 * 86400:
        return f"{int(seconds // 86400)}d ago"
    if seconds < 35 * 86400:
        return f"{int(seconds // (7 * 86400))}w ago"
    return then.astimezone(UTC).strftime("%Y-%m-%d")


def _active(info: SessionInfo) -> datetime:
    """When the session was last active: a fork or clone copies its parent's messages with their
    times, so its own creation counts too (a clone made now is "just now", not its last message's age)."""
    if info.parent_session_path:
        return max(info.modified, info.created)
    return info.modified


def rename_session_file(path: Path, name: str) -> None:
    """Append a ``session_info`` entry naming the session in ``path``."""
    from pi_coder.session.store import SessionStore

    SessionStore.open(path).append_session_info(name)


def delete_session_file(path: Path) -> str:
    """Move ``path`` to the trash with the ``trash`` command when there is one, else delete it.

    Returns:
        ``"trash"`` or ``"deleted"``.
    """
    trash = shutil.which("trash")
    if trash is not None:
        result = subprocess.run([trash, str(path)], capture_output=True, timeout=10, check=False)
        if result.returncode == 0 and not path.exists():
            return "trash"
    path.unlink()
    return "deleted"


class SessionPicker(PickerScreen[Path]):
    """Choose a session file.

    Args:
        cwd: The project folder ("Current Folder" view).
        session_dir: Folder of this project's sessions (default: derived from ``cwd``).
        sessions_root: Root of all projects' session folders (default: the sessions folder).
        current_file: The open session (marked; cannot be deleted).
        now: The clock for "5m ago" (tests pass a fixed time).
        on_rename: ``(path, name)``; default appends a ``session_info`` entry to the file.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "toggle_scope", "Current folder / all", show=False, priority=True),
        Binding("ctrl+s", "toggle_sort", "Sort", show=False, priority=True),
        Binding("ctrl+n", "toggle_named", "Named only", show=False, priority=True),
        Binding("ctrl+p", "toggle_paths", "Paths", show=False, priority=True),
        Binding("ctrl+r", "rename", "Rename", show=False, priority=True),
        Binding("ctrl+d", "delete", "Delete", show=False, priority=True),
        Binding("ctrl+backspace", "delete_if_empty", "Delete", show=False, priority=True),
    ]

    def __init__(
        self,
        cwd: str,
        *,
        session_dir: str | None = None,
        sessions_root: str | None = None,
        current_file: str | os.PathLike[str] | None = None,
        now: datetime | None = None,
        on_rename: Callable[[Path, str], Any] | None = None,
    ) -> None:
        super().__init__(
            _TITLES["current"],
            placeholder="Search sessions...",
            hint="Tab all/here · ^S sort · ^N named · ^P paths · ^R rename · ^D delete · Esc close",
        )
        self.cwd = cwd
        self.session_dir = session_dir
        self.sessions_root = sessions_root
        self.current_file = Path(current_file).resolve() if current_file else None
        self.now = now
        self.on_rename = on_rename
        self.scope = "current"
        self.sort = "recent"
        self.named_only = False
        self.show_paths = False
        self.loaded: dict[str, list[SessionInfo]] = {}
        self._current_paths: set[Path] = set()
        self.loading = False

    # ------------------------------------------------------------------ loading

    def on_mount(self) -> None:
        super().on_mount()
        self.start_loading()

    def start_loading(self) -> None:
        if self.scope in self.loaded:
            self.reload()
            return
        if self.scope == "current" and (known := cached_sessions(self.cwd, self.session_dir)) is not None:
            # Every file was summarised before (the app lists them in idle time after start-up):
            # the list is in the first frame, not in a second one after a thread reads them.
            self.loaded[self.scope] = self._mark_current(known)
            self.reload()
            return
        self.loading = True
        self._refresh_lines()
        self.run_worker(self._load(self.scope), group="session-list", exit_on_error=False)

    async def _load(self, scope: str) -> None:
        self.loaded[scope] = await asyncio.to_thread(self._list, scope)
        if scope == self.scope:
            self.loading = False
            self.reload()

    def _list(self, scope: str) -> list[SessionInfo]:
        if scope == "current":
            infos = list_sessions(self.cwd, self.session_dir)
        else:
            infos = list_all_sessions(self.sessions_root)
        return self._mark_current(infos)

    def _mark_current(self, infos: list[SessionInfo]) -> list[SessionInfo]:
        if self.current_file is not None:
            for info in infos:
                if info.path.resolve() == self.current_file:
                    self._current_paths.add(info.path)
                    break
        return infos

    def _is_current(self, info: SessionInfo) -> bool:
        return info.path in self._current_paths

    @property
    def is_loaded(self) -> bool:
        """True once the current view's sessions are listed."""
        return self.scope in self.loaded and not self.loading

    # ------------------------------------------------------------------ entries

    def _clock(self) -> datetime:
        return self.now if self.now is not None else datetime.now(UTC)

    def _infos(self) -> list[SessionInfo]:
        infos = self.loaded.get(self.scope, [])
        return [info for info in infos if info.name] if self.named_only else list(infos)

    def load_entries(self) -> list[PickerEntry[Path]]:
        now = self._clock()
        entries = []
        for info in self._infos():
            first = " ".join(info.first_message.split())[:_FIRST_MESSAGE_LIMIT]
            entries.append(
                PickerEntry(
                    key=str(info.path),
                    value=info.path,
                    prompt=self._line(info, first, now),
                    search=f"{info.name or ''} {first}",
                )
            )
        return entries

    def _line(self, info: SessionInfo, first: str, now: datetime) -> tuple[Text, Text]:
        title = Text()
        if info.name:
            title.append(info.name, style="bold")
            title.append("  " + first, style="dim")
        else:
            title.append(first)
        meta = Text()
        if self._is_current(info):
            meta.append("current · ", style=theme_style(self.app, "success", "green"))
        if self.scope == "all" and info.cwd:
            meta.append(_short_dir(info.cwd) + " · ", style="dim")
        count = info.message_count
        meta.append(f"{count} msg{'s' if count != 1 else ''} · {format_age(_active(info), now)}", style="dim")
        return title, meta

    def order(self, query: str, entries: Sequence[PickerEntry[Path]]) -> list[PickerEntry[Path]]:
        if self.sort == "recent" and not query.strip():
            return self._threaded(entries)
        return rank(query, entries, lambda entry: entry.search, stable=self.sort == "recent")

    def _threaded(self, entries: Sequence[PickerEntry[Path]]) -> list[PickerEntry[Path]]:
        """Forks and clones under the session they came from (``└─``, deeper ones indented); a
        thread sits where its most recent session would."""
        infos = {str(info.path): info for info in self._infos()}
        real = {key: os.path.realpath(key) for key in infos}
        by_real = {path: key for key, path in real.items()}
        children: dict[str, list[PickerEntry[Path]]] = {}
        roots: list[PickerEntry[Path]] = []
        for entry in entries:
            info = infos.get(entry.key)
            parent = info.parent_session_path if info is not None else None
            parent_key = by_real.get(os.path.realpath(parent)) if parent else None
            if parent_key is not None and parent_key != entry.key:
                children.setdefault(parent_key, []).append(entry)
            else:
                roots.append(entry)

        def latest(entry: PickerEntry[Path], seen: frozenset[str] = frozenset()) -> datetime:
            info = infos.get(entry.key)
            own = _active(info) if info is not None else datetime.min.replace(tzinfo=UTC)
            kids = [latest(kid, seen | {entry.key}) for kid in children.get(entry.key, []) if kid.key not in seen]
            return max([own, *kids])

        out: list[PickerEntry[Path]] = []
        placed: set[str] = set()

        def walk(entry: PickerEntry[Path], depth: int) -> None:
            if entry.key in placed:
                return
            placed.add(entry.key)
            out.append(entry if depth == 0 else self._nested(entry, depth))
            for kid in sorted(children.get(entry.key, []), key=latest, reverse=True):
                walk(kid, depth + 1)

        for root in sorted(roots, key=latest, reverse=True):
            walk(root, 0)
        out.extend(entry for entry in entries if entry.key not in placed)  # a cycle of parents: flat, not lost
        return out

    @staticmethod
    def _nested(entry: PickerEntry[Path], depth: int) -> PickerEntry[Path]:
        prefix = Text("   " * (depth - 1) + "└─ ", style="dim")
        prompt = entry.prompt
        if isinstance(prompt, tuple):
            nested: Row = (Text.assemble(prefix, prompt[0]), prompt[1])
        else:
            nested = Text.assemble(prefix, prompt)
        return PickerEntry(key=entry.key, value=entry.value, prompt=nested, search=entry.search)

    def header(self) -> RenderableType:
        line = Text()
        line.append(f"Sort: {self.sort}", style="dim")
        if self.named_only:
            line.append(" · named only", style="dim")
        if self.show_paths:
            line.append(" · paths", style="dim")
        return line

    def detail(self, entry: PickerEntry[Path] | None) -> RenderableType:
        if self.loading:
            return Text("  Loading sessions...", style="dim")
        if not self.shown:
            if self.entries:
                return Text("  No matching sessions", style="dim")
            return Text("  No sessions found" if self.scope == "all" else "  No sessions in this folder", style="dim")
        line = super().detail(entry)
        if self.show_paths and entry is not None and isinstance(line, Text):
            line.append("  " + shorten_home(str(entry.value)), style="dim")
        return line

    # ------------------------------------------------------------------ actions

    def action_toggle_scope(self) -> None:
        self.scope = "all" if self.scope == "current" else "current"
        self.query_one("#picker").border_title = _TITLES[self.scope]
        self.start_loading()

    def action_toggle_sort(self) -> None:
        self.sort = "relevance" if self.sort == "recent" else "recent"
        self.refilter()

    def action_toggle_named(self) -> None:
        self.named_only = not self.named_only
        self.reload()

    def action_toggle_paths(self) -> None:
        self.show_paths = not self.show_paths
        self.reload()

    def _info(self, entry: PickerEntry[Path] | None) -> SessionInfo | None:
        if entry is None:
            return None
        return next((i for i in self.loaded.get(self.scope, []) if i.path == entry.value), None)

    def action_rename(self) -> None:
        info = self._info(self.highlighted_entry())
        if info is None:
            return

        def done(name: str | None) -> None:
            if not name:
                return
            try:
                (self.on_rename or rename_session_file)(info.path, name)
            except Exception as exc:  # the file may have gone or be unreadable
                self.app.notify(f"Could not rename: {exc}", severity="error")
                return
            self._replace(info, name=name)

        self.app.push_screen(InputDialog("Rename session", value=info.name or "", placeholder="Session name"), done)

    def action_delete_if_empty(self) -> None:
        if self.search_input.value:
            raise SkipAction()  # the search box deletes a word
        self.action_delete()

    def action_delete(self) -> None:
        info = self._info(self.highlighted_entry())
        if info is None:
            return
        if self._is_current(info):
            self.app.notify("The current session cannot be deleted", severity="warning")
            return

        def done(confirmed: bool | None) -> None:
            if not confirmed:
                return
            try:
                delete_session_file(info.path)
            except OSError as exc:
                self.app.notify(f"Could not delete: {exc}", severity="error")
                return
            for scope, infos in self.loaded.items():
                self.loaded[scope] = [i for i in infos if i.path != info.path]
            self.reload()

        title = info.name or " ".join(info.first_message.split())[:80]
        message = f"Delete this session?\n\n{title}\n{shorten_home(str(info.path))}"
        self.app.push_screen(ConfirmDialog(message, title="Delete session", yes="Delete", no="Keep"), done)

    def _replace(self, info: SessionInfo, *, name: str) -> None:
        from dataclasses import replace

        fresh = replace(info, name=name)
        for scope, infos in self.loaded.items():
            self.loaded[scope] = [fresh if i.path == info.path else i for i in infos]
        self.reload(keep_key=str(info.path))
