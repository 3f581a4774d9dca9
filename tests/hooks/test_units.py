"""Matchers, the tool-name mapping, configuration files and the process runner, in-process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pi_coder.hooks.config import HookCommand, load_hook_config, matches
from pi_coder.hooks.process import MAX_OUTPUT, HookRun, run_hook
from pi_coder.hooks.tools import to_claude, to_pi
from pi_coder.permissions.trust import project_resources
from tests.support.start_race import (
    assert_cancel_while_starting_kills_all,
    kill_recorded,
    while_it_starts,
)


@pytest.mark.parametrize(
    ("matcher", "name", "expected"),
    [
        ("", "Bash", True),
        ("*", "mcp__git__status", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),
        ("bash", "Bash", False),
        ("Edit|Write", "Write", True),
        ("Edit|Write", "MultiEdit", False),
        ("Notebook.*", "NotebookEdit", True),
        ("mcp__github__.*", "mcp__github__search", True),
        ("mcp__github__*", "mcp__github__search", True),
        ("mcp__github__*", "mcp__gitlab__search", False),
        ("Edit|(", "Edit", False),
    ],
)
def test_matchers_follow_claude_code(matcher: str, name: str, expected: bool) -> None:
    assert matches(matcher, name) is expected


def test_tool_mapping_both_ways(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    assert to_claude("bash", {"command": "ls", "timeout": 2}, cwd) == (
        "Bash",
        {"command": "ls", "timeout": 2000},
    )
    assert to_claude("read", {"path": "a.txt", "offset": 3}, cwd) == (
        "Read",
        {"file_path": f"{cwd}/a.txt", "offset": 3},
    )
    assert to_claude("write", {"path": "/x/b", "content": "hi"}, cwd) == (
        "Write",
        {"file_path": "/x/b", "content": "hi"},
    )
    single = {"path": "c.py", "edits": [{"oldText": "a", "newText": "b"}]}
    assert to_claude("edit", single, cwd) == (
        "Edit",
        {"file_path": f"{cwd}/c.py", "old_string": "a", "new_string": "b", "replace_all": False},
    )
    multi = {"path": "c.py", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}]}
    name, data = to_claude("edit", multi, cwd)
    assert name == "MultiEdit" and data["edits"][1] == {"old_string": "c", "new_string": "d"}
    assert to_claude("grep", {"pattern": "x", "ignoreCase": True, "limit": 5}, cwd) == (
        "Grep",
        {"pattern": "x", "-i": True, "head_limit": 5},
    )
    assert to_claude("find", {"pattern": "*.py"}, cwd) == ("Glob", {"pattern": "*.py"})
    assert to_claude("ls", {"path": "src"}, cwd) == ("LS", {"path": f"{cwd}/src"})
    assert to_claude("mcp__git__status", {"repo": "."}, cwd) == ("mcp__git__status", {"repo": "."})

    # back: fields the hook leaves out keep their values; an unchanged path keeps the model's spelling
    assert to_pi("bash", {"command": "ls -a"}, {"command": "ls", "timeout": 2}, cwd) == {
        "command": "ls -a",
        "timeout": 2.0,
    }
    assert to_pi("edit", {"new_string": "B"}, single, cwd) == {
        "path": "c.py",
        "edits": [{"oldText": "a", "newText": "B"}],
    }
    assert to_pi("write", {"file_path": "/tmp/other"}, {"path": "b", "content": "x"}, cwd) == {
        "path": "/tmp/other",
        "content": "x",
    }
    assert to_pi("grep", {"-i": False, "output_mode": "content"}, {"pattern": "x"}, cwd) == {
        "pattern": "x",
        "ignoreCase": False,
    }


def test_config_sources_trust_and_warnings(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    (project / ".claude").mkdir(parents=True)
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard", "timeout": 5}]}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "stop"}]}], "Nope": []}})
    )
    (project / ".claude" / "settings.local.json").write_text("{not json")
    toml_hooks = {
        "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "prompt", "prompt": "x"}]}]}
    }

    untrusted = load_hook_config(
        project, global_settings=toml_hooks, project_settings={}, trusted=False, home=home
    )
    assert [(h.event, h.command, h.source) for h in untrusted.hooks] == [
        ("PreToolUse", "guard", "~/.claude/settings.json")
    ]
    assert any("type 'prompt' is not supported" in w for w in untrusted.warnings)

    trusted = load_hook_config(project, global_settings={}, project_settings={}, trusted=True, home=home)
    assert [h.command for h in trusted.hooks] == ["guard", "stop"]
    assert trusted.hooks[1].timeout == 60
    assert any("'Nope' is not supported" in w for w in trusted.warnings)
    assert any("settings.local.json: not valid JSON" in w for w in trusted.warnings)
    assert trusted.for_event("PreToolUse", "Bash") and not trusted.for_event("PreToolUse", "Read")

    off = load_hook_config(
        project, global_settings={"disable_all_hooks": True}, project_settings={}, trusted=True, home=home
    )
    assert off.hooks == [] and off.disabled_by == "settings.toml"


def test_trust_dialog_lists_claude_hooks(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": []}}))
    assert project_resources(tmp_path) == []
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    (tmp_path / ".claude" / "settings.local.json").write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    assert project_resources(tmp_path) == [".claude/settings.local.json: hooks PreToolUse (runs ./guard.sh)"]


def _hook(command: str, timeout: float = 10) -> HookCommand:
    return HookCommand(event="PreToolUse", matcher="", command=command, timeout=timeout, source="test")


def test_output_is_bounded_and_stdin_is_the_payload(tmp_path: Path) -> None:
    async def go() -> None:
        run = await run_hook(
            _hook("cat; head -c 3000000 /dev/zero | tr '\\0' x"), b'{"a": 1}', cwd=str(tmp_path), env={}
        )
        assert run.exit_code == 0 and len(run.stdout) == MAX_OUTPUT and run.stdout.startswith('{"a": 1}xxx')
        ignored = await run_hook(_hook("exit 0"), b"x" * 3_000_000, cwd=str(tmp_path), env={})
        assert ignored.exit_code == 0  # a hook that does not read stdin does not hang pi

    asyncio.run(go())


def test_abort_kills_the_hook(tmp_path: Path) -> None:
    from pi_coder.ai.abort import AbortController

    async def go() -> None:
        controller = AbortController()
        task = asyncio.ensure_future(
            run_hook(_hook("sleep 300"), b"{}", cwd=str(tmp_path), env={}, abort=controller.signal)
        )
        await asyncio.sleep(0.2)
        controller.abort()
        run = await asyncio.wait_for(task, 30)
        assert run.aborted and not run.timed_out and run.exit_code is None and run.problem() is None

    asyncio.run(go())


def test_hooks_of_one_event_run_in_parallel(tmp_path: Path) -> None:
    from pi_coder.hooks.process import run_hooks

    flag = tmp_path / "b-ran"
    waits = _hook(f"for i in $(seq 300); do [ -e {flag} ] && exit 0; sleep 0.1; done; exit 1", timeout=60)
    touches = _hook(f"touch {flag}")
    runs = asyncio.run(
        run_hooks([waits, touches], {"x": 1}, cwd=str(tmp_path), env={"PATH": "/usr/bin:/bin"})
    )
    assert [r.exit_code for r in runs] == [0, 0]  # the first waited for the second: they overlapped


def test_an_abort_while_the_hook_starts_kills_it(tmp_path: Path) -> None:
    """Ctrl+C lands after the hook's process started but before run_hook has it: the hook is
    killed at once, not left to run until its timeout."""
    from pi_coder.ai.abort import AbortController

    pids = tmp_path / "pids"
    hook = _hook(f"sleep 300 & echo $! >> {pids}; echo $$ >> {pids}; wait", timeout=60)

    async def go() -> HookRun:
        controller = AbortController()
        run = run_hook(hook, b"{}", cwd=str(tmp_path), env={}, abort=controller.signal)
        task = await while_it_starts(run, pids, lambda _task: controller.abort())
        done, _ = await asyncio.wait({task}, timeout=30)
        assert task in done, "the aborted hook was left running"
        return task.result()

    try:
        run = asyncio.run(go())
    finally:
        kill_recorded(pids)
    assert run.aborted and not run.timed_out and run.exit_code is None


def test_a_cancel_while_the_hook_starts_kills_its_group(tmp_path: Path) -> None:
    """The print mode's Ctrl+C also cancels the extension handlers (one of them runs the hook):
    cancelled while the hook starts, run_hook kills the hook's whole group and returns at once.
    (asyncio alone kills only the shell, then waits for its pipes, which the shell's background
    child keeps open: pi hung until that child ended.)"""
    pids = tmp_path / "pids"
    hook = _hook(f"sleep 300 & echo $! >> {pids}; echo $$ >> {pids}; wait", timeout=60)

    assert_cancel_while_starting_kills_all(
        lambda: run_hook(hook, b"{}", cwd=str(tmp_path), env={}), pids, "the hook's run"
    )
