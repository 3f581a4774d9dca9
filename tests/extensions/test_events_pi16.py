"""Pi 1.6 events pi_coder emits since issue 27: ``context_with_system`` and ``provider_stream_event``."""

from __future__ import annotations

import json

from tests.extensions.conftest import write_ext
from tests.modes.pirun import PiHome
from tests.support.sse_server import Text, Turn


def test_context_with_system_sees_the_system_message_and_its_result_is_sent(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "withsys",
        """
        import json
        from pathlib import Path

        def extension(pi):
            @pi.on("context_with_system")
            def first(event, ctx):
                roles = [m.role for m in event.messages]
                Path(ctx.cwd, "roles.json").write_text(json.dumps(roles))
                head = event.messages[0].model_copy(update={"content": "REPLACED SYSTEM PROMPT"})
                return {"messages": [head, *event.messages[1:]]}

            @pi.on("context_with_system")
            def second(event, ctx):  # chained: sees the first handler's head
                Path(ctx.cwd, "second.txt").write_text(event.messages[0].content)
        """,
    )
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "--no-subagents", "-p", "hello")
    assert run.returncode == 0, run.stderr
    assert json.loads((pi.project / "roles.json").read_text()) == ["system", "user"]
    assert (pi.project / "second.txt").read_text() == "REPLACED SYSTEM PROMPT"
    system = pi.server.requests[0].json["system"]
    assert "".join(block["text"] for block in system) == "REPLACED SYSTEM PROMPT"


def test_context_with_system_dropping_the_system_message_is_an_error_and_ignored(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "dropsys",
        """
        def extension(pi):
            pi.on("context_with_system", lambda event, ctx: {"messages": event.messages[1:]})
        """,
    )
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "--no-subagents", "-p", "hello")
    assert run.returncode == 0, run.stderr
    assert "must start with the system message" in run.stderr
    assert pi.server.requests[0].json["system"], "the system prompt was kept"


def test_provider_stream_event_sees_each_parsed_event_in_order(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "streamrec",
        """
        import json
        from pathlib import Path

        def extension(pi):
            @pi.on("provider_stream_event")
            def record(event, ctx):
                with open(Path(ctx.cwd) / "stream.jsonl", "a") as out:
                    out.write(json.dumps({"provider": event.provider, "api": event.api, "model": event.model,
                                          "sse": event.sse_event, "data": event.data}) + "\\n")
                if isinstance(event.data, dict):
                    event.data.clear()  # a copy: the answer is not changed
        """,
    )
    pi.server.enqueue(Turn([Text("streamed answer")]))
    run = pi.run("-e", str(ext), "--no-subagents", "-p", "hello")
    assert run.returncode == 0, run.stderr
    assert "streamed answer" in run.stdout
    records = [json.loads(line) for line in (pi.project / "stream.jsonl").read_text().splitlines()]
    assert records, "no provider_stream_event"
    assert {r["api"] for r in records} == {"anthropic-messages"}
    types = [r["data"].get("type") for r in records if isinstance(r["data"], dict)]
    assert types[0] == "message_start" and "message_stop" in types
    assert [r["sse"] for r in records if isinstance(r["data"], dict)] == types
    deltas = "".join(r["data"]["delta"].get("text", "") for r in records if r["data"].get("type") == "content_block_delta")
    assert deltas == "streamed answer"
