"""Every example extension in ``examples/extensions/`` loads and does what it says, in print or
RPC mode against the scripted server (UI-only parts: tests/tui/test_extension_api_tui.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import PiHome, RpcClient, all_text, user_texts
from tests.support.sse_server import Text, ToolCall, Turn

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"


def _ext(name: str) -> str:
    return str(EXAMPLES / f"{name}.py")


def _entries(pi: PiHome) -> list[dict[str, Any]]:
    return [json.loads(line) for line in pi.session_files()[-1].read_text().splitlines()]


def _ui(client: RpcClient, method: str, match: Callable[[dict[str, Any]], bool] = lambda line: True) -> dict[str, Any]:
    for line in client.seen:
        if line.get("type") == "extension_ui_request" and line.get("method") == method and match(line):
            return line
    return client.wait_for(lambda line: line.get("type") == "extension_ui_request" and line.get("method") == method and match(line))


def _tool_texts(request_json: dict[str, Any]) -> str:
    return all_text(request_json)


# ---------------------------------------------------------------------------- print mode


def hello(pi: PiHome) -> None:
    pi.server.enqueue(Turn([ToolCall("hello", {"name": "Ada"})]), Turn([Text("done")]))
    run = pi.run("-e", _ext("hello"), "-p", "greet Ada")
    assert run.returncode == 0, run.stderr
    assert "Hello, Ada!" in _tool_texts(pi.server.requests[1].json)


def input_transform(pi: PiHome) -> None:
    run = pi.run("-e", _ext("input_transform"), "-p", "ping")
    assert "pong" in run.stderr and not pi.server.requests
    pi.server.enqueue(Turn([Text("short")]))
    run = pi.run("-e", _ext("input_transform"), "-p", "?quick What is Python?")
    assert run.returncode == 0, run.stderr
    assert user_texts(pi.server.requests[0].json) == ["Respond briefly in 1-2 sentences: What is Python?"]


def pirate(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("Arrr")]))
    run = pi.run("-e", _ext("pirate"), "-p", "/pirate", "hello")
    assert run.returncode == 0, run.stderr
    assert "Pirate mode enabled" in run.stderr
    assert "PIRATE MODE" in json.dumps(pi.server.requests[0].json)


def commands(pi: PiHome) -> None:
    prompts = pi.project / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "fix.md").write_text("---\ndescription: Fix it\n---\nFix $1\n")
    run = pi.run("-a", "-e", _ext("commands"), "-p", "/commands")
    assert run.returncode == 0, run.stderr
    assert "--- Extensions ---" in run.stderr and "/commands - List available slash commands" in run.stderr
    assert "--- Prompts ---" in run.stderr and "/fix - Fix it" in run.stderr


def permission_gate(pi: PiHome) -> None:
    (pi.project / "keep").mkdir()
    pi.server.enqueue(Turn([ToolCall("bash", {"command": "rm -rf keep"})]), Turn([Text("ok")]))
    run = pi.run("-e", _ext("permission_gate"), "-p", "clean up")
    assert run.returncode == 0, run.stderr
    assert (pi.project / "keep").is_dir()
    assert "Dangerous command blocked" in _tool_texts(pi.server.requests[1].json)


def protected_paths(pi: PiHome) -> None:
    pi.server.enqueue(Turn([ToolCall("write", {"path": ".env", "content": "X=1"})]), Turn([Text("ok")]))
    run = pi.run("-e", _ext("protected_paths"), "-p", "write env")
    assert run.returncode == 0, run.stderr
    assert not (pi.project / ".env").exists()
    assert 'Path \\".env\\" is protected' in _tool_texts(pi.server.requests[1].json)


def tool_override(pi: PiHome) -> None:
    (pi.project / ".env").write_text("SECRET=1")
    (pi.project / "notes.txt").write_text("plain notes")
    pi.server.enqueue(
        Turn([ToolCall("read", {"path": ".env"}, id="a"), ToolCall("read", {"path": "notes.txt"}, id="b")]),
        Turn([Text("ok")]),
    )
    run = pi.run("-e", _ext("tool_override"), "-p", "read both")
    assert run.returncode == 0, run.stderr
    seen = _tool_texts(pi.server.requests[1].json)
    assert "Access denied" in seen and "SECRET=1" not in seen and "plain notes" in seen
    log = (pi.home / "read-access.log").read_text()
    assert "BLOCKED" in log and "ALLOWED" in log


def dynamic_tools(pi: PiHome) -> None:
    pi.server.enqueue(Turn([ToolCall("shout", {"message": "hey"})]), Turn([Text("ok")]))
    run = pi.run("-e", _ext("dynamic_tools"), "-p", "/add-echo-tool shout", "use it")
    assert run.returncode == 0, run.stderr
    names = [t["name"] for t in pi.server.requests[0].json["tools"]]
    assert "echo_session" in names and "shout" in names
    assert "[shout] hey" in _tool_texts(pi.server.requests[1].json)


def send_user_message(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("answered")]))
    run = pi.run("-e", _ext("send_user_message"), "-p", "/ask what is up")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "answered"
    assert user_texts(pi.server.requests[0].json) == ["what is up"]


def custom_provider(pi: PiHome) -> None:
    run = pi.run("-e", _ext("custom_provider"), "--model", "echo/echo-1", "-p", "round trip")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "echo: round trip"
    assert not pi.server.requests


def session_name(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("ok")]))  # a session file is written once the model answered
    run = pi.run("-e", _ext("session_name"), "-p", "/session-name Refactor", "go")
    assert run.returncode == 0, run.stderr
    assert "Session named: Refactor" in run.stderr
    assert any(e.get("name") == "Refactor" for e in _entries(pi))


def entry_renderer(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", _ext("entry_renderer"), "-p", "/status-card deployed", "go")
    assert run.returncode == 0, run.stderr
    cards = [e for e in _entries(pi) if e.get("customType") == "status-card"]
    assert "deployed" not in all_text(pi.server.requests[0].json)  # never in the model's context
    assert cards and cards[0]["type"] == "custom" and cards[0]["data"]["message"] == "deployed"


def message_renderer(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("noted")]))
    run = pi.run("-e", _ext("message_renderer"), "-p", "/report build is green", "status?")
    assert run.returncode == 0, run.stderr
    assert "build is green" in all_text(pi.server.requests[0].json)
    assert any(e["type"] == "custom_message" and e["customType"] == "report" for e in _entries(pi))


# ---------------------------------------------------------------------------- RPC mode


def status_line(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("hi")]))
    client = RpcClient(pi, "-e", _ext("status_line"))
    try:
        client.call({"type": "prompt", "message": "hello"})
        done = _ui(client, "setStatus", lambda line: "complete" in (line.get("statusText") or ""))
        assert done["statusKey"] == "status-demo" and "Turn 1 complete" in done["statusText"]
    finally:
        client.close()


def widget_placement(pi: PiHome) -> None:
    client = RpcClient(pi, "-e", _ext("widget_placement"))
    try:
        below = _ui(client, "setWidget", lambda line: line["widgetKey"] == "widget-below")
        above = _ui(client, "setWidget", lambda line: line["widgetKey"] == "widget-above")
        assert below["widgetPlacement"] == "belowEditor" and below["widgetLines"] == ["Below editor widget"]
        assert above["widgetPlacement"] == "aboveEditor"
    finally:
        client.close()


def model_status(pi: PiHome) -> None:
    client = RpcClient(pi, "-e", _ext("model_status"))
    try:
        assert client.call({"type": "set_model", "provider": "local", "modelId": "test-model"})["success"]
        status = _ui(client, "setStatus", lambda line: line["statusKey"] == "model")
        assert "test-model" in status["statusText"]
    finally:
        client.close()


def bookmark(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("an answer")]))
    client = RpcClient(pi, "-e", _ext("bookmark"))
    try:
        client.call({"type": "prompt", "message": "question"})
        client.event("agent_settled")
        client.call({"type": "prompt", "message": "/bookmark important"})
        _ui(client, "notify", lambda line: "Bookmarked as: important" in line["message"])
    finally:
        client.close()
    entries = _entries(pi)
    (label,) = [e for e in entries if e["type"] == "label"]
    target = next(e for e in entries if e["id"] == label["targetId"])
    assert label["label"] == "important" and target["message"]["role"] == "assistant"


def confirm_destructive(pi: PiHome) -> None:
    client = RpcClient(pi, "-e", _ext("confirm_destructive"))
    try:
        request = client.send({"type": "new_session"})
        ask = _ui(client, "confirm")
        assert ask["title"] == "Clear session?"
        client.send({"type": "extension_ui_response", "id": ask["id"], "confirmed": False})
        response = client.response(request)
        assert response["data"]["cancelled"] is True
    finally:
        client.close()


def tools(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("ok")]))
    client = RpcClient(pi, "-e", _ext("tools"))
    try:
        client.send({"type": "prompt", "message": "/tools"})
        first = _ui(client, "select")
        assert "[ ] grep" in first["options"] and "[x] read" in first["options"]
        client.send({"type": "extension_ui_response", "id": first["id"], "value": "[ ] grep"})
        second = _ui(client, "select", lambda line: line["id"] != first["id"])
        assert "[x] grep" in second["options"]
        client.send({"type": "extension_ui_response", "id": second["id"], "cancelled": True})
        client.call({"type": "prompt", "message": "hi"})
        client.event("agent_settled")
    finally:
        client.close()
    assert "grep" in [t["name"] for t in pi.server.requests[0].json["tools"]]
    assert any(e.get("customType") == "tools-config" for e in _entries(pi))


def question(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn([ToolCall("question", {"question": "Which colour?", "options": ["red", "blue"]})]), Turn([Text("ok")])
    )
    client = RpcClient(pi, "-e", _ext("question"))
    try:
        client.call({"type": "prompt", "message": "ask me"})
        ask = _ui(client, "select")
        assert ask["title"] == "Which colour?" and ask["options"] == ["red", "blue"]
        client.send({"type": "extension_ui_response", "id": ask["id"], "value": "blue"})
        client.event("agent_settled")
    finally:
        client.close()
    assert "User answered: blue" in _tool_texts(pi.server.requests[1].json)


def custom_compaction(pi: PiHome) -> None:
    (pi.home / "settings.toml").write_text("[compaction]\nkeep_recent_tokens = 1\n")
    pi.server.enqueue(Turn([Text("one")]), Turn([Text("two")]), Turn([Text("THE SUMMARY")]))
    client = RpcClient(pi, "-e", _ext("custom_compaction"))
    try:
        for text in ("first task", "second task"):
            client.call({"type": "prompt", "message": text})
            client.event("agent_settled")
        assert client.call({"type": "compact"}, timeout=60)["success"]
    finally:
        client.close()
    assert "conversation summarizer" in all_text(pi.server.requests[2].json)
    (compaction,) = [e for e in _entries(pi) if e["type"] == "compaction"]
    assert compaction["summary"] == "THE SUMMARY" and compaction["fromHook"] is True
    assert "usage" in compaction


def custom_footer(pi: PiHome) -> None:
    # The footer lines are TUI-only (tests/tui/test_extension_api_tui.py); here: it loads and its
    # handlers run quietly in RPC mode, where set_footer does nothing.
    pi.server.enqueue(Turn([Text("hi")]))
    client = RpcClient(pi, "-e", _ext("custom_footer"))
    try:
        client.call({"type": "prompt", "message": "hello"})
        client.event("agent_settled")
        client.call({"type": "prompt", "message": "/footer-off"})
    finally:
        client.close()
    assert not [line for line in client.seen if line.get("type") == "extension_error"]


SCENARIOS: dict[str, Callable[[PiHome], None]] = {
    fn.__name__: fn
    for fn in (
        hello,
        input_transform,
        pirate,
        commands,
        permission_gate,
        protected_paths,
        tool_override,
        dynamic_tools,
        send_user_message,
        custom_provider,
        session_name,
        entry_renderer,
        message_renderer,
        status_line,
        widget_placement,
        model_status,
        bookmark,
        confirm_destructive,
        tools,
        question,
        custom_compaction,
        custom_footer,
    )
}


def test_every_example_has_a_scenario() -> None:
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_example(pi: PiHome, name: str) -> None:
    SCENARIOS[name](pi)
