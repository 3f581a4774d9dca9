"""The display settings that reach the terminal itself, in a real terminal (tmux): the ``system``
theme draws only with the terminal's own palette, ``show_hardware_cursor`` shows the terminal's
cursor at the editor's caret, ``terminal.show_terminal_progress`` sends OSC 9;4 while the agent
works (tui/terminal_display.py)."""

from __future__ import annotations

import re
import shutil
import time
import uuid
from pathlib import Path

import pytest

from tests.support.sse_server import Text, ToolCall, Turn
from tests.tui.test_no_color_tmux import ANSWER, colour_codes
from tests.tui.tmux_support import PI, Tmux, pi_home, start_pi

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _cursor(tmux: Tmux) -> tuple[bool, int, int]:
    """(the terminal cursor is visible, its column, its row)."""
    flag, x, y = tmux.run("display-message", "-p", "-t", tmux.name, "#{cursor_flag} #{cursor_x} #{cursor_y}").split()
    return flag == "1", int(x), int(y)


def _caret_row(tmux: Tmux, needle: str) -> tuple[int, int]:
    """(row, column just after ``needle``) on the screen."""
    for row, line in enumerate(tmux.screen().splitlines()):
        if needle in line:
            return row, line.index(needle) + len(needle)
    raise AssertionError(f"{needle!r} not on screen:\n{tmux.screen()}")


def test_system_theme_draws_with_the_terminals_own_palette_only(tmp_path: Path) -> None:
    with pi_home(tmp_path) as (home, project, server):
        (home / "settings.toml").write_text('theme = "system"\n')
        (project / "notes.txt").write_text("line one\nline two\nline three\n")
        server.enqueue(
            Turn([ToolCall("edit", {"path": "notes.txt", "edits": [{"oldText": "line two", "newText": "line 2"}]})]),
            Turn([Text(ANSWER)]),
        )
        tmux = start_pi(home, project, size=(100, 50))
        try:
            tmux.wait_text("test-model")
            tmux.text("change it")
            tmux.keys("Enter")
            tmux.wait_text("quoted two")
            tmux.wait_text("-2 line two")
            drawn = tmux.run("capture-pane", "-p", "-e", "-t", tmux.name)
            codes = colour_codes(drawn)
            assert codes, "the system theme still has colours"
            # 30-37/90-97 (and backgrounds 40-47/100-107): the 16 colours the terminal defines
            # itself; no RGB or 256-colour value anywhere (38;... / 48;...)
            assert not [code for code in codes if re.search(r"\[(?:[0-9;]*;)?(?:38|48)[;:]", code)], codes
            tmux.keys("C-l")  # a list's selected row: reverse video, not a fixed background
            tmux.wait_text("Select model")
            picker = tmux.run("capture-pane", "-p", "-e", "-t", tmux.name)
            assert not [c for c in colour_codes(picker) if re.search(r"\[(?:[0-9;]*;)?(?:38|48)[;:]", c)]
            assert "\x1b[7m" in picker or ";7m" in picker or "[1;7m" in picker
            tmux.keys("Escape")
        finally:
            tmux.run("kill-session", "-t", tmux.name)


def test_hardware_cursor_shows_at_the_caret_and_hides_under_a_dialog(tmp_path: Path) -> None:
    with pi_home(tmp_path) as (home, project, _server):
        tmux = start_pi(home, project)
        try:
            tmux.wait_text("test-model")
            tmux.text("abc")
            tmux.wait_text("abc")
            time.sleep(0.3)
            assert not _cursor(tmux)[0]  # off (the default): the drawn cursor only
        finally:
            tmux.run("kill-session", "-t", tmux.name)

        (home / "settings.toml").write_text("show_hardware_cursor = true\n")
        tmux = start_pi(home, project)
        try:
            tmux.wait_text("test-model")
            tmux.text("abcXYZ")
            tmux.wait_text("abcXYZ")
            row, column = _caret_row(tmux, "abcXYZ")
            tmux.wait(lambda: _cursor(tmux) == (True, column, row), f"the cursor at ({column}, {row})")
            tmux.keys("Left", "Left")
            tmux.wait(lambda: _cursor(tmux) == (True, column - 2, row), "the cursor two columns back")
            tmux.keys("C-l")  # a dialog: the model picker
            tmux.wait_text("Select model")
            tmux.wait(lambda: not _cursor(tmux)[0], "the cursor hidden under the dialog")
            tmux.keys("Escape")
            tmux.wait(lambda: _cursor(tmux) == (True, column - 2, row), "the cursor back at the caret")
        finally:
            tmux.run("kill-session", "-t", tmux.name)


def test_terminal_progress_while_the_agent_works(tmp_path: Path) -> None:
    with pi_home(tmp_path) as (home, project, server):
        (home / "settings.toml").write_text("[terminal]\nshow_terminal_progress = true\n")
        server.enqueue(Turn([Text("first part, then more")], delay=0.5))
        raw = tmp_path / "raw.out"
        tmux = start_pi(home, project)
        try:
            tmux.run("pipe-pane", "-O", "-t", tmux.name, f"cat > {raw}")  # what pi writes, byte for byte
            tmux.wait_text("test-model")
            tmux.text("go")
            tmux.keys("Enter")
            tmux.wait_text("then more")
            tmux.wait(lambda: b"\x1b]9;4;0;" in raw.read_bytes(), "the progress cleared")
            data = raw.read_bytes()
            busy = data.index(b"\x1b]9;4;3;")
            assert busy < data.index(b"\x1b]9;4;0;", busy)
        finally:
            tmux.run("kill-session", "-t", tmux.name)

    (tmp_path / "off").mkdir()
    with pi_home(tmp_path / "off") as (home, project, server):
        server.enqueue(Turn([Text("an answer")]))
        raw = tmp_path / "raw-off.out"
        tmux = start_pi(home, project)
        try:
            tmux.run("pipe-pane", "-O", "-t", tmux.name, f"cat > {raw}")
            tmux.wait_text("test-model")
            tmux.text("go")
            tmux.keys("Enter")
            tmux.wait_text("an answer")
            time.sleep(0.5)
            assert b"\x1b]9;4" not in raw.read_bytes()  # off by default
        finally:
            tmux.run("kill-session", "-t", tmux.name)


def _accent_drawn(screen: str, rgb: tuple[int, int, int]) -> bool:
    r, g, b = rgb
    return f"38;2;{r};{g};{b}" in screen


def _pair_theme_under(home: Path, project: Path, background: str, wanted: tuple[int, int, int], other: tuple[int, int, int]) -> None:
    """pi in a private tmux server whose window style has ``background``: the accent drawn is ``wanted``."""
    tmux = Tmux("pi", socket=f"pi-test-bg-{uuid.uuid4().hex[:8]}")
    tmux.run("new-session", "-d", "-s", "keep", "-x", "100", "-y", "30", "sleep 120")
    tmux.run("set-option", "-g", "window-style", f"bg={background}")
    command = (
        f"env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u COLORFGBG COLORTERM=truecolor PI_CODER_HOME={home}"
        f" {PI} --model local/test-model; echo PI-EXIT=$?; sleep 60"
    )
    tmux.run("new-session", "-d", "-s", tmux.name, "-x", "100", "-y", "30", "-c", str(project), command)

    def drawn() -> str:
        return tmux.run("capture-pane", "-p", "-e", "-t", tmux.name)

    try:
        tmux.wait_text("test-model")
        tmux.wait(lambda: _accent_drawn(drawn(), wanted), f"the {background} theme's accent")
        assert not _accent_drawn(drawn(), other)
        tmux.text("typed")
        tmux.wait_text("typed")
        assert "rgb:" not in tmux.screen() and "11;" not in tmux.screen()
    finally:
        tmux.run("kill-server")


def test_a_light_dark_pair_follows_the_background_the_terminal_reports(tmp_path: Path) -> None:
    """tmux answers ``OSC 11 ; ?`` with its window style's background: white here, so the pair
    loads the light theme (``$COLORFGBG`` says nothing), and the answer is not typed anywhere."""
    light_cyan, dark_cyan = (0x0B, 0x7A, 0x86), (0x56, 0xC8, 0xD8)
    with pi_home(tmp_path) as (home, project, _server):
        (home / "settings.toml").write_text('theme = "light/dark"\n')
        _pair_theme_under(home, project, "#ffffff", light_cyan, dark_cyan)
        _pair_theme_under(home, project, "#101010", dark_cyan, light_cyan)
