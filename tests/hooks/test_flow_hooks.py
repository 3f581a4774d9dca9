"""UserPromptSubmit, Stop, SessionStart, timeouts, trust and switches, through real ``pi`` runs."""

from __future__ import annotations

import json
import os
import time

from tests.hooks.conftest import HookHome, hook
from tests.modes.pirun import all_text
from tests.support.sse_server import Text, ToolCall, Turn


def test_user_prompt_submit_plain_stdout_is_added_as_context(pi: HookHome) -> None:
    pi.script(
        "context.sh",
        """
        #!/bin/bash
        cat > /dev/null
        echo "Current sprint: ship the hooks feature"
    """,
    )
    pi.claude_settings({"UserPromptSubmit": hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/context.sh')})
    pi.server.enqueue(Turn([Text("Noted.")]))
    run = pi.run("-p", "-a", "what are we doing?")
    assert run.returncode == 0, run.stderr
    text = all_text(pi.server.requests[0].json)
    assert "what are we doing?" in text and "Current sprint: ship the hooks feature" in text


def test_user_prompt_submit_additional_context_json(pi: HookHome) -> None:
    pi.script(
        "ctx.py",
        """
        import json, sys
        prompt = json.load(sys.stdin)["prompt"]
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
              "additionalContext": f"The prompt had {len(prompt.split())} words"}}))
    """,
    )
    pi.claude_settings({"UserPromptSubmit": hook('python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/ctx.py"')})
    pi.server.enqueue(Turn([Text("Noted.")]))
    run = pi.run("-p", "-a", "three words here")
    assert run.returncode == 0, run.stderr
    assert "The prompt had 3 words" in all_text(pi.server.requests[0].json)


def test_user_prompt_submit_exit_2_blocks_the_prompt(pi: HookHome) -> None:
    pi.script(
        "secrets.sh",
        """
        #!/bin/bash
        if grep -q 'password'; then
          echo "Prompt mentions a password; rephrase it" >&2
          exit 2
        fi
    """,
    )
    pi.claude_settings({"UserPromptSubmit": hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/secrets.sh')})
    run = pi.run("-p", "-a", "my password is hunter2")
    assert not pi.server.requests, "the blocked prompt reached the model"
    assert "Prompt mentions a password; rephrase it" in run.stderr
    assert "hunter2" not in run.stdout


STOP_ONCE = """
    import json, sys
    data = json.load(sys.stdin)
    if not data["stop_hook_active"]:
        print(json.dumps({"decision": "block", "reason": "Run the tests before you stop."}))
"""


def test_stop_hook_makes_the_agent_continue_once(pi: HookHome) -> None:
    pi.script("stop.py", STOP_ONCE)
    pi.claude_settings({"Stop": hook('python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/stop.py"')})
    pi.server.enqueue(Turn([Text("All done.")]), Turn([Text("Tests pass.")]))
    run = pi.run("-p", "-a", "finish")
    assert run.returncode == 0, run.stderr
    assert len(pi.server.requests) == 2
    assert "Run the tests before you stop." in all_text(pi.server.requests[1].json)
    assert "Tests pass." in run.stdout


def test_stop_hook_exit_2_continues_with_stderr(pi: HookHome) -> None:
    marker = pi.project / "stopped-once"
    pi.script(
        "stop.sh",
        f"""
        #!/bin/bash
        cat > /dev/null
        if [ ! -e {marker} ]; then
          touch {marker}
          echo "Also update the changelog." >&2
          exit 2
        fi
    """,
    )
    pi.claude_settings({"Stop": hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/stop.sh')})
    pi.server.enqueue(Turn([Text("Done.")]), Turn([Text("Changelog updated.")]))
    run = pi.run("-p", "-a", "finish")
    assert run.returncode == 0, run.stderr
    assert len(pi.server.requests) == 2
    assert "Also update the changelog." in all_text(pi.server.requests[1].json)


def test_session_start_context_reaches_the_first_prompt(pi: HookHome) -> None:
    pi.script(
        "start.sh",
        """
        #!/bin/bash
        source=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["source"])')
        echo "Session source: $source"
    """,
    )
    pi.claude_settings({"SessionStart": hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/start.sh', "startup")})
    pi.server.enqueue(Turn([Text("Hi.")]))
    run = pi.run("-p", "-a", "hello")
    assert run.returncode == 0, run.stderr
    assert "Session source: startup" in all_text(pi.server.requests[0].json)


def test_session_end_runs_at_exit(pi: HookHome) -> None:
    out = pi.project / "ended.json"
    pi.claude_settings({"SessionEnd": hook(f"cat > {out}")})
    pi.server.enqueue(Turn([Text("Hi.")]))
    run = pi.run("-p", "-a", "hello")
    assert run.returncode == 0, run.stderr
    data = json.loads(out.read_text())
    assert data["hook_event_name"] == "SessionEnd" and data["reason"] == "other"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead too
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_hook_timeout_kills_its_process_group_and_the_call_goes_on(pi: HookHome) -> None:
    pids = pi.project / "pids"
    pi.script(
        "slow.sh",
        f"""
        #!/bin/bash
        sleep 300 &
        echo $! >> {pids}
        echo $$ >> {pids}
        sleep 300
    """,
    )
    pi.claude_settings({"PreToolUse": hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/slow.sh', "Bash", timeout=3)})
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "echo ran > ran.txt"}, id="c1")]), Turn([Text("Done.")])
    )
    started = time.monotonic()
    run = pi.run("-p", "-a", "go", timeout=120)
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - started < 100
    assert "timed out after 3 s" in run.stderr
    assert (pi.project / "ran.txt").read_text() == "ran\n"
    recorded = [int(p) for p in pids.read_text().split()]
    assert len(recorded) == 2 and not any(_alive(p) for p in recorded)


def test_untrusted_project_hooks_do_not_run(pi: HookHome) -> None:
    marker = pi.project / "hook-ran"
    pi.claude_settings({"UserPromptSubmit": hook(f"touch {marker}")})
    pi.server.enqueue(Turn([Text("Hi.")]))
    run = pi.run("-p", "hello")
    assert run.returncode == 0, run.stderr
    assert not marker.exists()
    assert "not trusted" in run.stderr
    pi.server.enqueue(Turn([Text("Hi.")]))
    run = pi.run("-p", "-a", "hello")
    assert marker.exists(), run.stderr


def test_no_hooks_flag_and_setting_turn_hooks_off(pi: HookHome) -> None:
    marker = pi.project / "hook-ran"
    pi.claude_settings({"UserPromptSubmit": hook(f"touch {marker}")}, where="user")
    pi.server.enqueue(Turn([Text("Hi.")]))
    assert pi.run("-p", "--no-hooks", "hello").returncode == 0
    assert not marker.exists()
    (pi.home / "settings.toml").write_text("disable_all_hooks = true\n")
    pi.server.enqueue(Turn([Text("Hi.")]))
    assert pi.run("-p", "hello").returncode == 0
    assert not marker.exists()


def test_settings_toml_hooks_and_slash_hooks_listing(pi: HookHome) -> None:
    (pi.home / "settings.toml").write_text(
        '[[hooks.PreToolUse]]\nmatcher = "Bash"\nhooks = [{ type = "command", command = "true", timeout = 5 }]\n'
    )
    pi.claude_settings({"Stop": hook("exit 0")}, where="user")
    pi.claude_settings({"PostToolUse": hook("echo local", "Write")}, name="settings.local.json")
    run = pi.run("-p", "-a", "/hooks")
    assert run.returncode == 0, run.stderr
    assert "[Bash] true  (timeout 5 s, settings.toml)" in run.stderr
    assert "exit 0  (timeout 60 s, ~/.claude/settings.json)" in run.stderr
    assert "[Write] echo local  (timeout 60 s, .claude/settings.local.json)" in run.stderr
    assert not pi.server.requests


def test_invalid_claude_settings_give_one_warning_line(pi: HookHome) -> None:
    (pi.user_home / ".claude").mkdir()
    (pi.user_home / ".claude" / "settings.json").write_text('{"hooks": {"PreToolUse": [')
    pi.server.enqueue(Turn([Text("Hi.")]))
    run = pi.run("-p", "hello")
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if "settings.json" in line]
    assert len(lines) == 1 and "not valid JSON (line 1)" in lines[0], run.stderr
    assert "Traceback" not in run.stderr


def test_session_start_source_is_resume_for_a_continued_session(pi: HookHome) -> None:
    sources = pi.project / "sources"
    pi.claude_settings(
        {
            "SessionStart": hook(
                f"python3 -c 'import json,sys; print(json.load(sys.stdin)[\"source\"])' >> {sources}"
            )
        },
        where="user",
    )
    pi.server.enqueue(Turn([Text("Hi.")]), Turn([Text("Again.")]))
    assert pi.run("-p", "hello").returncode == 0
    assert pi.run("-p", "-c", "more").returncode == 0
    assert sources.read_text().split() == ["startup", "resume"]


def test_ctrl_c_during_a_hook_kills_it(pi: HookHome) -> None:
    import signal
    import subprocess

    from tests.modes.pirun import PI

    pids = pi.project / "pids"
    pi.script(
        "hang.sh",
        f"""
        #!/bin/bash
        sleep 300 &
        echo $! >> {pids}
        echo $$ >> {pids}
        wait
    """,
    )
    pi.claude_settings({"PreToolUse": hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/hang.sh', "Bash")})
    pi.server.enqueue(Turn([ToolCall("bash", {"command": "touch made.txt"}, id="c1")]), Turn([Text("Done.")]))
    proc = subprocess.Popen(
        [*PI, "-p", "-a", "go"],
        cwd=pi.project,
        env=pi.env(HOME=str(pi.user_home)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while (not pids.exists() or len(pids.read_text().split()) < 2) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pids.exists(), "the hook never started"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    recorded = [int(p) for p in pids.read_text().split()]
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in recorded) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in recorded)
    assert not (pi.project / "made.txt").exists()
