"""Events and their combination rules (extensions §2; §9 scenarios 8-22)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.extensions.conftest import write_ext
from tests.modes.pirun import PiHome, RpcClient, user_texts
from tests.support.sse_server import Text, ToolCall, Turn


def _records(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def _tool_results(request: dict) -> list[dict]:
    return [
        block
        for message in request["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def test_recorder_sees_the_order_of_one_prompt(pi: PiHome) -> None:
    rec = write_ext(
        pi.project,
        "rec",
        """
        from pathlib import Path

        def extension(pi):
            def log(event, ctx):
                with open(Path(ctx.cwd) / "events.log", "a") as out:
                    out.write(event.type + "\\n")
            for name in ("session_start", "input", "before_agent_start", "agent_start", "turn_start", "context",
                         "before_provider_request", "message_start", "message_end", "tool_execution_start",
                         "tool_call", "tool_result", "tool_execution_end", "turn_end", "agent_end",
                         "session_shutdown"):
                pi.on(name, log)
        """,
    )
    (pi.project / "f.txt").write_text("x")
    pi.server.enqueue(Turn([ToolCall("read", {"path": "f.txt"})]), Turn([Text("done")]))
    run = pi.run("-e", str(rec), "--no-subagents", "-p", "go")  # no extension tool: no tool declaration
    assert run.returncode == 0, run.stderr
    assert (pi.project / "events.log").read_text().split() == [
        "session_start", "input", "before_agent_start", "agent_start",
        "turn_start", "message_start", "message_end",  # the user message (the agent core opens the turn first)
        "context", "before_provider_request", "message_start", "message_end",
        "tool_execution_start", "tool_call", "tool_result", "tool_execution_end",
        "message_start", "message_end",  # the tool result
        "turn_end",
        "turn_start", "context", "before_provider_request", "message_start", "message_end", "turn_end",
        "agent_end", "session_shutdown",
    ]  # fmt: skip


def test_tool_call_gate_blocks_and_stops_dispatch(pi: PiHome) -> None:
    first = write_ext(
        pi.project,
        "first",
        """
        def extension(pi):
            @pi.on("tool_call")
            def gate(event, ctx):
                if event.tool_name == "bash":
                    return {"block": True, "reason": "nope"}
        """,
    )
    second = write_ext(
        pi.project,
        "second",
        """
        def extension(pi):
            pi.on("tool_call", lambda event, ctx: open("second-called", "w").close())
            pi.on("tool_result", lambda event, ctx: open("result-seen", "w").close())
        """,
    )
    pi.server.enqueue(Turn([ToolCall("bash", {"command": "touch ran"})]), Turn([Text("ok")]))
    run = pi.run("-e", str(first), "-e", str(second), "--mode", "json", "-p", "go")
    assert run.returncode == 0
    assert not (pi.project / "ran").exists() and not (pi.project / "second-called").exists()
    assert not (pi.project / "result-seen").exists()
    result = _tool_results(pi.server.requests[1].json)[0]
    assert result["is_error"] is True and "nope" in json.dumps(result["content"])
    end = next(r for r in _records(run.stdout) if r["type"] == "tool_execution_end")
    assert end["isError"] is True


def test_tool_call_input_edits_are_revalidated(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "edit",
        """
        def extension(pi):
            @pi.on("tool_call")
            def edit(event, ctx):
                if event.tool_name == "bash":
                    event.input["command"] = "echo hi"
                if event.tool_name == "read":
                    event.input["path"] = 5
        """,
    )
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "echo other"})]), Turn([ToolCall("read", {"path": "a"})]), Turn([Text("ok")])
    )
    assert pi.run("-e", str(ext), "-p", "go").returncode == 0
    bash_result = _tool_results(pi.server.requests[1].json)[0]
    assert "hi" in json.dumps(bash_result["content"]) and "other" not in json.dumps(bash_result["content"])
    read_result = _tool_results(pi.server.requests[2].json)[-1]
    assert read_result["is_error"] is True and "Validation failed" in json.dumps(read_result["content"])


def test_raising_tool_call_handler_blocks(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "raiser",
        """
        def extension(pi):
            @pi.on("tool_call")
            def boom(event, ctx):
                raise RuntimeError("kaputt")
        """,
    )
    pi.server.enqueue(Turn([ToolCall("bash", {"command": "touch ran"})]), Turn([Text("ok")]))
    assert pi.run("-e", str(ext), "-p", "go").returncode == 0
    assert not (pi.project / "ran").exists()
    text = json.dumps(_tool_results(pi.server.requests[1].json)[0]["content"])
    assert "Extension raiser failed: kaputt" in text


def test_tool_result_chain(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "patch",
        """
        from pi_coder.extensions import TextContent, ToolResultPatch

        def extension(pi):
            pi.on("tool_result", lambda e, ctx: ToolResultPatch(content=[TextContent(text="A")]))

            @pi.on("tool_result")
            def second(event, ctx):
                assert event.content[0].text == "A"
                return {"is_error": True}
        """,
    )
    pi.server.enqueue(Turn([ToolCall("bash", {"command": "echo original"})]), Turn([Text("ok")]))
    assert pi.run("-e", str(ext), "-p", "go").returncode == 0
    result = _tool_results(pi.server.requests[1].json)[0]
    assert result["is_error"] is True and json.dumps(result["content"]).count("original") == 0
    entries = [json.loads(line) for line in pi.session_files()[0].read_text().splitlines()]
    stored = next(e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult")
    assert stored["isError"] is True and stored["content"] == [{"type": "text", "text": "A"}]


def test_input_transform_chain(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "brief",
        """
        def extension(pi):
            @pi.on("input")
            def brief(event, ctx):
                if event.text.startswith("?q "):
                    return {"action": "transform", "text": "Briefly: " + event.text[3:]}

            @pi.on("input")
            def check(event, ctx):
                ctx.ui.notify("second saw " + event.text)
        """,
    )
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "-p", "?q x")
    assert "[brief] second saw Briefly: x" in run.stderr
    assert user_texts(pi.server.requests[0].json) == ["Briefly: x"]


def test_input_handled_over_rpc(pi: PiHome) -> None:
    ext = write_ext(pi.project, "h", 'def extension(pi):\n    pi.on("input", lambda e, c: {"action": "handled"})\n')
    client = RpcClient(pi, "-e", str(ext))
    try:
        response = client.call({"type": "prompt", "message": "hello"})
        assert response["data"] == {"disposition": "handled"}
        state = client.call({"type": "get_state"})["data"]
    finally:
        assert client.close() == 0
    assert state["messageCount"] == 0 and pi.server.requests == []


def test_command_runs_while_streaming_without_input(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "cmd",
        """
        def extension(pi):
            pi.register_command("x", lambda args, ctx: ctx.ui.notify("x ran " + args))
            pi.on("input", lambda e, ctx: ctx.ui.notify("input " + e.text))
        """,
    )
    pi.server.enqueue(Turn([Text("slow answer " * 20)], delay=0.05, delta_chars=2))
    client = RpcClient(pi, "--no-session", "-e", str(ext))
    try:
        client.call({"type": "prompt", "message": "start"})
        client.event("message_update")
        assert client.call({"type": "prompt", "message": "/x now"})["data"] == {"disposition": "handled"}
        notice = client.wait_for(lambda line: line.get("method") == "notify" and "x ran" in line["message"])
        assert notice["message"] == "x ran now"
        client.event("agent_end")
    finally:
        client.close()
    notes = [line["message"] for line in client.seen if line.get("method") == "notify"]
    assert notes == ["input start", "x ran now"]


def test_before_agent_start_system_prompt_and_message(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "bas",
        """
        from pi_coder.extensions import CustomMessageSpec

        def extension(pi):
            state = {"runs": 0}

            @pi.on("before_agent_start")
            def z(event, ctx):
                state["runs"] += 1
                if state["runs"] == 1:
                    return {"system_prompt": event.system_prompt + "Z",
                            "message": CustomMessageSpec(custom_type="note", content="extra context")}

            @pi.on("before_agent_start")
            def y(event, ctx):
                if state["runs"] == 1:
                    return {"system_prompt": event.system_prompt + "Y"}
        """,
    )
    pi.server.enqueue(Turn([Text("one")]), Turn([Text("two")]))
    assert pi.run("-e", str(ext), "-p", "first", "second").returncode == 0
    first, second = pi.server.requests[0].json, pi.server.requests[1].json
    system_text = lambda request: "".join(block["text"] for block in request["system"])  # noqa: E731
    assert system_text(first).endswith("ZY")
    assert not system_text(second).endswith("Z") and "ZY" not in system_text(second)
    assert "extra context" in json.dumps(first["messages"])
    entries = [json.loads(line) for line in pi.session_files()[0].read_text().splitlines()]
    kinds = [e["type"] if e["type"] != "message" else e["message"]["role"] for e in entries[1:]]
    assert kinds[kinds.index("user") : kinds.index("user") + 2] == ["user", "custom_message"]


def test_context_rewrites_only_the_request(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "ctx",
        """
        def extension(pi):
            pi.on("context", lambda event, ctx: {"messages": event.messages[-1:]})
        """,
    )
    pi.server.enqueue(Turn([Text("a")]), Turn([Text("b")]))
    assert pi.run("-e", str(ext), "-p", "one", "two").returncode == 0
    assert user_texts(pi.server.requests[1].json) == ["two"]
    assert pi.server.requests[1].json.get("system")
    text = pi.session_files()[0].read_text()
    assert '"one"' in text and '"two"' in text


def test_before_provider_request_edits_payload(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "temp",
        """
        def extension(pi):
            @pi.on("before_provider_request")
            def cool(event, ctx):
                return {**event.payload, "temperature": 0}
        """,
    )
    pi.server.enqueue(Turn([Text("ok")]))
    assert pi.run("-e", str(ext), "-p", "hi").returncode == 0
    assert pi.server.requests[0].json["temperature"] == 0


def test_session_before_switch_cancels_new_session(pi: PiHome) -> None:
    ext = write_ext(pi.project, "keep", 'def extension(pi):\n    pi.on("session_before_switch", lambda e, c: {"cancel": True})\n')
    client = RpcClient(pi, "-e", str(ext))
    try:
        before = client.call({"type": "get_state"})["data"]["sessionId"]
        assert client.call({"type": "new_session"})["data"] == {"cancelled": True}
        assert client.call({"type": "get_state"})["data"]["sessionId"] == before
    finally:
        client.close()


def test_user_bash_result_replaces_the_run(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "remote",
        """
        from pi_coder.extensions import ShellOutcome, UserBashResult

        def extension(pi):
            pi.on("user_bash", lambda e, c: UserBashResult(result=ShellOutcome(output="remote", exit_code=0)))
        """,
    )
    client = RpcClient(pi, "--no-session", "-e", str(ext))
    try:
        data = client.call({"type": "bash", "command": "touch ran"})["data"]
    finally:
        client.close()
    assert data["output"] == "remote" and data["exitCode"] == 0
    assert not (pi.project / "ran").exists()


def test_new_session_restarts_extensions(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "life",
        """
        from pathlib import Path

        kept = []

        def extension(pi):
            kept.append(pi)

            def log(event, ctx):
                with open(Path(ctx.cwd) / "life.log", "a") as out:
                    out.write(f"{event.type}:{event.reason}:{getattr(event, 'previous_session_file', None) is not None}\\n")

            pi.on("session_start", log)
            pi.on("session_shutdown", log)

            @pi.command("stale")
            def stale(args, ctx):
                try:
                    kept[0].get_active_tools()
                except Exception as exc:
                    ctx.ui.notify(type(exc).__name__)
        """,
    )
    client = RpcClient(pi, "-e", str(ext))
    try:
        assert client.call({"type": "new_session"})["data"] == {"cancelled": False}
        client.call({"type": "prompt", "message": "/stale"})
        notice = client.wait_for(lambda line: line.get("method") == "notify")
    finally:
        client.close()
    assert notice["message"] == "StaleContextError"
    assert (pi.project / "life.log").read_text().split() == [
        "session_start:startup:False",
        "session_shutdown:new:False",
        "session_start:new:True",
        "session_shutdown:quit:False",
    ]


def test_import_once(pi: PiHome, tmp_path: Path) -> None:
    ext = write_ext(
        pi.project,
        "once",
        """
        import builtins
        builtins.__dict__.setdefault("_pi_ext_imports", 0)
        builtins._pi_ext_imports += 1
        from pathlib import Path

        def extension(pi):
            @pi.on("session_shutdown")
            def done(event, ctx):
                import builtins, sys
                Path(ctx.cwd, "imports").write_text(f"{builtins._pi_ext_imports} {'textual' in sys.modules}")
        """,
    )
    client = RpcClient(pi, "-e", str(ext))
    client.call({"type": "new_session"})
    client.close()
    assert (pi.project / "imports").read_text() == "1 False"
