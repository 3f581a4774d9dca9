"""PiApp behaviour on a real AgentSession with the faux provider: bash, slash commands, history, footer."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

from pi_coder.ai.providers.faux import faux_message, faux_tool_call
from pi_coder.ai.types import Usage
from pi_coder.tui.widgets.bash_block import BashBlock
from pi_coder.tui.widgets.completion_menu import CompletionMenu
from pi_coder.tui.widgets.status_bar import StatusBar
from tests.tui.helpers import type_text, user_texts, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


async def _send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_bang_runs_a_command_and_adds_it_to_the_context(make_session) -> None:
    """``!cmd`` shows a command block with output and exit code; the next request carries it."""
    session, faux = make_session([faux_message("seen it")])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "!echo hello-from-bash")
        await wait_until(pilot, lambda: any(not b.running for b in app.query(BashBlock)), what="bash end")
        text = screen_text(app)
        assert "$ echo hello-from-bash" in text
        assert "hello-from-bash" in text.split("$ echo hello-from-bash", 1)[1]
        assert "(exit 0)" in text
        assert [m.role for m in session.messages][-1] == "bashExecution"
        await _send(pilot, "what did it print?")
        await wait_until(pilot, lambda: faux.state.call_count == 1 and not session.is_streaming, what="reply")
        sent = user_texts(faux.state.contexts[0])
        assert any("hello-from-bash" in t for t in sent)


async def test_double_bang_keeps_the_output_out_of_the_context(make_session) -> None:
    session, faux = make_session([faux_message("ok")])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "!!echo secret-output; exit 3")
        await wait_until(pilot, lambda: any(not b.running for b in app.query(BashBlock)), what="bash end")
        block = app.query_one(BashBlock)
        assert block.exclude_from_context
        assert "(exit 3)" in screen_text(app)
        await _send(pilot, "hi")
        await wait_until(pilot, lambda: faux.state.call_count == 1 and not session.is_streaming, what="reply")
        assert not any("secret-output" in t for t in user_texts(faux.state.contexts[0]))


async def test_escape_cancels_a_running_command(make_session) -> None:
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "!sleep 30")
        await wait_until(pilot, lambda: session.is_bash_running, what="bash running")
        await pilot.press("escape")
        await wait_until(pilot, lambda: any(not b.running for b in app.query(BashBlock)), what="cancel")
        assert "(cancelled)" in screen_text(app)


async def test_prompt_streams_answer_and_footer_shows_usage(make_session) -> None:
    """After a turn the footer shows tokens, cost, context % and the model."""
    usage = Usage(input=12_345, output=678, cache_read=2_000, cache_write=100, total_tokens=15_123)
    usage.cost.total = 0.0421
    session, _ = make_session([faux_message("The **answer** is 42.", usage=usage)])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "question")
        await wait_until(pilot, lambda: not session.is_streaming and len(session.messages) >= 3, what="reply")
        await wait_until(
            pilot,
            lambda: "The answer is 42." in screen_text(app) and "faux-1" in screen_text(app).rstrip().splitlines()[-1],
            what="the answer and the footer",
        )
        text = screen_text(app)
        assert "The answer is 42." in text
        footer = app.query_one(StatusBar).info
        assert (footer.input, footer.output, footer.cache_read, footer.cache_write) == (12_345, 678, 2_000, 100)
        last_line = text.rstrip().splitlines()[-1]
        assert "↑12k ↓678 R2.0k W100 $0.042" in last_line
        assert "11.8%/128k" in last_line
        assert last_line.rstrip().endswith("faux-1")


async def test_history_up_on_empty_editor_browses_prompts(make_session) -> None:
    session, _ = make_session(["one", "two"])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "first prompt")
        await wait_until(pilot, lambda: not session.is_streaming and len(session.messages) >= 3, what="reply 1")
        await _send(pilot, "second prompt")
        await wait_until(pilot, lambda: not session.is_streaming and len(session.messages) >= 5, what="reply 2")
        await pilot.press("up")
        assert app.editor.text == "second prompt"
        await pilot.press("up")
        assert app.editor.text == "first prompt"
        await pilot.press("down")
        assert app.editor.text == "second prompt"
        await pilot.press("down")
        assert app.editor.text == ""


async def test_history_is_prefilled_when_resuming(make_session, project: Path) -> None:
    from pi_coder.session.store import SessionStore

    first, _ = make_session(["answer"], no_session=False)
    await first.prompt("remembered prompt")
    path = first.session_file
    await first.close()
    resumed, _ = make_session([], no_session=False, store=SessionStore.open(path))
    app = make_app(resumed)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "answer" in screen_text(app), what="the transcript")
        text = screen_text(app)
        assert "remembered prompt" in text and "answer" in text  # transcript rendered at mount
        await pilot.press("up")
        assert app.editor.text == "remembered prompt"


async def test_trailing_backslash_and_ctrl_j_insert_newlines(make_session) -> None:
    session, faux = make_session(["ok"])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"line one\\")  # real key presses, one per character
        await pilot.press("enter")
        assert app.editor.text == "line one\n"
        await type_text(pilot, "line two")
        await pilot.press("ctrl+j")
        await type_text(pilot, "three")
        assert app.editor.text == "line one\nline two\nthree"
        assert faux.state.call_count == 0
        await pilot.press("enter")
        await wait_until(pilot, lambda: faux.state.call_count == 1 and not session.is_streaming, what="sent")
        assert user_texts(faux.state.contexts[0]) == ["line one\nline two\nthree"]


async def test_paste_with_newlines_does_not_submit(make_session) -> None:
    from textual import events

    session, faux = make_session(["ok"])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        app.editor.post_message(events.Paste("a\nb\r\nc\n"))
        await pilot.pause(0.1)
        assert "a\nb" in app.editor.text
        assert faux.state.call_count == 0


async def test_ctrl_c_clears_then_quits_and_ctrl_d_quits_on_empty(make_session) -> None:
    from textual import events

    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "some text")
        await pilot.press("ctrl+c")
        assert app.editor.text == ""
        assert app.is_running
        await type_text(pilot, "abc")
        await pilot.press("left", "ctrl+d")  # not empty: deletes the character under the cursor
        assert app.editor.text == "ab"
        await pilot.pause(0.6)
        for _ in range(2):  # a double press in one burst: pilot.press waits between keys, which can
            app.post_message(events.Key("ctrl+c", None))  # outlast the double-press window under load
        await wait_until(pilot, lambda: app.return_code is not None, what="exit")  # quitting renders the exit rows first
    assert app.return_code == 0

    session2, _ = make_session([])
    app2 = make_app(session2)
    async with app2.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: app2.return_code is not None, what="exit")
    assert app2.return_code == 0


# ---------------------------------------------------------------------------- slash commands


async def test_unknown_slash_word_is_sent_as_text(make_session) -> None:
    session, faux = make_session(["ok"])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "/etc/hosts is the file")
        await wait_until(pilot, lambda: faux.state.call_count == 1 and not session.is_streaming, what="sent")
        assert user_texts(faux.state.contexts[0]) == ["/etc/hosts is the file"]


async def test_session_name_and_hotkeys_commands(make_session) -> None:
    usage = Usage(input=1000, output=200, total_tokens=1200)
    usage.cost.total = 0.5
    session, _ = make_session([faux_message("hi", usage=usage)])
    app = make_app(session)
    async with app.run_test(size=(100, 60)) as pilot:
        await _send(pilot, "hello")
        await wait_until(pilot, lambda: not session.is_streaming and len(session.messages) >= 3, what="reply")
        await _send(pilot, "/name my feature")
        await wait_until(pilot, lambda: session.session_name == "my feature", what="named")
        await wait_until(pilot, lambda: "• my feature" in screen_text(app), what="'• my feature' in screen_text(app)")
        await _send(pilot, "/session")
        await wait_until(pilot, lambda: "Tool results" in screen_text(app), what="session info")
        text = screen_text(app)
        assert "Name: my feature" in text
        assert "File: In-memory" in text
        assert "User: 1" in text and "Assistant: 1" in text
        assert "Input: 1,000" in text and "Output: 200" in text
        assert "$0.5000" in text
        await _send(pilot, "/hotkeys")
        await wait_until(pilot, lambda: "output kept out of the context" in screen_text(app), what="hotkeys")
        assert "Alt+Enter" in screen_text(app)


async def test_copy_puts_last_answer_on_the_clipboard(make_session) -> None:
    session, _ = make_session(["copy **me**"])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "/copy")
        await wait_until(pilot, lambda: "No agent messages to copy yet." in screen_text(app), what="nothing")
        await _send(pilot, "hello")
        await wait_until(pilot, lambda: not session.is_streaming and len(session.messages) >= 3, what="reply")
        await _send(pilot, "/copy")
        await wait_until(pilot, lambda: app.clipboard == "copy **me**", what="copied")


async def test_new_command_clears_the_transcript(make_session) -> None:
    session, _ = make_session(["old answer"])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "old question")
        await wait_until(pilot, lambda: "old answer" in screen_text(app), what="reply")
        await _send(pilot, "/new")
        await wait_until(pilot, lambda: "New session started" in screen_text(app), what="new")
        text = screen_text(app)
        assert "old question" not in text and "old answer" not in text
        assert [m.role for m in session.messages if m.role != "system"] == []


async def test_compact_with_nothing_to_compact_warns(make_session) -> None:
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "/compact")
        await wait_until(pilot, lambda: "Nothing to compact" in screen_text(app), what="warning")


async def test_quit_command_exits(make_session) -> None:
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "/quit")
        await pilot.pause(0.3)
    assert app.return_code == 0


async def test_slash_completion_offers_commands(make_session) -> None:
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/ses")
        await wait_until(pilot, lambda: "/session" in screen_text(app), what="'/session' in screen_text(app)")
        await pilot.press("tab")
        assert app.editor.text == "/session "


async def test_enter_in_a_burst_after_the_menu_opened_sends_the_typed_command(make_session) -> None:
    """"/" opens the menu ("/settings" first); "session" and Enter then arrive in one read (a fast
    typist, tmux send-keys): Enter runs before the editor has handled the text changes of those
    keys. It runs "/session", not "/settings" applied over the "/" of a menu the keys made stale."""
    from textual import events

    session, faux = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.is_open and menu.items[0].label == "/settings", what="menu")
        for key in "session":  # posted together: the app hands them to the editor before Enter's action runs
            app.post_message(events.Key(key, key))
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: "Tool results" in screen_text(app), what="the /session answer")
        assert app.editor.text == "" and faux.state.call_count == 0


async def test_at_completion_lists_project_files(make_session, project: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "parser.py").write_text("x = 1\n")
    (project / "README.md").write_text("hi\n")
    (project / ".gitignore").write_text("ignored.txt\n")
    (project / "ignored.txt").write_text("no\n")
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "look at @pars")
        await wait_until(pilot, lambda: "src/parser.py" in screen_text(app), what="'src/parser.py' in screen_text(app)")
        await pilot.press("enter")  # accepts the completion, does not send
        assert app.editor.text == "look at @src/parser.py "


async def test_tab_on_an_at_folder_steps_into_it(make_session, project: Path) -> None:
    (project / "src" / "deep").mkdir(parents=True)
    (project / "src" / "parser.py").write_text("x = 1\n")
    (project / "src" / "lexer.py").write_text("x = 1\n")
    (project / "src" / "deep" / "tree.py").write_text("x = 1\n")
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "look at @src")
        await pilot.pause(0.1)
        menu = app.query_one(CompletionMenu)
        assert menu.selected() is not None and menu.selected().replacement == "@src/"  # type: ignore[union-attr]
        await pilot.press("tab")
        await wait_until(pilot, lambda: app.editor.text == "look at @src/", what="app.editor.text == 'look at @src/'")
        # the menu now lists the folder's own entries, folders first
        assert menu.is_open and [item.label for item in menu.items] == ["src/deep/", "src/lexer.py", "src/parser.py"]
        await pilot.press("tab")  # into the subfolder
        await wait_until(pilot, lambda: app.editor.text == "look at @src/deep/", what="app.editor.text == 'look at @src/deep/'")
        assert [item.label for item in menu.items] == ["src/deep/tree.py"]
        await pilot.press("tab")
        assert app.editor.text == "look at @src/deep/tree.py "


async def test_tab_completes_paths(make_session, project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("x\n")
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "see ./do")
        await pilot.press("tab")
        assert app.editor.text == "see ./docs/"
        await pilot.press("tab")
        assert app.editor.text == "see ./docs/guide.md"


async def test_no_model_shows_how_to_configure(project: Path) -> None:
    from pi_coder.ai.models import create_models
    from pi_coder.core import create_agent_session
    from pi_coder.settings import load_settings

    models = create_models(include_builtin=False, env={}, models_toml=Path("/nonexistent/models.toml"))
    session = create_agent_session(str(project), settings=load_settings(str(project)), models=models, no_session=True)
    assert session.model is None
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_until(pilot, lambda: "No model configured" in screen_text(app), what="the notice")
        text = screen_text(app)
        assert "ANTHROPIC_API_KEY" in text and "models.toml" in text


async def test_tool_call_block_appears_while_arguments_stream(make_session, project: Path) -> None:
    """A tool block is on screen before the call finishes streaming; Ctrl+O expands its output."""
    (project / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 31)))
    session, faux = make_session(
        [faux_message(faux_tool_call("read", {"path": "big.txt"})), faux_message("read it")],
        tool_names=["read"],
        faux_options={"chunk_delay": 0.05},
    )
    # The call is held before it runs, so the block is seen before the call finished, however
    # slowly this test is scheduled.
    gate = asyncio.Event()
    original = session.agent.before_tool_call

    async def held(*args: Any, **kwargs: Any) -> Any:
        await gate.wait()
        result = original(*args, **kwargs) if original is not None else None
        return await result if inspect.isawaitable(result) else result

    session.agent.before_tool_call = held
    app = make_app(session)
    async with app.run_test(size=(100, 60)) as pilot:
        await _send(pilot, "read big.txt")
        from pi_coder.tui.widgets.tool_call import ToolCallBlock

        await wait_until(pilot, lambda: bool(app.query(ToolCallBlock)), what="block", timeout=10)
        assert app.query_one(ToolCallBlock).view.status in ("streaming", "pending", "running")
        gate.set()
        await wait_until(pilot, lambda: not session.is_streaming and faux.state.call_count == 2, what="done")
        await wait_until(pilot, lambda: "20 more lines" in screen_text(app), what="the result shown")
        text = screen_text(app)
        assert "read big.txt" in text and "line 10" in text and "line 11" not in text
        assert "20 more lines" in text
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "line 30" in screen_text(app), what="'line 30' in screen_text(app)")


async def test_initial_messages_are_sent_in_order(make_session) -> None:
    """``pi "a" "b"``: each message is sent once the previous run has finished."""
    session, faux = make_session(["answer one", "answer two"])
    app = make_app(session, initial_messages=["first", "second"])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: faux.state.call_count == 2 and not session.is_streaming, what="both")
        await wait_until(pilot, lambda: "answer two" in screen_text(app), what="the second answer shown")
        assert user_texts(faux.state.contexts[1]) == ["first", "second"]
        text = screen_text(app)
        assert text.index("answer one") < text.index("second") < text.index("answer two")


async def test_resumed_session_renders_tool_calls_with_results(make_session, project: Path) -> None:
    from pi_coder.session.store import SessionStore

    (project / "notes.txt").write_text("remember the milk\n")
    first, _ = make_session(
        [faux_message(faux_tool_call("read", {"path": "notes.txt"})), "It says to remember the milk."],
        no_session=False,
        tool_names=["read"],
    )
    await first.prompt("what do my notes say?")
    path = first.session_file
    await first.close()
    resumed, _ = make_session([], no_session=False, store=SessionStore.open(path), tool_names=["read"])
    app = make_app(resumed)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "It says to remember the milk." in screen_text(app), what="the transcript")
        text = screen_text(app)
        assert "what do my notes say?" in text
        assert "read notes.txt" in text and "remember the milk" in text
        assert "It says to remember the milk." in text
        from pi_coder.tui.widgets.tool_call import ToolCallBlock

        assert app.query_one(ToolCallBlock).view.status == "success"


async def test_text_and_enter_arriving_in_one_burst_are_kept_in_order(make_session) -> None:
    """Keys read in one burst (``tmux send-keys "text" Enter``, a fast typist) submit the whole text.

    Regression: Enter is a priority binding and ran before the characters queued ahead of it, so the
    first burst submitted nothing and the next one sent the previous text and dropped its own.
    """
    from textual import events

    session, faux = make_session([faux_message("one"), faux_message("two")])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        for burst in ("alpha beta", "gamma"):
            for char in burst:
                app.post_message(events.Key(char if char != " " else "space", char))
            app.post_message(events.Key("enter", "\r"))
            await wait_until(pilot, lambda n=burst: n in user_texts_of(session), what=f"{burst!r} sent")
            await wait_until(pilot, lambda: not session.is_streaming, what="reply")
        assert user_texts_of(session) == ["alpha beta", "gamma"]


def user_texts_of(session) -> list[str]:
    out = []
    for message in session.messages:
        if message.role == "user":
            content = message.content
            out.append(content if isinstance(content, str) else "".join(b.text for b in content if b.type == "text"))
    return out


async def test_export_writes_the_session_as_html(make_session, tmp_path: Path) -> None:
    """``/export <file>`` writes the transcript to an HTML page and says where."""
    session, faux = make_session([faux_message("the answer is 42")])
    app = make_app(session)
    target = tmp_path / "out" / "page.html"
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "what is the answer?")
        await wait_until(pilot, lambda: faux.state.call_count == 1 and not session.is_streaming, what="reply")
        await _send(pilot, f"/export {target}")
        await wait_until(pilot, target.exists, what="export")
        await wait_until(pilot, lambda: "Session exported to:" in screen_text(app), what="notice")
    page = target.read_text(encoding="utf-8")
    assert "what is the answer?" in page and "the answer is 42" in page


async def test_footer_estimates_context_while_the_first_answer_streams(make_session) -> None:
    """Before any usage arrives the footer shows chars/4 of the context, not 0.0 %."""
    session, _ = make_session([faux_message("streaming " * 400)], faux_options={"chunk_delay": 0.02})
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "x" * 51_200)  # 12,800 tokens = 10.0 % of 128k
        await wait_until(pilot, lambda: session.is_streaming, what="streaming")
        await wait_until(
            pilot, lambda: (app.query_one(StatusBar).info.context_percent or 0) > 0, what="estimate"
        )
        assert session.is_streaming
        assert app.query_one(StatusBar).info.context_percent == 10.0
        session.abort()


async def test_bang_output_counts_in_the_context_figure(make_session) -> None:
    """``!`` output after a reply adds to the reply's usage; ``!!`` output does not."""
    session, _ = make_session([faux_message("ok", usage=Usage(input=100, total_tokens=100))])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "hi")
        await wait_until(pilot, lambda: not session.is_streaming and len(session.messages) >= 2, what="reply")
        await _send(pilot, "!!python3 -c \"print('n' * 51_200)\"")
        await wait_until(pilot, lambda: any(not b.running for b in app.query(BashBlock)), what="bash end")
        await pilot.pause(0.1)
        assert (app.query_one(StatusBar).info.context_percent or 0) < 1.0
        await _send(pilot, "!python3 -c \"print('y' * 51_200)\"")
        await wait_until(pilot, lambda: len([b for b in app.query(BashBlock) if not b.running]) == 2, what="bash 2")
        await wait_until(pilot, lambda: (app.query_one(StatusBar).info.context_percent or 0) >= 10.0, what="the figure")


async def test_slash_menu_lists_commands_in_pis_order_with_a_count(make_session) -> None:
    """``/`` lists Pi's built-ins in Pi's order, then the rest; "(k/N)" follows the selection."""
    from pi_coder.tui.completion import PI_COMMAND_ORDER
    from pi_coder.tui.widgets.completion_menu import CompletionMenu

    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.is_open, what="menu")
        names = [item.label.removeprefix("/") for item in menu.items]
        pis = [n for n in names if n in PI_COMMAND_ORDER]
        assert pis == [n for n in PI_COMMAND_ORDER if n in pis]
        assert names[: len(pis)] == pis
        assert names[:6] == ["settings", "model", "tree", "thinking", "scoped-models", "export"]  # Pi 1.6's
        total = len(names)
        assert total > 5
        await wait_until(pilot, lambda: f"(1/{total})" in screen_text(app), what="f'(1/{total})' in screen_text(app)")
        await pilot.press("down", "down")
        await wait_until(pilot, lambda: f"(3/{total})" in screen_text(app), what="f'(3/{total})' in screen_text(app)")
        assert menu.size.height == 5 and menu.outer_size.height == 6  # 5 rows (default) + the count
        await type_text(pilot, "mo")
        await wait_until(pilot, lambda: menu.items[0].label == "/model", what="menu.items[0].label == '/model'")


async def test_code_block_indent_setting_indents_code_blocks(make_session) -> None:
    from pi_coder.tui.widgets.markdown_view import set_code_block_indent

    session, _ = make_session([faux_message("Look:\n\n```\nmarker_line()\n```\n")])
    session.settings.markdown.code_block_indent = "      "
    app = make_app(session)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await _send(pilot, "code?")
            await wait_until(pilot, lambda: "marker_line()" in screen_text(app), what="answer")
            await wait_until(pilot, lambda: not session.is_streaming, what="end")
            await pilot.pause(0.1)
            line = next(x for x in screen_text(app).splitlines() if "marker_line()" in x)
            fence = next(x for x in screen_text(app).splitlines() if x.strip() == "```")
            assert line.index("marker_line") - fence.index("```") == 6
    finally:
        set_code_block_indent("  ")


async def test_editor_padding_x_setting_pads_the_editor(make_session) -> None:
    session, _ = make_session([])
    session.settings.editor_padding_x = 2
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "padded-text")
        await pilot.pause(0.05)
        line = next(x for x in screen_text(app).splitlines() if "padded-text" in x)
        assert line.index("padded-text") - line.index("│") == 4  # border, 1 + 2 columns


async def test_idle_app_runs_no_timers_even_with_animations_on(make_session) -> None:
    """An idle TUI draws nothing: the editor's cursor is steady (as Pi's), so no blink timer repaints."""
    session, _ = make_session([])
    app = make_app(session, animate=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.2)
        assert app.editor.cursor_blink is False


async def test_start_up_news_is_an_info_note_not_a_warning(make_session) -> None:
    """A local server found at start is news: shown muted, not in the warning colour (issue 33)."""
    from pi_coder.tui.widgets.assistant_message import MessageNote

    session, _faux = make_session([])
    app = make_app(session, startup_news=["Found llama.cpp at 127.0.0.1:8080 with 1 model"], startup_notices=["a warning"])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: len(app.query(MessageNote)) >= 2, what="notes")
        notes = {str(note.render()): note.classes for note in app.query(MessageNote)}
        news = next(classes for text, classes in notes.items() if "llama.cpp" in text)
        warning = next(classes for text, classes in notes.items() if "a warning" in text)
        assert "-info" in news and "-warning" not in news
        assert "-warning" in warning
