"""Hooks in the real TUI (tmux): a hook's ``ask`` opens pi's permission dialog; ``/hooks`` lists them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.sse_server import Text, ToolCall, Turn
from tests.tui.tmux_support import pi_home, start_pi

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ASK = (
    'python3 -c \'import json,sys; json.load(sys.stdin); print(json.dumps({\\"hookSpecificOutput\\": '
    '{\\"hookEventName\\": \\"PreToolUse\\", \\"permissionDecision\\": \\"ask\\", '
    '\\"permissionDecisionReason\\": \\"deploys\\"}}))\''
)


def test_ask_dialog_in_the_tui_and_slash_hooks(tmp_path: Path) -> None:
    with pi_home(tmp_path) as (home, project, server):
        (home / "settings.toml").write_text(
            f'[[hooks.PreToolUse]]\nmatcher = "Bash"\nhooks = [{{ type = "command", command = "{ASK}" }}]\n'
        )
        server.enqueue(
            Turn([ToolCall("bash", {"command": "touch deployed.txt"}, id="c1")]), Turn([Text("Deployed.")])
        )
        tmux = start_pi(home, project)
        try:
            tmux.wait_text("test-model", timeout=30)
            tmux.text("/hooks")
            tmux.keys("Enter")
            tmux.wait_text("PreToolUse:")
            tmux.text("deploy it")
            tmux.keys("Enter")
            tmux.wait_text("Allow Bash: touch deployed.txt?", timeout=30)
            tmux.wait_text("hook: deploys")
            tmux.keys("Enter")  # the first option: Allow once
            tmux.wait_text("Deployed.", timeout=30)
            assert (project / "deployed.txt").exists()
        finally:
            tmux.run("kill-session", "-t", tmux.name)
