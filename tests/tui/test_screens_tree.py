"""/tree: navigation with and without a branch summary, labels, filters, search, folds, double Esc."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from pi_coder.ai.options import StreamOptions
from pi_coder.ai.providers.faux import faux_message
from pi_coder.ai.types import Context, UserMessage
from pi_coder.core.session_hooks import BranchSummaryResult
from pi_coder.session.entries import BranchSummaryEntry, LabelEntry
from pi_coder.session.store import SessionStore
from pi_coder.tui.screens.dialogs import ChoiceDialog, InputDialog
from pi_coder.tui.screens.fork_picker import ForkPicker
from pi_coder.tui.screens.tree_view import TreeScreen
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import branchy_session, make_app


def faux_summarizer(requests: list) -> object:
    """A branch summarizer that asks the session's model (the faux provider) for the summary."""

    async def summarize(session, request):
        requests.append(request)
        prompt = "Summarize the abandoned branch." + (f" Focus: {request.instructions}" if request.instructions else "")
        stream = session.agent.stream_fn(session.model, Context(messages=[UserMessage(content=prompt)]),
                                         StreamOptions(signal=request.signal))  # fmt: skip
        if inspect.isawaitable(stream):
            stream = await stream
        message = await stream.result()
        if request.signal.aborted or message.stop_reason == "aborted":
            return None
        return BranchSummaryResult(summary=message.text(), details={"readFiles": [], "modifiedFiles": []})

    return summarize


@pytest.fixture
def tree_session(project: Path, make_session):
    def build(responses=(), **kwargs):
        path = branchy_session(str(project))
        session, faux = make_session(list(responses), store=SessionStore.open(path), model=None, **kwargs)
        return session, faux, path

    return build


async def _open_tree(app, pilot) -> TreeScreen:
    app.editor.insert("/tree")
    await pilot.pause()
    await pilot.press("enter")
    if app.editor.text:
        await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, TreeScreen), what="tree")
    await pilot.pause()
    return app.screen


def _select(screen: TreeScreen, entry_id: str) -> None:
    index = screen.model.index_of(entry_id)
    assert index is not None, entry_id
    screen.tree_list.highlighted = index


async def test_selecting_a_user_message_without_summary_rewinds_and_fills_the_editor(tree_session) -> None:
    session, _, _ = tree_session()
    assert session.store.leaf_id == "e0000009"
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await _open_tree(app, pilot)
        text = screen_text(app)
        assert "Session Tree" in text and "← active" in text and "├─" in text and "└─" in text
        _select(screen, "e0000004")  # "try plan A", on the other branch
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="summary question")
        assert "Summarize branch?" in screen_text(app)
        await pilot.press("enter")  # No summary
        await wait_until(pilot, lambda: session.store.leaf_id == "e0000003", what="leaf moved")
        await wait_until(pilot, lambda: app.editor.text == "try plan A", what="editor text")
        assert [e for e in session.store.get_entries() if isinstance(e, BranchSummaryEntry)] == []
        texts = [m.text() if hasattr(m, "text") else m.content for m in session.messages if m.role != "system"]
        assert len(texts) == 2
        await wait_until(pilot, lambda: "Navigated to selected point" in screen_text(app), what="status")


async def test_selecting_an_assistant_message_moves_the_leaf_there(tree_session) -> None:
    session, _, _ = tree_session()
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await _open_tree(app, pilot)
        _select(screen, "e0000007")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="question")
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.store.leaf_id == "e0000007", what="leaf moved")
        assert app.editor.text == ""
        await wait_until(pilot, lambda: "Plan A is done." in screen_text(app), what="transcript rebuilt")
        assert "Plan B is done." not in screen_text(app)


async def test_summarize_appends_a_branch_summary_from_the_model(tree_session) -> None:
    session, faux, _ = tree_session([faux_message("We tried plan B and it worked.")])
    requests: list = []
    session.summarize_branch = faux_summarizer(requests)
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await _open_tree(app, pilot)
        _select(screen, "e0000007")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="question")
        await pilot.press("down", "enter")  # Summarize
        await wait_until(pilot, lambda: isinstance(session.store.get_leaf_entry(), BranchSummaryEntry), what="summary")
        summary = session.store.get_leaf_entry()
        assert summary.parent_id == "e0000007"
        assert "plan B" in summary.summary
        assert requests[0].old_leaf_id == "e0000009" and requests[0].target_id == "e0000007"
        assert requests[0].instructions is None
        assert faux.state.call_count == 1
        assert session.messages[-1].role == "branchSummary"


async def test_summarize_with_custom_instructions(tree_session) -> None:
    session, faux, _ = tree_session([faux_message("Tests were the focus.")])
    requests: list = []
    session.summarize_branch = faux_summarizer(requests)
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await _open_tree(app, pilot)
        _select(screen, "e0000007")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="question")
        await pilot.press("down", "down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, InputDialog), what="instructions")
        await pilot.press("escape")  # back to the question
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="question again")
        await pilot.press("down", "down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, InputDialog), what="instructions again")
        await pilot.press(*"focus on tests", "enter")
        await wait_until(pilot, lambda: isinstance(session.store.get_leaf_entry(), BranchSummaryEntry), what="summary")
        assert requests[-1].instructions == "focus on tests"
        assert "focus on tests" in str(faux.state.contexts[-1].messages[-1].content)


async def test_escape_during_the_summary_cancels_and_reopens_the_tree(tree_session) -> None:
    session, faux, _ = tree_session([faux_message("x" * 4000)], faux_options={"chunk_delay": 0.05})
    session.summarize_branch = faux_summarizer([])
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await _open_tree(app, pilot)
        _select(screen, "e0000007")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="question")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: faux.state.call_count == 1, what="summary started")
        await wait_until(pilot, lambda: "Summarizing branch" in screen_text(app), what="status")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, TreeScreen), what="tree reopened")
        assert session.store.leaf_id == "e0000009"
        assert not any(isinstance(e, BranchSummaryEntry) for e in session.store.get_entries())
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, TreeScreen), what="closed")


async def test_wired_branch_summarizer_uses_the_faux_model(tree_session) -> None:
    """The summarizer AgentSession ships with (when wired) turns the faux reply into the summary entry."""
    session, faux, _ = tree_session([faux_message("## Goal\nExplore plan B.")])
    if session.summarize_branch is None:
        pytest.skip("no branch summarizer wired into AgentSession yet")
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await _open_tree(app, pilot)
        _select(screen, "e0000007")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="question")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: isinstance(session.store.get_leaf_entry(), BranchSummaryEntry), what="summary")
        assert "Explore plan B." in session.store.get_leaf_entry().summary
        assert faux.state.call_count == 1


async def test_skip_prompt_setting_navigates_without_asking(project: Path, tree_session) -> None:
    (project.parent / "home" / "settings.toml").write_text("[branch_summary]\nskip_prompt = true\n")
    session, _, _ = tree_session()
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await _open_tree(app, pilot)
        _select(screen, "e0000007")
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.store.leaf_id == "e0000007", what="moved")


async def test_escape_on_the_question_returns_to_the_tree_and_active_leaf_is_a_no_op(tree_session) -> None:
    session, _, _ = tree_session()
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await _open_tree(app, pilot)
        _select(screen, "e0000007")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog), what="question")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, TreeScreen), what="tree again")
        screen = app.screen
        assert screen.selected_row().entry_id == "e0000009"  # starts on the active leaf
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Already at this point" in screen_text(app), what="no-op")
        assert session.store.leaf_id == "e0000009"


async def test_label_filters_search_and_folds(tree_session) -> None:
    session, _, path = tree_session()
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        screen = await _open_tree(app, pilot)
        _select(screen, "e0000004")
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(app.screen, InputDialog), what="label dialog")
        await pilot.press(*"plan-a", "enter")
        await wait_until(pilot, lambda: app.screen is screen, what="back")
        await pilot.pause()
        labels = [e for e in session.store.get_entries() if isinstance(e, LabelEntry)]
        assert [(e.target_id, e.label) for e in labels] == [("e0000004", "plan-a")]
        assert session.store.get_label("e0000004") == "plan-a"
        assert "[plan-a] user: try plan A" in screen_text(app)

        await pilot.press("ctrl+u")  # user messages only
        await pilot.pause()
        assert [r.entry_id for r in screen.model.rows()] == ["e0000002", "e0000008", "e0000004"]
        assert "[user]" in screen_text(app)
        await pilot.press("ctrl+l")  # labeled only
        await pilot.pause()
        assert [r.entry_id for r in screen.model.rows()] == ["e0000004"]
        await pilot.press("ctrl+a")  # everything, incl. model change and the tool-only assistant
        await pilot.pause()
        ids = [r.entry_id for r in screen.model.rows()]
        assert "e0000001" in ids and "e0000005" in ids
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert "e0000001" not in [r.entry_id for r in screen.model.rows()]

        await pilot.press(*"plan b")
        await pilot.pause()
        await wait_until(pilot, lambda: "Search: plan b" in screen_text(app), what="'Search: plan b' in screen_text(app)")
        assert [r.entry_id for r in screen.model.rows()] == ["e0000008", "e0000009"]
        await pilot.press("backspace", "backspace")
        await pilot.pause()
        assert screen.model.query == "plan"
        await pilot.press("escape")  # clears the search first
        await pilot.pause()
        assert screen.model.query == "" and isinstance(app.screen, TreeScreen)

        _select(screen, "e0000003")  # the branch point
        await pilot.press("ctrl+left")
        await pilot.pause()
        await wait_until(pilot, lambda: "⊞" in screen_text(app), what="'⊞' in screen_text(app)")
        assert [r.entry_id for r in screen.model.rows()] == ["e0000002", "e0000003"]
        await pilot.press("ctrl+right")
        await pilot.pause()
        assert len(screen.model.rows()) == 7
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, TreeScreen), what="closed")
    # The label reached the file (written with the session).
    assert '"targetId": "e0000004"' in path.read_text() or '"targetId":"e0000004"' in path.read_text()


@pytest.mark.parametrize(("action", "screen_type"), [("tree", TreeScreen), ("fork", ForkPicker)])
async def test_double_escape_on_an_empty_editor(project: Path, tree_session, action, screen_type) -> None:
    (project.parent / "home" / "settings.toml").write_text(f'double_escape_action = "{action}"\n')
    session, _, _ = tree_session()
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: isinstance(app.screen, screen_type), what=action)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, screen_type), what="closed")
        app.editor.insert("draft")
        await pilot.press("escape", "escape")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, screen_type)  # only on an empty editor


async def test_double_escape_none_does_nothing(project: Path, tree_session) -> None:
    (project.parent / "home" / "settings.toml").write_text('double_escape_action = "none"\n')
    session, _, _ = tree_session()
    app = make_app(session)
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.press("escape", "escape")
        await pilot.pause(0.1)
        assert len(app.screen_stack) == 1


def test_tree_model_long_chain_and_orphans(project: Path) -> None:
    """Thousands of entries in one chain lay out without recursion; orphans become extra roots."""
    from pi_coder.tui.screens.tree_model import TreeModel
    from tests.tui.screens_support import FIXED_NOW, SessionWriter

    writer = SessionWriter(str(project), "99999999-0000-0000-0000-000000000000", FIXED_NOW)
    for index in range(1500):
        writer.user(f"u{index:07d}", f"question {index}")
        writer.assistant(f"a{index:07d}", f"answer {index}")
    writer.user("orphan01", "from a lost parent", parent="missing0")
    store = SessionStore.open(writer.write())
    model = TreeModel(store.get_tree(), store.leaf_id)
    rows = model.rows()
    assert len(rows) == 3001
    # The root holding the active leaf comes first.
    assert rows[0].entry_id == "orphan01" and rows[0].active and rows[0].on_path
    assert rows[1].entry_id == "u0000000" and rows[1].prefix == "" and not rows[1].on_path
    assert rows[-1].entry_id == "a0001499"
    model.set_query("question 149")
    assert [r.entry_id for r in model.rows()][:3] == ["u0000149", "u0001149", "u0001490"]
