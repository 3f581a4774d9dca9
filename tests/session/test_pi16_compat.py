"""Session files written by Pi 1.6 (captured in ``golden/pi16``, see its README) load here, keep
every field, and give the same conversation: the request pi_coder sends to continue one equals
the request Pi sent for the same file and prompt (system prompt and tool texts aside: each
program declares its own)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_coder.ai.types import SystemMessage
from pi_coder.session.codec import loads
from pi_coder.session.entries import MessageEntry, UnknownEntry
from pi_coder.session.store import SessionStore
from tests.modes.pirun import PI, clean_env
from tests.support.sse_server import SSEServer, Text, Turn

GOLDEN = Path(__file__).parent / "golden" / "pi16"
SESSIONS = ["pi_anthropic", "pi_openai", "pi_anthropic_nocompact", "pi_retry", "coder_then_pi"]
NEXT_PROMPT = {"coder_then_pi": "after the other tool"}
WIRE = {"pi_openai": "openai"}


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (GOLDEN / f"{name}.jsonl").read_text().splitlines()]


def _open(tmp_path: Path, name: str) -> SessionStore:
    path = tmp_path / f"{name}.jsonl"
    shutil.copy(GOLDEN / f"{name}.jsonl", path)
    return SessionStore.open(path)


@pytest.mark.parametrize("name", SESSIONS)
def test_pi16_file_loads_and_every_field_survives(tmp_path: Path, name: str) -> None:
    lines = _lines(name)
    assert lines[0]["version"] == 3
    store = _open(tmp_path, name)
    assert store.header.to_json_dict() == lines[0]
    entries = store.get_entries()
    assert len(entries) == len(lines) - 1
    for entry, line in zip(entries, lines[1:], strict=True):
        if isinstance(entry, MessageEntry):
            entry.message  # noqa: B018 - parse it, so the dict below is rebuilt from the model
        assert loads(json.dumps(entry.to_json_dict())) == line, entry.id
    # Pi 1.6 extras that this port has no type for are kept as they are.
    kinds = {line["type"] for line in lines}
    assert "message" in kinds and kinds <= {
        "session", "message", "model_change", "thinking_level_change", "compaction", "session_info",
        "context_edit", "label",
    }  # fmt: skip


def test_system_messages_parse_but_stay_out_of_the_context(tmp_path: Path) -> None:
    store = _open(tmp_path, "pi_anthropic_nocompact")
    systems = [e for e in store.get_entries() if isinstance(e, MessageEntry) and e.role == "system"]
    assert len(systems) == 1
    message = systems[0].message
    assert isinstance(message, SystemMessage)  # constrainedSampling is an object in Pi 1.6
    assert message.tools_added and message.tools_added[0].constrained_sampling == {
        "type": "json_schema", "strict": "prefer",
    }  # fmt: skip
    context = store.build_session_context()
    assert [m.role for m in context.messages] == [
        "user", "assistant", "toolResult", "assistant", "bashExecution", "user", "assistant", "user", "assistant",
    ]  # fmt: skip
    assert context.model == ("local", "test-model-2") and context.thinking_level == "high"
    assert store.name == "Compat test"


def test_pi16_compaction_and_its_checkpoint(tmp_path: Path) -> None:
    store = _open(tmp_path, "pi_anthropic")
    context = store.build_session_context()
    roles = [m.role for m in context.messages]
    assert roles[0] == "compactionSummary" and "system" not in roles
    assert "SUMMARY OF EARLIER WORK" in context.messages[0].summary
    assert roles[1:] == ["assistant", "bashExecution", "user", "assistant", "user", "assistant"]


def test_context_edit_hides_the_failed_retry_and_replaces_content(tmp_path: Path) -> None:
    store = _open(tmp_path, "pi_retry")
    edit = next(e for e in store.get_entries() if isinstance(e, UnknownEntry) and e.type == "context_edit")
    assert edit.raw["replacement"] is None
    messages = store.build_session_context().messages
    assert [(m.role, getattr(m, "stop_reason", None)) for m in messages] == [("user", None), ("assistant", "stop")]

    # A replacement swaps the content (a string becomes one text block for assistants); the
    # latest edit on the path wins, and an edit on another branch does not apply.
    lines = _lines("pi_retry")
    user_id = next(line["id"] for line in lines if line.get("message", {}).get("role") == "user")
    answer_id = lines[-1]["id"]
    extra = [
        {"type": "context_edit", "id": "e0000001", "parentId": answer_id, "timestamp": "2026-01-01T00:00:00.000Z",
         "targetId": user_id, "replacement": "first rewrite"},
        {"type": "context_edit", "id": "e0000002", "parentId": "e0000001", "timestamp": "2026-01-01T00:00:01.000Z",
         "targetId": user_id, "replacement": [{"type": "text", "text": "second rewrite"}]},
        {"type": "context_edit", "id": "e0000003", "parentId": "e0000002", "timestamp": "2026-01-01T00:00:02.000Z",
         "targetId": answer_id, "replacement": "short answer"},
        {"type": "context_edit", "id": "e0000004", "parentId": answer_id, "timestamp": "2026-01-01T00:00:03.000Z",
         "targetId": answer_id, "replacement": None},
    ]  # fmt: skip
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [*lines, *extra]))
    store = SessionStore.open(path)
    messages = store.build_session_context("e0000003").messages
    assert messages[0].content[0].text == "second rewrite"
    assert messages[1].role == "assistant" and messages[1].text() == "short answer"
    assert [m.role for m in store.build_session_context("e0000004").messages] == ["user"]
    # The file itself is untouched: the failed message is still there.
    assert sum(1 for line in path.read_text().splitlines() if json.loads(line).get("message", {}).get("stopReason") == "error") == 1


def test_entries_written_here_use_pi16_field_names(tmp_path: Path) -> None:
    from pi_coder.ai.types import (
        AssistantMessage,
        TextContent,
        ToolCall,
        ToolResultMessage,
        Usage,
        UserMessage,
    )
    from pi_coder.session.messages import BashExecutionMessage

    store = SessionStore.create(str(tmp_path / "project"), session_dir=tmp_path / "sessions")
    store.append_model_change("local", "test-model")
    store.append_thinking_level_change("medium")
    store.append_session_info("Compat test")
    store.append_message(UserMessage(content=[TextContent(text="read a.txt please")]))
    store.append_message(
        AssistantMessage(
            content=[ToolCall(id="toolu_01", name="read", arguments={"path": "a.txt"})],
            api="anthropic-messages", provider="local", model="test-model", usage=Usage(), stop_reason="toolUse",
        )
    )  # fmt: skip
    store.append_message(
        ToolResultMessage(tool_call_id="toolu_01", tool_name="read", content=[TextContent(text="hi")], is_error=False)
    )
    store.append_message(BashExecutionMessage(command="echo hi", output="hi", exit_code=0))
    ours = [json.loads(line) for line in Path(store.session_file).read_text().splitlines()]  # type: ignore[arg-type]
    pi = _lines("pi_anthropic")

    def keys(lines: list[dict[str, Any]], kind: str, role: str | None = None) -> tuple[set[str], set[str]]:
        line = next(x for x in lines if x["type"] == kind and (role is None or x["message"]["role"] == role))
        return set(line), set(line.get("message", {}))

    # Pi 1.6 adds optional fields of its own (durationMs, thinkingLevel, ...): ours must be a subset
    # and have every field Pi requires.
    required = {"responseId", "rawStopReason", "durationMs", "thinkingLevel", "responseModel"}
    for kind, role in [("session", None), ("model_change", None), ("thinking_level_change", None),
                       ("session_info", None), ("message", "user"), ("message", "assistant"),
                       ("message", "toolResult"), ("message", "bashExecution")]:  # fmt: skip
        our_top, our_msg = keys(ours, kind, role)
        pi_top, pi_msg = keys(pi, kind, role)
        assert our_top == pi_top, (kind, role)
        assert pi_msg - our_msg <= required and our_msg - pi_msg <= {"responseModel", "responseId", "rawStopReason"}, (
            kind, role, pi_msg ^ our_msg,
        )  # fmt: skip


# ---------------------------------------------------------------------------- requests


def _models_toml(server: SSEServer, wire: str) -> str:
    api = "anthropic-messages" if wire == "anthropic" else "openai-completions"
    base = server.anthropic_base_url if wire == "anthropic" else server.openai_base_url
    models = "".join(
        f'  {{ id = "{mid}", name = "{name}", reasoning = true, context_window = 32768, max_tokens = 4096, '
        'input = ["text", "image"] },\n'
        for mid, name in (("test-model", "Test Model"), ("test-model-2", "Test Model 2"))
    )
    return f'[providers.local]\napi = "{api}"\nbase_url = "{base}"\napi_key = "none"\nmodels = [\n{models}]\n'


def _normalise(body: dict[str, Any], wire: str) -> dict[str, Any]:
    """The request without what each program decides for itself, and Pi's cosmetic extras.

    Dropped: the system prompt text and the tool texts (the tool names are kept). Anthropic:
    Pi's explicit ``is_error: false`` on tool results. OpenAI: ``store: false``, the name of the
    max-tokens field, and Pi's text-only user content arrays (pi_coder sends the string).
    """
    body = json.loads(json.dumps(body))
    tools = body.pop("tools", [])
    body["tool_names"] = [t.get("name") or t["function"]["name"] for t in tools]
    if wire == "anthropic":
        body["system"] = [{k: v for k, v in block.items() if k != "text"} for block in body.get("system", [])]
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else ():
                if block.get("type") == "tool_result" and block.get("is_error") is False:
                    del block["is_error"]
    else:
        body.pop("store", None)
        body["max_tokens"] = body.pop("max_completion_tokens", body.get("max_tokens"))
        for message in body["messages"]:
            content = message.get("content")
            if message["role"] == "system":
                message["content"] = "<prompt>"
            elif isinstance(content, list) and all(part.get("type") == "text" for part in content):
                message["content"] = "\n".join(part["text"] for part in content)
    return body


@pytest.mark.parametrize("name", SESSIONS)
def test_continuing_a_pi16_session_sends_what_pi_sent(tmp_path: Path, sse_server: SSEServer, name: str) -> None:
    wire = WIRE.get(name, "anthropic")
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / "models.toml").write_text(_models_toml(sse_server, wire))
    session = tmp_path / f"{name}.jsonl"
    shutil.copy(GOLDEN / f"{name}.jsonl", session)
    sse_server.enqueue(Turn([Text("Next answer.")], format=wire))
    run = subprocess.run(
        # Pi 1.6 has no task tool: without ours the requests compare tool for tool.
        [*PI, "--no-subagents", "--session", str(session), "-p", NEXT_PROMPT.get(name, "next")],
        cwd=project, env=clean_env(home), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Next answer."
    assert len(sse_server.requests) == 1
    ours = sse_server.requests[0].json
    pi = json.loads((GOLDEN / f"{name}.next.json").read_text())
    assert _normalise(ours, wire) == _normalise(pi, wire)
    # The file grew by the new exchange only; Pi's lines are untouched.
    before = (GOLDEN / f"{name}.jsonl").read_text()
    after = session.read_text()
    assert after.startswith(before) and len(after.splitlines()) == len(before.splitlines()) + 2
