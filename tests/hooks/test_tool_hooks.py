"""PreToolUse and PostToolUse hooks in Claude Code's shapes, through real ``pi -p`` runs."""

from __future__ import annotations

import json

from tests.hooks.conftest import HookHome, hook
from tests.modes.pirun import all_text
from tests.support.sse_server import Text, ToolCall, Turn

GUARD = """
    #!/bin/bash
    # PreToolUse guard: refuse rm -rf (exit 2, stderr goes to the model)
    input=$(cat)
    command=$(printf '%s' "$input" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["command"])')
    if printf '%s' "$command" | grep -q 'rm -rf'; then
      echo "Blocked: rm -rf is not allowed in this project" >&2
      exit 2
    fi
    exit 0
"""


def test_bash_guard_exit_2_blocks_and_the_model_gets_stderr(pi: HookHome) -> None:
    pi.script("guard.sh", GUARD)
    pi.claude_settings({"PreToolUse": hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh', "Bash")})
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "touch made.txt && rm -rf build"}, id="c1")]),
        Turn([ToolCall("bash", {"command": "touch fine.txt"}, id="c2")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "-a", "clean up")
    assert run.returncode == 0, run.stderr
    assert not (pi.project / "made.txt").exists()
    assert (pi.project / "fine.txt").exists()
    assert "Blocked: rm -rf is not allowed in this project" in all_text(pi.server.requests[1].json)


DENY_ENV = """
    import json
    import sys

    data = json.load(sys.stdin)
    path = data["tool_input"].get("file_path", "")
    if path.endswith(".env"):
        print(json.dumps({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "Writing .env files is not allowed",
            }
        }))
    sys.exit(0)
"""


def test_json_deny_refuses_the_write_with_its_reason(pi: HookHome) -> None:
    pi.script("deny_env.py", DENY_ENV)
    pi.claude_settings(
        {"PreToolUse": hook('python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/deny_env.py"', "Write|Edit")}
    )
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "prod.env", "content": "KEY=1\n"}, id="c1")]),
        Turn([ToolCall("write", {"path": "notes.txt", "content": "ok\n"}, id="c2")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "-a", "write them")
    assert run.returncode == 0, run.stderr
    assert not (pi.project / "prod.env").exists()
    assert (pi.project / "notes.txt").read_text() == "ok\n"
    assert "Writing .env files is not allowed" in all_text(pi.server.requests[1].json)


REWRITE = """
    import json
    import sys

    data = json.load(sys.stdin)
    command = data["tool_input"]["command"]
    if command.startswith("echo draft"):
        print(json.dumps({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": command.replace("draft", "final")},
            }
        }))
"""


def test_updated_input_rewrites_the_command(pi: HookHome) -> None:
    pi.script("rewrite.py", REWRITE)
    pi.claude_settings({"PreToolUse": hook('python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/rewrite.py"', "Bash")})
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "echo draft > out.txt", "timeout": 30}, id="c1")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "-a", "write it")
    assert run.returncode == 0, run.stderr
    assert (pi.project / "out.txt").read_text() == "final\n"


def test_updated_input_maps_file_path_and_edit_strings_back(pi: HookHome) -> None:
    (pi.project / "a.txt").write_text("hello world\n")
    pi.script(
        "edit.py",
        """
        import json, sys
        data = json.load(sys.stdin)
        ti = data["tool_input"]
        assert data["tool_name"] == "Edit" and ti["file_path"].endswith("/a.txt"), data
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
              "updatedInput": {"new_string": ti["new_string"].upper()}}}))
        """,
    )
    pi.claude_settings({"PreToolUse": hook('python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/edit.py"', "Edit")})
    pi.server.enqueue(
        Turn(
            [
                ToolCall(
                    "edit", {"path": "a.txt", "edits": [{"oldText": "world", "newText": "there"}]}, id="c1"
                )
            ]
        ),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "-a", "edit it")
    assert run.returncode == 0, run.stderr
    assert (pi.project / "a.txt").read_text() == "hello THERE\n"


FORMATTER = """
    #!/bin/bash
    # PostToolUse formatter: strip trailing spaces from the file just written
    file=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["file_path"])')
    sed -i 's/[[:space:]]*$//' "$file"
"""


def test_post_tool_use_formatter_edits_the_file(pi: HookHome) -> None:
    pi.script("format.sh", FORMATTER)
    pi.claude_settings(
        {"PostToolUse": hook('"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh', "Write|Edit|MultiEdit")}
    )
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "src.py", "content": "x = 1   \ny = 2 \n"}, id="c1")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "-a", "write it")
    assert run.returncode == 0, run.stderr
    assert (pi.project / "src.py").read_text() == "x = 1\ny = 2\n"


def test_post_tool_use_block_reason_reaches_the_model(pi: HookHome) -> None:
    pi.script(
        "lint.py",
        """
        import json, sys
        json.load(sys.stdin)
        print(json.dumps({"decision": "block", "reason": "lint: line too long in src.py"}))
        """,
    )
    pi.claude_settings({"PostToolUse": hook('python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/lint.py"', "Write")})
    pi.server.enqueue(
        Turn([ToolCall("write", {"path": "src.py", "content": "x = 1\n"}, id="c1")]),
        Turn([Text("Done.")]),
    )
    run = pi.run("-p", "-a", "write it")
    assert run.returncode == 0, run.stderr
    assert "lint: line too long in src.py" in all_text(pi.server.requests[1].json)


def test_hook_gets_claude_code_stdin_and_environment_without_keys(pi: HookHome) -> None:
    record = pi.project / "seen.json"
    pi.script(
        "record.py",
        f"""
        import json, os, sys
        data = json.load(sys.stdin)
        data["env"] = {{k: v for k, v in os.environ.items()}}
        open({str(record)!r}, "w").write(json.dumps(data))
        """,
    )
    (pi.user_home / ".claude").mkdir()
    (pi.user_home / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": hook(f'python3 "{pi.project}/.claude/hooks/record.py"', "mcp__x__*|Read")
                }
            }
        )
    )
    (pi.project / "a.txt").write_text("hi\n")
    pi.server.enqueue(Turn([ToolCall("read", {"path": "a.txt"}, id="c1")]), Turn([Text("Done.")]))
    run = pi.run(
        "-p",
        "--model",
        "local/test-model",
        "read it",
        ANTHROPIC_API_KEY="sk-secret-value",
        GITHUB_TOKEN="gh-secret",
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(record.read_text())
    assert data["hook_event_name"] == "PreToolUse" and data["tool_name"] == "Read"
    assert data["tool_input"] == {"file_path": str(pi.project / "a.txt")}
    assert data["tool_use_id"] == "c1" and data["cwd"] == str(pi.project)
    assert data["session_id"] and data["transcript_path"].endswith(".jsonl")
    assert data["permission_mode"] == "bypassPermissions"
    env = data["env"]
    assert env["CLAUDE_PROJECT_DIR"] == env["PI_PROJECT_DIR"] == str(pi.project)
    assert "sk-secret-value" not in json.dumps(env) and "gh-secret" not in json.dumps(env)


def test_continue_false_stops_the_run_and_tells_the_user(pi: HookHome) -> None:
    pi.script(
        "halt.py",
        """
        import json, sys
        json.load(sys.stdin)
        print(json.dumps({"continue": False, "stopReason": "Build is broken: stopping the agent"}))
        """,
    )
    pi.claude_settings({"PreToolUse": hook('python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/halt.py"')})
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "touch made.txt"}, id="c1")]), Turn([Text("Never sent.")])
    )
    run = pi.run("-p", "-a", "go")
    assert run.returncode == 0, run.stderr
    assert not (pi.project / "made.txt").exists()
    assert len(pi.server.requests) == 1
    assert "Build is broken: stopping the agent" in run.stderr
