"""Pure pieces of the TUI: key parsing, formatting, completion, tool rendering, key table."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console

from pi_coder.tui.completion import ProjectFiles, fuzzy_filter, fuzzy_score, path_completions, token_context
from pi_coder.tui.driver import PiXTermParser
from pi_coder.tui.format import format_tokens, git_branch, shorten_home
from pi_coder.tui.keys import KEY_ACTIONS, display_keys, effective_keys
from pi_coder.tui.tool_render import ToolView, render_tool
from pi_coder.tui.widgets.status_bar import FooterInfo, render_footer


def _keys(data: str) -> list[str]:
    parser = PiXTermParser()
    events = list(parser.feed(data))
    time.sleep(0.15)  # past the escape delay, so a lone ESC is reported
    events += list(parser.tick())
    return [e.key for e in events]


def test_escape_cr_is_alt_enter_and_lone_escape_stays_escape() -> None:
    """The legacy Alt+Enter encoding (ESC CR) and modifyOtherKeys map to alt+enter."""
    assert _keys("\x1b\r") == ["alt+enter"]
    assert _keys("\x1b[27;3;13~") == ["alt+enter"]
    assert _keys("\x1b[13;3u") == ["alt+enter"]  # kitty protocol, as Textual already parses it
    assert _keys("\x1b[27;2;13~") == ["shift+enter"]
    assert _keys("\x1b") == ["escape"]
    assert _keys("\r") == ["enter"]
    assert _keys("ab\x1b\rc") == ["a", "b", "alt+enter", "c"]
    assert _keys("\x1b[1;3A") == ["alt+up"]


def test_format_tokens_like_pi() -> None:
    assert [format_tokens(n) for n in (0, 999, 1234, 45_000, 999_499, 1_300_000, 12_000_000)] == [
        "0",
        "999",
        "1.2k",
        "45k",
        "999k",
        "1.3M",
        "12M",
    ]


def test_shorten_home_and_git_branch(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert shorten_home(str(tmp_path / "proj")) == "~/proj"
    assert shorten_home("/elsewhere") == "/elsewhere"
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    (repo / "sub").mkdir()
    assert git_branch(str(repo / "sub")) == "feature/x"
    (repo / ".git" / "HEAD").write_text("0123456789abcdef\n")
    assert git_branch(str(repo)) == "0123456"


def test_token_context_and_fuzzy() -> None:
    assert token_context("/se", 3, 0).kind == "slash"
    assert token_context("/se x", 5, 0).kind == "argument"  # a command's argument completions
    assert token_context("/se", 3, 1) is None  # only on the first line
    ctx = token_context("look @src/pa", 12, 0)
    assert (ctx.kind, ctx.query, ctx.start) == ("file", "src/pa", 5)
    assert token_context("mail a@b", 8, 0) is None
    assert fuzzy_filter("ses", ["new", "session", "hotkeys"]) == ["session"]
    assert fuzzy_filter("prs", ["src/parser.py", "README.md"]) == ["src/parser.py"]


def test_one_fuzzy_score_for_completion_and_pickers() -> None:
    from pi_coder.tui.screens import _fuzzy

    assert _fuzzy.fuzzy_score is fuzzy_score
    # Last path component, then prefix, then word start, then inside a word, then in order.
    ranked = ["a/app.py", "app/x.py", "x/my-app", "x/happy", "x/a_p_p"]
    scores = [fuzzy_score("app", text) for text in ranked]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores)
    assert fuzzy_score("app", "x/yz") is None
    # Every whitespace-separated token has to match (the pickers' queries).
    assert fuzzy_score("claude sonnet", "anthropic/claude-sonnet-4") is not None
    assert fuzzy_score("claude gpt", "anthropic/claude-sonnet-4") is None


def test_path_completions(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("")
    (tmp_path / "dist.txt").write_text("")
    (tmp_path / ".hidden").write_text("")
    assert [c.replacement for c in path_completions("d", str(tmp_path))] == ["dist.txt", "docs/"]
    assert [c.replacement for c in path_completions("./docs/", str(tmp_path))] == ["./docs/a.md"]
    assert [c.replacement for c in path_completions(".h", str(tmp_path))] == [".hidden"]


def test_project_files_respect_gitignore(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.o").write_text("")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / ".git").mkdir()
    files = ProjectFiles(str(tmp_path)).list()
    assert "src/main.py" in files and "src/" in files
    assert not any(f.startswith("build") for f in files)


def _text(renderable, width: int = 80) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_tool_rendering_per_tool() -> None:
    bash = ToolView("c1", "bash", {"command": "make test", "timeout": 30}, status="error")
    bash.output = "\n".join(f"out {i}" for i in range(12)) + "\n\nCommand exited with code 2"
    collapsed = _text(render_tool(bash, expanded=False))
    assert "$ make test (timeout 30s)" in collapsed
    assert "7 earlier lines" in collapsed and "out 11" in collapsed and "out 6" not in collapsed
    assert "exit 2" in collapsed
    assert "out 0" in _text(render_tool(bash, expanded=True))

    edit = ToolView("c2", "edit", {"path": "a.py"}, status="pending", preview="-1 old\n+1 new")
    assert "-1 old" in _text(render_tool(edit, False)) and "+1 new" in _text(render_tool(edit, False))
    done = ToolView("c2", "edit", {"path": "a.py"}, status="success", details={"diff": "+3 x", "firstChangedLine": 3})
    assert "edit a.py:3" in _text(render_tool(done, False))

    read = ToolView("c3", "read", {"path": "m.py", "offset": 5, "limit": 10}, status="success", output="a\nb")
    assert "read m.py:5-14" in _text(render_tool(read, False))

    grep = ToolView("c4", "grep", {"pattern": "TODO", "path": "src"}, status="success", output="\n".join("x" * 20))
    text = _text(render_tool(grep, False))
    assert "grep /TODO/ in src" in text and "5 more lines" in text


def test_footer_colours_and_layout() -> None:
    info = FooterInfo(cwd="~/p", branch="main", session_name="feat", input=1500, output=20, cost=0.01234,
                      context_percent=75.0, context_window=200_000, auto_compaction=True, model="m1",
                      reasoning=True, thinking_level="high")
    text = _text(render_footer(info, 80))
    assert text.splitlines()[0].startswith("~/p (main) • feat")
    assert "↑1.5k ↓20 $0.012 75.0%/200k (auto)" in text
    assert text.splitlines()[1].rstrip().endswith("m1 • high")
    info.context_percent = None
    assert "?/200k" in _text(render_footer(info, 80))
    info.provider = "mocka"
    assert _text(render_footer(info, 80)).splitlines()[1].rstrip().endswith("(mocka) m1 • high")  # as Pi


def test_key_table_is_remappable() -> None:
    keys = effective_keys({"app.interrupt": ["ctrl+g"]})
    assert keys["app.interrupt"] == "ctrl+g"
    assert keys["app.message.followUp"] == "alt+enter"
    assert display_keys("ctrl+shift+p,alt+up") == "Ctrl+Shift+P / Alt+Up"
    assert len({a.id for a in KEY_ACTIONS}) == len(KEY_ACTIONS)


def test_render_diff_reverses_the_changed_words_of_a_replaced_line() -> None:
    from pi_coder.tui.tool_render import render_diff

    text = render_diff(" 1 a\n-2 value = compute(x, old_name)\n+2 value = compute(x, new_name)\n 3 b")
    reversed_spans = [text.plain[s.start : s.end] for s in text.spans if s.style == "reverse"]
    assert reversed_spans == ["old_name", "new_name"]


def test_render_diff_keeps_whole_line_colours_for_multi_line_changes() -> None:
    from pi_coder.tui.tool_render import render_diff

    text = render_diff("-1 one\n-2 two\n+1 uno\n+2 dos")
    assert not [s for s in text.spans if s.style == "reverse"]
    assert [s.style for s in text.spans] == ["red", "red", "green", "green"]
