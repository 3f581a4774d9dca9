"""Session picker: /resume and pi -r, search, scope, sort, rename, delete, switching in place."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from pi_coder.core import create_agent_session
from pi_coder.settings import load_settings
from pi_coder.tui.screens.dialogs import ConfirmDialog, InputDialog
from pi_coder.tui.screens.session_picker import SessionPicker, format_age
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import FIXED_NOW, SessionWriter, make_app


def _write_sessions(project: Path) -> dict[str, Path]:
    cwd = str(project)
    older = SessionWriter(cwd, "aaaaaaaa-0000-0000-0000-000000000001", FIXED_NOW - timedelta(days=2))
    older.model_change("a0000001")
    older.user("a0000002", "refactor the parser module")
    older.assistant("a0000003", "The parser is refactored.")
    newer = SessionWriter(cwd, "bbbbbbbb-0000-0000-0000-000000000002", FIXED_NOW - timedelta(hours=1))
    newer.model_change("b0000001")
    newer.user("b0000002", "fix the flaky login test")
    newer.assistant("b0000003", "Fixed: the test waited on a timer.")
    newer.name("b0000004", "login fix")
    other_cwd = str(project.parent / "elsewhere")
    other = SessionWriter(other_cwd, "cccccccc-0000-0000-0000-000000000003", FIXED_NOW - timedelta(minutes=5))
    other.model_change("c0000001")
    other.user("c0000002", "write the release notes")
    other.assistant("c0000003", "Release notes written.")
    return {"older": older.write(), "newer": newer.write(), "other": other.write()}


def _session(project: Path, make_session):
    session, faux = make_session([], no_session=False)
    return session


def _picker(app) -> SessionPicker:
    assert isinstance(app.screen, SessionPicker)
    return app.screen


def _fixed_clock(monkeypatch) -> None:
    original = SessionPicker.__init__

    def init(self, *args, **kwargs):
        kwargs.setdefault("now", FIXED_NOW)
        original(self, *args, **kwargs)

    monkeypatch.setattr(SessionPicker, "__init__", init)


async def _open(app, pilot) -> SessionPicker:
    app.editor.insert("/resume")
    await pilot.pause()
    await pilot.press("enter")
    if app.editor.text:
        await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker) and app.screen.is_loaded, what="picker")
    await pilot.pause()
    return _picker(app)


async def test_resume_lists_this_folder_searches_and_switches_in_place(project: Path, make_session, monkeypatch) -> None:
    files = _write_sessions(project)
    _fixed_clock(monkeypatch)
    session = _session(project, make_session)
    app = make_app(session)
    async with app.run_test(size=(110, 32)) as pilot:
        picker = await _open(app, pilot)
        assert [entry.value for entry in picker.shown] == [files["newer"], files["older"]]
        text = screen_text(app)
        assert "Resume Session (Current Folder)" in text
        assert "login fix" in text and "59m ago" in text and "1d ago" in text
        assert "write the release notes" not in text
        await pilot.press(*"parser")
        await pilot.pause()
        assert [entry.value for entry in picker.shown] == [files["older"]]
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.session_file == str(files["older"]), what="switched")
        await wait_until(pilot, lambda: "The parser is refactored." in screen_text(app), what="transcript")
        assert "refactor the parser module" in screen_text(app)
        assert [m.role for m in session.messages if m.role != "system"] == ["user", "assistant"]


async def test_tab_shows_all_projects_and_escape_cancels(project: Path, make_session, monkeypatch) -> None:
    files = _write_sessions(project)
    _fixed_clock(monkeypatch)
    session = _session(project, make_session)
    app = make_app(session)
    async with app.run_test(size=(110, 32)) as pilot:
        picker = await _open(app, pilot)
        await pilot.press("tab")
        await wait_until(pilot, lambda: picker.is_loaded and picker.scope == "all", what="all listed")
        await pilot.pause()
        assert [entry.value for entry in picker.shown] == [files["other"], files["newer"], files["older"]]
        text = screen_text(app)
        assert "Resume Session (All)" in text and "elsewhere" in text and "4m ago" in text
        await pilot.press("ctrl+n")  # named sessions only
        await pilot.pause()
        assert [entry.value for entry in picker.shown] == [files["newer"]]
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SessionPicker), what="closed")
        assert session.session_file != str(files["newer"])
        assert not session.store.get_entries() or session.store.session_id not in {f.stem for f in files.values()}


async def test_sort_by_relevance_puts_the_best_match_first(project: Path, make_session, monkeypatch) -> None:
    files = _write_sessions(project)
    _fixed_clock(monkeypatch)
    session = _session(project, make_session)
    app = make_app(session)
    async with app.run_test(size=(110, 32)) as pilot:
        picker = await _open(app, pilot)
        await pilot.press(*"the")
        await pilot.pause()
        assert [entry.value for entry in picker.shown] == [files["newer"], files["older"]]  # recent first
        await pilot.press(*" parser")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert picker.sort == "relevance"
        assert [entry.value for entry in picker.shown] == [files["older"]]
        assert "Sort: relevance" in screen_text(app)
        await pilot.press("escape")


async def test_rename_appends_session_info(project: Path, make_session, monkeypatch) -> None:
    files = _write_sessions(project)
    _fixed_clock(monkeypatch)
    session = _session(project, make_session)
    app = make_app(session)
    async with app.run_test(size=(110, 32)) as pilot:
        picker = await _open(app, pilot)
        await pilot.press("down", "ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, InputDialog), what="rename dialog")
        await pilot.press(*"parser work", "enter")
        await wait_until(pilot, lambda: app.screen is picker, what="back in picker")
        await pilot.pause()
        last = json.loads(files["older"].read_text().splitlines()[-1])
        assert last["type"] == "session_info" and last["name"] == "parser work"
        assert "parser work" in screen_text(app)
        await pilot.press("escape")


async def test_delete_asks_first_and_removes_the_file(project: Path, make_session, monkeypatch) -> None:
    files = _write_sessions(project)
    _fixed_clock(monkeypatch)
    monkeypatch.setenv("PATH", "/nonexistent")  # no `trash` command: the file is deleted
    session = _session(project, make_session)
    app = make_app(session)
    async with app.run_test(size=(110, 32)) as pilot:
        picker = await _open(app, pilot)
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="confirm")
        assert "fix the flaky login test" in screen_text(app) or "login fix" in screen_text(app)
        await pilot.press("escape")  # keep
        await wait_until(pilot, lambda: app.screen is picker, what="back")
        assert files["newer"].exists()
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="confirm again")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is picker and not files["newer"].exists(), what="deleted")
        await pilot.pause()
        assert [entry.value for entry in picker.shown] == [files["older"]]
        await pilot.press("escape")


async def test_the_current_session_cannot_be_deleted(project: Path, make_session, monkeypatch) -> None:
    files = _write_sessions(project)
    _fixed_clock(monkeypatch)
    from pi_coder.session.store import SessionStore

    session, _ = make_session([], store=SessionStore.open(files["newer"]), model=None)
    app = make_app(session)
    async with app.run_test(size=(110, 32)) as pilot:
        picker = await _open(app, pilot)
        assert picker.highlighted_entry().value == files["newer"]
        assert "current" in screen_text(app)
        await pilot.press("ctrl+d")
        await pilot.pause(0.1)
        assert app.screen is picker and files["newer"].exists()
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, SessionPicker), what="closed")
        assert "Already in this session" in screen_text(app)


async def test_pi_r_opens_the_picker_at_start(project: Path, make_session, monkeypatch) -> None:
    files = _write_sessions(project)
    _fixed_clock(monkeypatch)
    session = _session(project, make_session)
    app = make_app(session, resume=True)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker) and app.screen.is_loaded, what="picker")
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.session_file == str(files["newer"]), what="switched")
        await wait_until(pilot, lambda: "Fixed: the test waited on a timer." in screen_text(app), what="transcript")


async def test_pi_r_cancelled_exits_with_code_zero(project: Path, make_session) -> None:
    _write_sessions(project)
    session = _session(project, make_session)
    app = make_app(session, resume=True)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker), what="picker")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.return_code is not None, what="exit")
    assert app.return_code == 0


def test_ages() -> None:
    assert format_age(FIXED_NOW - timedelta(seconds=30), FIXED_NOW) == "just now"
    assert format_age(FIXED_NOW - timedelta(minutes=59), FIXED_NOW) == "59m ago"
    assert format_age(FIXED_NOW - timedelta(hours=5), FIXED_NOW) == "5h ago"
    assert format_age(FIXED_NOW - timedelta(days=6), FIXED_NOW) == "6d ago"
    assert format_age(FIXED_NOW - timedelta(days=20), FIXED_NOW) == "2w ago"
    assert format_age(FIXED_NOW - timedelta(days=100), FIXED_NOW) == "2024-11-30"


def test_the_picker_lists_the_folder_the_store_writes_to(project: Path) -> None:
    """``/resume`` lists ``session.store.session_dir``, which follows the ``session_dir`` setting."""
    custom = project.parent / "custom-sessions"
    (project.parent / "home" / "settings.toml").write_text(f'session_dir = "{custom}"\n')
    SessionWriter(str(project), "dddddddd-0000-0000-0000-000000000004", FIXED_NOW, directory=custom).write()
    session = create_agent_session(str(project), settings=load_settings(str(project)), tool_names=[])
    assert Path(session.store.session_dir) == custom


async def test_a_clone_nests_under_its_parent_and_shows_just_now(project: Path, make_session) -> None:
    from datetime import UTC, datetime

    from pi_coder.session.store import SessionStore
    from tests.tui.test_model_commands import run_command

    cwd = str(project)
    parent = SessionWriter(cwd, "dddddddd-0000-0000-0000-000000000004", datetime.now(UTC) - timedelta(hours=2))
    parent.model_change("d0000001")
    parent.user("d0000002", "plan the release")
    parent.assistant("d0000003", "Planned.")
    parent_file = parent.write()
    other = SessionWriter(cwd, "eeeeeeee-0000-0000-0000-000000000005", datetime.now(UTC) - timedelta(minutes=30))
    other.model_change("e0000001")
    other.user("e0000002", "unrelated work")
    other.assistant("e0000003", "Done.")
    other.write()
    session, _ = make_session([], store=SessionStore.open(parent_file), no_session=False)
    app = make_app(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await run_command(app, pilot, "/clone")
        await wait_until(pilot, lambda: session.session_file != str(parent_file), what="cloned")
        await _open(app, pilot)
        rows = [line for line in screen_text(app).splitlines() if " msgs · " in line]
        assert len(rows) == 3, rows
        assert "└─" not in rows[0] and "plan the release" in rows[0] and "just now" not in rows[0]
        assert "└─ plan the release" in rows[1] and "just now" in rows[1] and "current" in rows[1]
        assert "unrelated work" in rows[2] and "└─" not in rows[2]
        await pilot.press("u", "n", "r")  # a search lists flat, best match first
        await pilot.pause()
        assert "└─" not in screen_text(app)


async def test_resume_lists_a_folder_summarised_after_start_up_in_its_first_frame(
    project: Path, make_session, monkeypatch
) -> None:
    """The app summarises this folder's sessions in idle time after start-up; /resume then shows
    them at once instead of reading the files in a thread after its first frame."""
    from pi_coder.session.listing import cached_sessions

    files = _write_sessions(project)
    _fixed_clock(monkeypatch)
    threaded: list[str] = []
    original = SessionPicker._list

    def listing(self: SessionPicker, scope: str) -> Any:
        threaded.append(scope)
        return original(self, scope)

    monkeypatch.setattr(SessionPicker, "_list", listing)
    session = _session(project, make_session)
    app = make_app(session)
    async with app.run_test(size=(110, 32)) as pilot:
        folder = session.store.session_dir
        await wait_until(pilot, lambda: cached_sessions(str(project), folder) is not None, what="the warm-up")
        app.editor.insert("/resume")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the picker")
        picker = _picker(app)
        assert picker.is_loaded and threaded == []
        assert [entry.value for entry in picker.shown][:2] == [files["newer"], files["older"]]
