"""Checkpoints in the TUI: /tree and /fork offer code restores, /undo and /redo in a Textual pilot.

The sessions are real: ``pi -p`` runs against the scripted SSE server with a write tool call, so the
session file holds a checkpoint entry and the shadow repository holds its snapshots.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pi_coder.ai.providers.faux import faux_message, faux_tool_call
from pi_coder.session.entries import MessageEntry
from pi_coder.session.store import SessionStore
from pi_coder.tui.screens.dialogs import ChoiceDialog, ConfirmDialog
from pi_coder.tui.screens.fork_picker import ForkPicker
from pi_coder.tui.screens.tree_view import TreeScreen
from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _written_session(tmp_path: Path, server: SSEServer) -> tuple[PiHome, Path]:
    """``pi -p "change it"``: the model overwrites a.txt, creates new.txt and removes gone.txt with bash."""
    pi = PiHome(tmp_path, server)
    (pi.project / "a.txt").write_text("original\n")
    (pi.project / "gone.txt").write_text("kept\n")
    server.enqueue(
        Turn(
            [
                Text("Writing."),
                ToolCall("write", {"path": "a.txt", "content": "changed\n"}, id="w1"),
                ToolCall("write", {"path": "new.txt", "content": "created\n"}, id="w2"),
                ToolCall("bash", {"command": "rm gone.txt"}, id="b1"),
            ]
        ),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "change it")
    assert run.returncode == 0, run.stderr
    assert (pi.project / "a.txt").read_text() == "changed\n"
    assert not (pi.project / "gone.txt").exists()
    (session_file,) = pi.session_files()
    return pi, session_file



BEFORE = {"a.txt": "original\n", "new.txt": None, "gone.txt": "kept\n"}
"""The files of :func:`_written_session` before its run (None: no such file)."""
AFTER = {"a.txt": "changed\n", "new.txt": "created\n", "gone.txt": None}
"""The files of :func:`_written_session` after its run."""


def _files(root: Path) -> dict[str, str | None]:
    """a.txt, new.txt and gone.txt as they are now, None for a missing one.

    A restore writes and removes the files one by one while the app runs, so a test waits for the
    whole state (never for one file and then reads the others, which may not be there yet).
    """
    state: dict[str, str | None] = {}
    for name in BEFORE:
        try:
            state[name] = (root / name).read_text()
        except FileNotFoundError:
            state[name] = None
    return state


def _prompt_id(store: SessionStore) -> str:
    return next(e.id for e in store.get_branch() if isinstance(e, MessageEntry) and e.role == "user")


async def _command(app, pilot, text: str) -> None:
    app.editor.set_text(text)
    await pilot.pause()
    await pilot.press("enter")
    if app.editor.text == text:
        await pilot.press("enter")


@pytest.mark.parametrize("choice", ["both", "conversation", "code"])
async def test_tree_offers_code_and_conversation_restores(
    tmp_path: Path, project: Path, sse_server: SSEServer, make_session, choice: str
) -> None:
    pi, session_file = _written_session(tmp_path, sse_server)
    session, _ = make_session([], store=SessionStore.open(session_file), model=None)
    prompt_id = _prompt_id(session.store)
    leaf = session.store.leaf_id
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        await _command(app, pilot, "/tree")
        await wait_until(pilot, lambda: isinstance(app.screen, TreeScreen), what="tree")
        await pilot.pause()
        screen = app.screen
        screen.tree_list.highlighted = screen.model.index_of(prompt_id)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="restore question")
        text = screen_text(app)
        assert "Conversation and code" in text and "Conversation only" in text and "Code only" in text
        presses = {"both": [], "conversation": ["down"], "code": ["down", "down"]}[choice]
        await pilot.press(*presses, "enter")
        if choice != "code":
            await wait_until(pilot, lambda: "Summarize branch?" in screen_text(app), what="summary question")
            await pilot.press("enter")  # No summary
            await wait_until(pilot, lambda: app.editor.text == "change it", what="prompt back in the editor")
            assert not any(isinstance(e, MessageEntry) for e in session.store.get_branch())
        else:
            await wait_until(pilot, lambda: not isinstance(app.screen, ChoiceDialog), what="dialog closed")
            await wait_until(pilot, lambda: _files(pi.project) == BEFORE, what="code restored")
            assert session.store.get_entry(leaf) in session.store.get_branch()  # conversation stayed
            assert app.editor.text == ""
        await pilot.pause(0.2)
        if choice == "conversation":
            assert (pi.project / "a.txt").read_text() == "changed\n"
            assert (pi.project / "new.txt").exists()
            assert not (pi.project / "gone.txt").exists()
        else:
            assert (pi.project / "a.txt").read_text() == "original\n"
            assert not (pi.project / "new.txt").exists()  # created after the point: removed
            assert (pi.project / "gone.txt").read_text() == "kept\n"  # deleted after it: back


async def test_fork_with_code_restores_files_then_branches(
    tmp_path: Path, project: Path, sse_server: SSEServer, make_session
) -> None:
    pi, session_file = _written_session(tmp_path, sse_server)
    session, _ = make_session([], store=SessionStore.open(session_file), model=None)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _command(app, pilot, "/fork")
        await wait_until(pilot, lambda: isinstance(app.screen, ForkPicker), what="fork picker")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="restore question")
        await pilot.press("enter")  # Conversation and code
        await wait_until(pilot, lambda: app.editor.text == "change it", what="forked")
        forked = session.session_file
        assert forked != str(session_file)
        await wait_until(pilot, lambda: _files(pi.project) == BEFORE, what="code restored")
        # The restore is undoable in the new session: /redo brings the files back, the fork stays.
        app.editor.set_text("")
        await _command(app, pilot, "/redo")
        await wait_until(pilot, lambda: _files(pi.project) == AFTER, what="redo")
        assert session.session_file == forked


async def test_tree_without_checkpoints_after_the_point_asks_nothing_new(
    tmp_path: Path, project: Path, sse_server: SSEServer, make_session
) -> None:
    """The first entry of a session without file changes goes straight to the summary question."""
    pi = PiHome(tmp_path, sse_server)
    sse_server.enqueue(Turn([Text("Just talking.")]))
    assert pi.run("-p", "hello").returncode == 0
    (session_file,) = pi.session_files()
    session, _ = make_session([], store=SessionStore.open(session_file), model=None)
    prompt_id = _prompt_id(session.store)
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        await _command(app, pilot, "/tree")
        await wait_until(pilot, lambda: isinstance(app.screen, TreeScreen), what="tree")
        await pilot.pause()
        app.screen.tree_list.highlighted = app.screen.model.index_of(prompt_id)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="question")
        assert "Summarize branch?" in screen_text(app)
        assert "Code only" not in screen_text(app)


async def test_undo_and_redo_in_the_tui(project: Path, make_session) -> None:
    """A scripted write, /undo: the file is back and the prompt is in the editor; /redo reapplies it."""
    (project / "a.txt").write_text("original\n")
    session, _ = make_session(
        [
            faux_message(faux_tool_call("write", {"path": "a.txt", "content": "changed\n"}, id="w1")),
            faux_message("Done."),
        ],
        tool_names=["write"],
        no_session=False,
    )
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _command(app, pilot, "please change a.txt")
        await wait_until(pilot, lambda: _files(project)["a.txt"] == "changed\n", what="write")
        await wait_until(
            pilot, lambda: not session.is_streaming and session.checkpoints.list(), what="checkpoint"
        )
        assert app.editor.text == ""

        await _command(app, pilot, "/undo")
        await wait_until(pilot, lambda: _files(project)["a.txt"] == "original\n", what="undo")
        await wait_until(pilot, lambda: app.editor.text == "please change a.txt", what="prompt in the editor")
        assert not any(isinstance(e, MessageEntry) for e in session.store.get_branch())

        await _command(app, pilot, "/redo")
        await wait_until(pilot, lambda: _files(project)["a.txt"] == "changed\n", what="redo")
        await wait_until(
            pilot,
            lambda: any(isinstance(e, MessageEntry) and e.role == "user" for e in session.store.get_branch()),
            what="the prompt back on the branch",
        )


async def _pick_in_tree(app, pilot, entry_id: str, presses: list[str]) -> None:
    """/tree, highlight ``entry_id``, Enter, then answer the restore question with ``presses`` + Enter."""
    await _command(app, pilot, "/tree")
    await wait_until(pilot, lambda: isinstance(app.screen, TreeScreen), what="tree")
    await pilot.pause()
    app.screen.tree_list.highlighted = app.screen.model.index_of(entry_id)
    await pilot.press("enter")
    await wait_until(pilot, lambda: "Code only" in screen_text(app), what="restore question")
    await pilot.press(*presses, "enter")


@pytest.mark.parametrize("answer", ["keep", "overwrite"])
async def test_tree_code_restore_lists_hand_edits_and_asks(
    tmp_path: Path, project: Path, sse_server: SSEServer, make_session, answer: str
) -> None:
    """a.txt changed by hand after the run: "Code only" lists it and overwrites it only when confirmed."""
    pi, session_file = _written_session(tmp_path, sse_server)
    (pi.project / "a.txt").write_text("mine\n")
    session, _ = make_session([], store=SessionStore.open(session_file), model=None)
    prompt_id = _prompt_id(session.store)
    entries = len(session.store.get_entries())
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        await _pick_in_tree(app, pilot, prompt_id, ["down", "down"])  # Code only
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="hand-edit confirmation")
        await wait_until(pilot, lambda: "changed by hand" in screen_text(app), what="the list of hand edits")
        text = screen_text(app)
        assert "changed by hand" in text and "a.txt" in text and "new.txt" not in text
        if answer == "keep":
            await pilot.press("escape")
            await wait_until(pilot, lambda: "Restore cancelled" in screen_text(app), what="cancel notice")
            assert (pi.project / "a.txt").read_text() == "mine\n"
            assert (pi.project / "new.txt").read_text() == "created\n"
            assert not (pi.project / "gone.txt").exists()
            assert len(session.store.get_entries()) == entries  # nothing recorded
        else:
            await pilot.press("enter")
            await wait_until(pilot, lambda: _files(pi.project) == BEFORE, what="overwritten")


async def test_tree_conversation_and_code_with_hand_edit_kept_changes_nothing(
    tmp_path: Path, project: Path, sse_server: SSEServer, make_session
) -> None:
    pi, session_file = _written_session(tmp_path, sse_server)
    (pi.project / "a.txt").write_text("mine\n")
    session, _ = make_session([], store=SessionStore.open(session_file), model=None)
    prompt_id = _prompt_id(session.store)
    leaf = session.store.leaf_id
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        await _pick_in_tree(app, pilot, prompt_id, [])  # Conversation and code
        await wait_until(pilot, lambda: "Summarize branch?" in screen_text(app), what="summary question")
        await pilot.press("enter")  # No summary
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="hand-edit confirmation")
        await pilot.press("n")
        await wait_until(pilot, lambda: "Restore cancelled" in screen_text(app), what="cancel notice")
        assert session.store.leaf_id == leaf and app.editor.text == ""
        assert (pi.project / "a.txt").read_text() == "mine\n"


@pytest.mark.parametrize("choice", ["both", "code"])
async def test_a_tree_restore_is_itself_undoable_with_redo(
    tmp_path: Path, project: Path, sse_server: SSEServer, make_session, choice: str
) -> None:
    """The present is snapshotted before the files go back, so /redo brings the agent's changes back."""
    pi, session_file = _written_session(tmp_path, sse_server)
    session, _ = make_session([], store=SessionStore.open(session_file), model=None)
    prompt_id = _prompt_id(session.store)
    leaf = session.store.leaf_id
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        await _pick_in_tree(app, pilot, prompt_id, [] if choice == "both" else ["down", "down"])
        if choice == "both":
            await wait_until(pilot, lambda: "Summarize branch?" in screen_text(app), what="summary question")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.editor.text == "change it", what="moved")
        await wait_until(pilot, lambda: _files(pi.project) == BEFORE, what="restored")
        app.editor.set_text("")
        await _command(app, pilot, "/redo")
        await wait_until(pilot, lambda: _files(pi.project) == AFTER, what="redo")
        await wait_until(  # the conversation is back too
            pilot, lambda: session.store.get_entry(leaf) in session.store.get_branch(), what="conversation back"
        )


@pytest.mark.parametrize("choice", ["conversation", "code"])
async def test_fork_conversation_only_and_code_only(
    tmp_path: Path, project: Path, sse_server: SSEServer, make_session, choice: str
) -> None:
    pi, session_file = _written_session(tmp_path, sse_server)
    session, _ = make_session([], store=SessionStore.open(session_file), model=None)
    leaf = session.store.leaf_id
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _command(app, pilot, "/fork")
        await wait_until(pilot, lambda: isinstance(app.screen, ForkPicker), what="fork picker")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="restore question")
        await pilot.press(*(["down"] if choice == "conversation" else ["down", "down"]), "enter")
        if choice == "conversation":
            await wait_until(pilot, lambda: app.editor.text == "change it", what="forked")
            assert session.session_file != str(session_file)
            assert (pi.project / "a.txt").read_text() == "changed\n"
            assert not (pi.project / "gone.txt").exists()
        else:
            await wait_until(pilot, lambda: _files(pi.project) == BEFORE, what="restored")
            assert session.session_file == str(session_file)  # no fork: the conversation stays
            assert session.store.get_entry(leaf) in session.store.get_branch()
            assert app.editor.text == ""


async def test_escape_on_the_restore_question_goes_back_to_the_tree(
    tmp_path: Path, project: Path, sse_server: SSEServer, make_session
) -> None:
    pi, session_file = _written_session(tmp_path, sse_server)
    session, _ = make_session([], store=SessionStore.open(session_file), model=None)
    prompt_id = _prompt_id(session.store)
    leaf = session.store.leaf_id
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        await _command(app, pilot, "/tree")
        await wait_until(pilot, lambda: isinstance(app.screen, TreeScreen), what="tree")
        await pilot.pause()
        app.screen.tree_list.highlighted = app.screen.model.index_of(prompt_id)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Code only" in screen_text(app), what="restore question")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, TreeScreen), what="back to the tree")
        assert session.store.leaf_id == leaf
        assert (pi.project / "a.txt").read_text() == "changed\n"


async def test_fork_with_code_keeps_hand_edits_when_refused(
    tmp_path: Path, project: Path, sse_server: SSEServer, make_session
) -> None:
    """/fork, "Conversation and code", a.txt edited by hand: refusing the overwrite changes nothing."""
    pi, session_file = _written_session(tmp_path, sse_server)
    (pi.project / "a.txt").write_text("mine\n")
    session, _ = make_session([], store=SessionStore.open(session_file), model=None)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _command(app, pilot, "/fork")
        await wait_until(pilot, lambda: isinstance(app.screen, ForkPicker), what="fork picker")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="restore question")
        await pilot.press("enter")  # Conversation and code
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="hand-edit confirmation")
        await wait_until(pilot, lambda: "a.txt" in screen_text(app), what="the hand-edited file listed")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "Restore cancelled" in screen_text(app), what="cancel notice")
        assert session.session_file == str(session_file)  # no fork either
        assert (pi.project / "a.txt").read_text() == "mine\n"
        assert (pi.project / "new.txt").exists()


async def test_redo_after_a_tree_restore_says_it_reversed_the_restore(
    tmp_path: Path, project: Path, sse_server: SSEServer, make_session
) -> None:
    """/tree "Code only", then /redo: not "Redid the last undone prompt" (no prompt was undone)."""
    pi, session_file = _written_session(tmp_path, sse_server)
    session, _ = make_session([], store=SessionStore.open(session_file), model=None)
    prompt_id = _prompt_id(session.store)
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        await _pick_in_tree(app, pilot, prompt_id, ["down", "down"])  # Code only
        await wait_until(pilot, lambda: (pi.project / "a.txt").read_text() == "original\n", what="restored")
        await wait_until(pilot, lambda: "Restored" in screen_text(app), what="the restore done")
        app.editor.set_text("")
        await _command(app, pilot, "/redo")
        await wait_until(pilot, lambda: "Reversed the last restore" in screen_text(app), what="redo notice")
        assert "undone prompt" not in screen_text(app)
        assert (pi.project / "a.txt").read_text() == "changed\n"
