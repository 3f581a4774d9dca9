"""The rest of the event catalogue (extensions §2.3): provider headers and responses,
agent_settled, compaction and tree events, model and thinking selection, resources_discover;
through ``pi -p`` and RPC processes against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.extensions.conftest import write_ext
from tests.modes.pirun import PiHome, RpcClient, user_texts
from tests.support.sse_server import Text, Turn

RECORDER = """
import json
from pathlib import Path

LOG = Path({log!r})

def record(name, **fields):
    with LOG.open("a") as out:
        out.write(json.dumps({{"event": name, **fields}}) + "\\n")

def extension(pi):
    @pi.on("before_provider_headers")
    def headers(event, ctx):
        event.headers["x-extension"] = "yes"
        event.headers["x-drop-me"] = None
        record("before_provider_headers")

    @pi.on("after_provider_response")
    def response(event, ctx):
        record("after_provider_response", status=event.status, has_headers=bool(event.headers))

    @pi.on("agent_end")
    def end(event, ctx):
        record("agent_end")

    @pi.on("agent_settled")
    def settled(event, ctx):
        record("agent_settled", aborted=event.aborted)

    @pi.on("model_select")
    def model(event, ctx):
        record("model_select", model=event.model.id, previous=event.previous_model.id, source=event.source)

    @pi.on("thinking_level_select")
    def thinking(event, ctx):
        record("thinking_level_select", level=event.level, previous=event.previous_level)
"""


def _notified(client: RpcClient, needle: str) -> dict:
    """A ``notify`` request containing ``needle``, read already (while waiting for a response) or next."""
    for line in client.seen:
        if line.get("method") == "notify" and needle in line["message"]:
            return line
    return client.wait_for(lambda line: line.get("method") == "notify" and needle in line["message"])


def _log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_provider_headers_response_and_settled(pi: PiHome) -> None:
    log = pi.project / "log.jsonl"
    ext = write_ext(pi.project, "rec", RECORDER.format(log=str(log)))
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "-p", "hi")
    assert run.returncode == 0, run.stderr
    request = pi.server.requests[0]
    assert request.headers.get("x-extension") == "yes"
    assert "x-drop-me" not in {k.lower() for k in request.headers}
    events = [e["event"] for e in _log(log)]
    assert events == ["before_provider_headers", "after_provider_response", "agent_end", "agent_settled"]
    assert _log(log)[1]["status"] == 200 and _log(log)[1]["has_headers"]
    assert _log(log)[-1]["aborted"] is False


def test_model_select_source_and_thinking_level_select(pi: PiHome) -> None:
    pi.write_models(
        "\n[providers.other]\n"
        'api = "anthropic-messages"\n'
        f'base_url = "{pi.server.anthropic_base_url}"\n'
        'api_key = "none"\n'
        'models = [{ id = "plain-model", reasoning = false }, { id = "deep-model", reasoning = true }]\n'
    )
    log = pi.project / "log.jsonl"
    ext = write_ext(pi.project, "rec", RECORDER.format(log=str(log)))
    client = RpcClient(pi, "--no-session", "-e", str(ext), "--model", "other/deep-model")
    try:
        assert client.call({"type": "set_thinking_level", "level": "high"})["success"]
        assert client.call({"type": "set_model", "provider": "other", "modelId": "plain-model"})["success"]
        client.call({"type": "cycle_model"})
    finally:
        client.close()
    records = [e for e in _log(log) if e["event"] in ("model_select", "thinking_level_select")]
    assert records[0] == {"event": "thinking_level_select", "level": "high", "previous": records[0]["previous"]}
    # A model that cannot think clamps the level: thinking_level_select comes before model_select.
    assert records[1] == {"event": "thinking_level_select", "level": "off", "previous": "high"}
    assert records[2] == {"event": "model_select", "model": "plain-model", "previous": "deep-model", "source": "set"}
    cycled = [r for r in records[3:] if r["event"] == "model_select"]
    assert cycled and cycled[0]["source"] == "cycle" and cycled[0]["previous"] == "plain-model"


COMPACT = """
from pi_coder.extensions import CompactionResult

def extension(pi):
    @pi.on("session_before_compact")
    def before(event, ctx):
        if event.custom_instructions == "cancel":
            return {"cancel": True}
        return {"compaction": CompactionResult(summary="S", details={"by": "ext"})}

    @pi.on("session_compact")
    def done(event, ctx):
        ctx.ui.notify(f"compacted from_extension={event.from_extension} summary={event.compaction_entry.summary}")

    @pi.on("session_compact_failed")
    def failed(event, ctx):
        ctx.ui.notify(f"compact failed aborted={event.aborted}")
"""


def test_session_before_compact_supplies_or_cancels(pi: PiHome) -> None:
    ext = write_ext(pi.project, "compact", COMPACT)
    (pi.home / "settings.toml").write_text("[compaction]\nkeep_recent_tokens = 1\n")  # something to summarise
    pi.server.enqueue(Turn([Text("one")]), Turn([Text("two")]), Turn([Text("three")]))
    client = RpcClient(pi, "-e", str(ext))
    try:
        for text in ("a", "b"):
            client.call({"type": "prompt", "message": text})
            client.event("agent_settled")
        cancelled = client.call({"type": "compact", "customInstructions": "cancel"})
        assert not cancelled["success"]
        assert _notified(client, "compact failed")["message"] == "compact failed aborted=True"
        done = client.call({"type": "compact"})
        assert done["success"], done
        note = _notified(client, "compacted")
        assert note["message"] == "compacted from_extension=True summary=S"
        client.call({"type": "prompt", "message": "after"})
        client.event("agent_settled")
    finally:
        client.close()
    assert len(pi.server.requests) == 3  # the summary came from the extension: no model call
    assert "S" in json.dumps(pi.server.requests[2].json["messages"])
    entries = [json.loads(line) for line in pi.session_files()[0].read_text().splitlines()]
    compactions = [e for e in entries if e["type"] == "compaction"]
    assert len(compactions) == 1
    assert compactions[0]["summary"] == "S" and compactions[0]["fromHook"] is True


TREE = """
def extension(pi):
    @pi.on("session_before_tree")
    def before(event, ctx):
        if event.target_id == "nowhere-cancel":
            return {"cancel": True}
        return {"summary": {"summary": "branch B", "details": {"why": "ext"}}}

    @pi.on("session_tree")
    def after(event, ctx):
        kind = event.summary_entry.type if event.summary_entry is not None else None
        ctx.ui.notify(f"tree from_extension={event.from_extension} entry={kind} old={event.old_leaf_id is not None}")

    @pi.command("back")
    async def back(args, ctx):
        first = ctx.session.entries()[0]
        for entry in ctx.session.entries():
            if getattr(entry, "type", "") == "message":
                first = entry
                break
        result = await ctx.navigate_tree(first.id, summarize=True)
        ctx.ui.notify(f"navigated cancelled={result.cancelled}")
"""


def test_session_before_tree_supplies_summary(pi: PiHome) -> None:
    ext = write_ext(pi.project, "tree", TREE)
    pi.server.enqueue(Turn([Text("one")]), Turn([Text("two")]))
    client = RpcClient(pi, "-e", str(ext))
    try:
        client.call({"type": "prompt", "message": "first question"})
        client.event("agent_settled")
        client.call({"type": "prompt", "message": "/back"})
        note = _notified(client, "tree from")
        assert note["message"] == "tree from_extension=True entry=branch_summary old=True"
        assert _notified(client, "navigated")["message"] == "navigated cancelled=False"
    finally:
        client.close()
    assert len(pi.server.requests) == 1  # no model call for the summary
    entries = [json.loads(line) for line in pi.session_files()[0].read_text().splitlines()]
    summaries = [e for e in entries if e["type"] == "branch_summary"]
    assert summaries and summaries[0]["summary"] == "branch B" and summaries[0]["fromHook"] is True


def test_resources_discover_adds_prompt_templates(pi: PiHome) -> None:
    prompts = pi.project / "ext-prompts"
    prompts.mkdir()
    (prompts / "greet.md").write_text("---\ndescription: Greet someone\n---\nSay hello to $1 warmly.\n")
    ext = write_ext(
        pi.project,
        "res",
        """
        def extension(pi):
            @pi.on("resources_discover")
            def discover(event, ctx):
                return {"prompt_paths": ["ext-prompts"]}
        """,
    )
    pi.server.enqueue(Turn([Text("hello")]))
    run = pi.run("-e", str(ext), "-p", "/greet Ana")
    assert run.returncode == 0, run.stderr
    assert [t.strip() for t in user_texts(pi.server.requests[0].json)] == ["Say hello to Ana warmly."]
    client = RpcClient(pi, "--no-session", "-e", str(ext))
    try:
        commands = client.call({"type": "get_commands"})["data"]["commands"]
    finally:
        client.close()
    assert any(c["name"] == "greet" and c["source"] == "prompt" for c in commands)
