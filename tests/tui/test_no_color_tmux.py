"""``NO_COLOR=1`` in a real terminal: not one cell with a fixed colour, background or text.

Textual's own NO_COLOR handling turned every colour grey (a colour-234 page, headings and
removed diff lines in colour 237: grey on grey). pi now uses the terminal's own colours and
shows structure with bold, underline, reverse and dim (tui/theming.py).
"""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path

import pytest

from tests.support.sse_server import Text, ToolCall, Turn
from tests.tui.tmux_support import PI, Tmux, pi_home

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ANSWER = (
    "## Second heading\n\n### Third heading\n\nA [link](https://example.com/a), `code` and https://example.org.\n\n"
    "> quoted one\n> quoted two\n\n---\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
)
_SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def colour_codes(screen: str) -> list[str]:
    """Every SGR sequence of ``screen`` that sets a foreground or background colour."""
    found = []
    for match in _SGR.finditer(screen):
        params = [int(p) for p in re.split(r"[;:]", match.group(1)) if p.isdigit()]
        if any(p in (38, 48) or 30 <= p <= 37 or 40 <= p <= 47 or 90 <= p <= 97 or 100 <= p <= 107 for p in params):
            found.append(match.group(0))
    return found


def test_colour_codes_are_recognised() -> None:
    assert colour_codes("\x1b[1m\x1b[48;5;234mx\x1b[38;2;1;2;3m\x1b[31m") == ["\x1b[48;5;234m", "\x1b[38;2;1;2;3m", "\x1b[31m"]
    assert colour_codes("\x1b[0m\x1b[1;4m\x1b[39m\x1b[49m\x1b[7m\x1b[2m") == []


def test_no_color_draws_no_fixed_colour_anywhere(tmp_path: Path) -> None:
    with pi_home(tmp_path) as (home, project, server):
        (project / "notes.txt").write_text("line one\nline two\nline three\n")
        server.enqueue(
            Turn([ToolCall("edit", {"path": "notes.txt", "edits": [{"oldText": "line two", "newText": "line 2"}]})]),
            Turn([Text(ANSWER)]),
        )
        tmux = Tmux(f"pi-test-{uuid.uuid4().hex[:8]}")
        command = (
            f"env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY NO_COLOR=1 PI_CODER_HOME={home} {PI} --model local/test-model;"
            " echo PI-EXIT=$?; sleep 60"
        )
        tmux.run("new-session", "-d", "-s", tmux.name, "-x", "100", "-y", "50", "-c", str(project), command)
        try:
            tmux.wait_text("test-model")
            tmux.text("change it")
            tmux.keys("Enter")
            tmux.wait_text("quoted two")
            tmux.wait_text("-2 line two")
            drawn = tmux.run("capture-pane", "-p", "-e", "-t", tmux.name)
            plain = _SGR.sub("", drawn)
            assert "### Third heading" in plain and "+2 line 2" in plain and "Second heading" in plain
            assert colour_codes(drawn) == []
            assert "\x1b[7m" in drawn  # the changed words of the diff: reverse video
            tmux.keys("C-l")  # the model picker: its selected row
            tmux.wait_text("Select model")
            assert colour_codes(tmux.run("capture-pane", "-p", "-e", "-t", tmux.name)) == []
            tmux.keys("Escape")
        finally:
            tmux.run("kill-session", "-t", tmux.name)
