"""An extension in a real terminal (tmux; extensions §9, issue 15): ``pi -e hello.py`` adds
``/hello``, listed in ``/`` completion; it opens a select dialog, and the picked item lands in
the editor."""

from __future__ import annotations

import shutil
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.tmux_support import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

PI = Path(sys.executable).parent / "pi"

HELLO = """
from pi_coder.extensions import ExtensionAPI

def extension(pi: ExtensionAPI) -> None:
    @pi.command("hello", description="Say hello from an extension")
    async def hello(args, ctx):
        choice = await ctx.ui.select("Pick a greeting", ["hello world", "good morning"])
        if choice:
            ctx.ui.set_editor_text(f"{choice} from the extension")
"""


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    if not PI.exists():
        pytest.skip(f"the pi entry point is not installed next to {sys.executable}")
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    ext = project / "hello.py"
    ext.write_text(textwrap.dedent(HELLO))
    session = Tmux(f"pi-ext-{uuid.uuid4().hex[:8]}")
    command = (
        f"env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY PI_CODER_HOME={home} {PI} --provider faux -e {ext};"
        " echo PI-EXIT=$?; sleep 60"
    )
    session.run("new-session", "-d", "-s", session.name, "-x", "100", "-y", "30", "-c", str(project), command)
    try:
        yield session
    finally:
        session.run("kill-session", "-t", session.name)


def test_hello_command_completion_select_and_editor(tmux: Tmux) -> None:
    tmux.wait_text("faux", timeout=90)  # the footer: the TUI is up
    tmux.text("/hel")
    tmux.wait_text("Say hello from an extension", timeout=60)  # listed in / completion with its description
    tmux.keys("Tab")
    tmux.wait(lambda: "/hello" in tmux.screen() and "Say hello" not in tmux.screen(), "completion accepted", timeout=60)
    tmux.keys("Enter")
    tmux.wait_text("Pick a greeting", timeout=60)
    tmux.wait_text("good morning", timeout=60)
    tmux.text("morning")  # the dialog's filter: only "good morning" is left
    tmux.wait(lambda: "hello world" not in tmux.screen(), "the filtered list", timeout=60)
    tmux.keys("Enter")
    tmux.wait_text("good morning from the extension", timeout=60)
    tmux.wait(lambda: "Pick a greeting" not in tmux.screen(), "the dialog to close", timeout=60)
    tmux.keys("C-c", "C-c")
    tmux.wait(tmux.exited, "pi to exit", timeout=60)
    assert "PI-EXIT=0" in tmux.screen()
