"""``permissionDecision: "ask"``: pi's permission dialog (RPC), refused without a UI; Notification hooks."""

from __future__ import annotations

import json
from typing import Any

from tests.hooks.conftest import HookHome, hook
from tests.modes.pirun import RpcClient, all_text
from tests.support.sse_server import Text, ToolCall, Turn

ASK = """
    import json, sys
    json.load(sys.stdin)
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
          "permissionDecision": "ask", "permissionDecisionReason": "touches the deploy folder"}}))
"""


def _script(pi: HookHome) -> None:
    pi.script("ask.py", ASK)
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "touch deployed.txt"}, id="c1")]),
        Turn([Text("Done.")]),
    )


def test_ask_without_ui_is_refused_like_the_permission_layer(pi: HookHome) -> None:
    _script(pi)
    pi.claude_settings({"PreToolUse": hook('python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/ask.py"', "Bash")})
    run = pi.run("-p", "-a", "deploy")
    assert run.returncode == 0, run.stderr
    assert not (pi.project / "deployed.txt").exists()
    assert "refused Bash: touch deployed.txt: a hook asks for approval" in run.stderr
    assert "no one could approve it" in all_text(pi.server.requests[1].json)


def _answer_select(rpc: RpcClient, choice: str) -> dict[str, Any]:
    request = rpc.wait_for(
        lambda line: line.get("type") == "extension_ui_request" and line.get("method") == "select"
    )
    rpc.send_raw(
        json.dumps({"type": "extension_ui_response", "id": request["id"], "value": choice}).encode() + b"\n"
    )
    return request


def test_ask_opens_the_permission_dialog_and_notification_hooks_run(pi: HookHome) -> None:
    _script(pi)
    seen = pi.project / "notifications.jsonl"
    pi.claude_settings(
        {
            "PreToolUse": hook('python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/ask.py"', "Bash"),
            "Notification": hook(f"cat >> {seen}; echo >> {seen}"),
        }
    )
    rpc = RpcClient(pi, "-a", env=pi.env(HOME=str(pi.user_home)))
    try:
        rpc.send({"type": "prompt", "message": "deploy"})
        request = _answer_select(rpc, "Allow once")
        assert (
            "Bash: touch deployed.txt" in request["title"] and "touches the deploy folder" in request["title"]
        )
        rpc.event("agent_settled", timeout=30)
    finally:
        rpc.close()
    assert (pi.project / "deployed.txt").exists()
    kinds = [json.loads(line)["notification_type"] for line in seen.read_text().splitlines() if line.strip()]
    assert kinds[0] == "permission_prompt" and "idle_prompt" in kinds
