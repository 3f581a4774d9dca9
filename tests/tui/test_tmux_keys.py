"""Modified Enter keys through tmux, as a terminal inside tmux delivers them.

tmux (``extended-keys on``) forwards Shift+Enter only to a program that asked for xterm's
modifyOtherKeys (tui/driver.py), and drops it otherwise. To see that path a test needs a real
terminal *outside* the tmux that runs pi: an outer tmux whose pane runs ``tmux attach`` of the
inner server; bytes typed into the outer pane reach the inner tmux as a terminal's input.
Both servers are private (``tmux -L``) so their options touch no other test.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.sse_server import SSEServer
from tests.tui.tmux_support import PI, Tmux, pi_home

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _pi_command(home: Path) -> str:
    return (
        f"env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY PI_CODER_HOME={home} {PI} --model local/test-model;"
        " echo PI-EXIT=$?; sleep 60"
    )


def _inner(home: Path, project: Path, extended_keys: str) -> Tmux:
    """pi in a private tmux server with ``extended-keys`` set before pi starts."""
    inner = Tmux("inner", socket=f"pi-test-in-{uuid.uuid4().hex[:8]}")
    inner.run("new-session", "-d", "-s", "keep", "-x", "100", "-y", "30", "sleep 120")
    inner.run("set-option", "-g", "extended-keys", extended_keys)
    inner.run("new-session", "-d", "-s", inner.name, "-x", "100", "-y", "30", "-c", str(project), _pi_command(home))
    return inner


@pytest.fixture
def nested(tmp_path: Path) -> Iterator[tuple[Tmux, Tmux, SSEServer]]:
    """(outer terminal, inner tmux running pi with extended-keys on, server)."""
    with pi_home(tmp_path) as (home, project, server):
        inner = _inner(home, project, "on")
        outer = Tmux("outer", socket=f"pi-test-out-{uuid.uuid4().hex[:8]}")
        assert inner.socket is not None
        outer.run(
            "new-session", "-d", "-s", outer.name, "-x", "100", "-y", "30",
            f"env -u TMUX tmux -L {inner.socket} attach -t {inner.name}",
        )  # fmt: skip
        try:
            yield outer, inner, server
        finally:
            outer.run("kill-server")
            inner.run("kill-server")


def test_shift_enter_through_tmux_extended_keys_inserts_newlines(nested: tuple[Tmux, Tmux, SSEServer]) -> None:
    outer, inner, server = nested
    inner.wait_text("pi v")
    inner.wait_text("test-model")
    outer.text("first")
    outer.raw(b"\x1b[27;2;13~")  # xterm's modifyOtherKeys Shift+Enter
    outer.text("second")
    outer.raw(b"\x1b[13;2u")  # the CSI u form
    outer.text("third")
    inner.wait(lambda: "third" in inner.screen(), "the third line")
    rows = [line.strip("│ ") for line in inner.screen().splitlines()]
    assert rows.index("first") + 1 == rows.index("second") and rows.index("second") + 1 == rows.index("third")
    assert not server.requests  # a new line, not a submit
    assert "extended-keys is off" not in inner.screen()


def test_warning_when_tmux_extended_keys_is_off(tmp_path: Path) -> None:
    with pi_home(tmp_path) as (home, project, _server):
        inner = _inner(home, project, "off")
        try:
            inner.wait_text("pi v")
            inner.wait_text("tmux extended-keys is off")
            inner.wait_text("set -g extended-keys on")
        finally:
            inner.run("kill-server")
