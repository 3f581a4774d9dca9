"""Registration (§3) and ctx.ui in print and RPC mode (§4; §9 scenarios 23-31)."""

from __future__ import annotations

import json
import time

from tests.extensions.conftest import write_ext
from tests.modes.pirun import PiHome, RpcClient, user_texts
from tests.support.sse_server import Text, ToolCall, Turn

TOOL = """
from pydantic import BaseModel
from pi_coder.extensions import AgentToolResult, TextContent, ToolDefinition

class Path(BaseModel):
    path: str

def extension(pi):
    async def run(tool_call_id, params, signal, on_update, ctx):
        return AgentToolResult(content=[TextContent(text="{label} " + params.path)])

    pi.register_tool(ToolDefinition(name="read", label="Read", description="Read via {label}", parameters=Path,
                                    execute=run))
"""


def test_extension_tool_replaces_builtin_first_wins(pi: PiHome) -> None:
    one = write_ext(pi.project, "one", TOOL.format(label="first"))
    two = write_ext(pi.project, "two", TOOL.format(label="second"))
    pi.server.enqueue(Turn([ToolCall("read", {"path": "x"})]), Turn([Text("ok")]))
    run = pi.run("-e", str(one), "-e", str(two), "-p", "go")
    assert run.returncode == 0
    assert "first x" in json.dumps(pi.server.requests[1].json["messages"])
    assert "failed in register_tool" in run.stderr and "two" in run.stderr
    names = [t["name"] for t in pi.server.requests[0].json["tools"]]
    assert names.count("read") == 1


def test_register_provider(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "prov",
        f"""
        def extension(pi):
            pi.register_provider("extprov", api="openai-completions", base_url="{pi.server.openai_base_url}",
                                 api_key="none", models=[{{"id": "m"}}])
        """,
    )
    pi.server.enqueue(Turn([Text("from m")]))
    run = pi.run("-e", str(ext), "--model", "extprov/m", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "from m"
    assert pi.server.requests[0].json["model"] == "m"


def test_send_message_and_append_entry(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "msg",
        """
        from pi_coder.extensions import CustomMessageSpec

        def extension(pi):
            @pi.command("note")
            def note(args, ctx):
                pi.append_entry("state", {})
                pi.send_message(CustomMessageSpec(custom_type="note", content="ctx", display=False), trigger_turn=True)
        """,
    )
    pi.server.enqueue(Turn([Text("seen")]))
    run = pi.run("-e", str(ext), "--mode", "json", "-p", "/note")
    assert run.returncode == 0
    deadline = time.monotonic() + 10
    while not pi.server.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    records = [json.loads(line) for line in run.stdout.splitlines()]
    appended = [r for r in records if r["type"] == "entry_appended"]
    assert appended and appended[0]["entry"]["customType"] == "state"
    assert user_texts(pi.server.requests[0].json) == ["ctx"]
    entries = [json.loads(line) for line in pi.session_files()[0].read_text().splitlines()]
    types = [e["type"] for e in entries]
    assert "custom" in types and "custom_message" in types
    assert '"state"' not in json.dumps(pi.server.requests[0].json)


def test_set_active_tools_from_a_command(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "only",
        """
        def extension(pi):
            pi.register_command("readonly", lambda args, ctx: pi.set_active_tools(["read"]))
        """,
    )
    pi.server.enqueue(Turn([Text("a")]))
    run = pi.run("-e", str(ext), "-p", "/readonly", "now")
    assert run.returncode == 0, run.stderr
    assert [t["name"] for t in pi.server.requests[0].json["tools"]] == ["read"]


def test_exec_timeout_kills(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "ex",
        """
        import time

        def extension(pi):
            @pi.command("sleep")
            async def sleep(args, ctx):
                start = time.monotonic()
                out = await pi.exec("sleep", ["60"], timeout=0.2)
                ctx.ui.notify(f"{out.killed} {out.code} {time.monotonic() - start < 30}")
        """,
    )
    run = pi.run("-e", str(ext), "-p", "/sleep")
    assert "[ex] True 143 True" in run.stderr


def test_print_mode_ui_defaults(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "ui",
        """
        def extension(pi):
            @pi.command("ask")
            async def ask(args, ctx):
                ok = await ctx.ui.confirm("Sure?", "really")
                choice = await ctx.ui.select("Pick", ["a", "b"])
                ctx.ui.notify(f"{ok} {choice} {ctx.has_ui} {ctx.mode}")
                ctx.ui.notify("careful", "warning")
        """,
    )
    run = pi.run("-e", str(ext), "-p", "/ask")
    assert "[ui] False None False print" in run.stderr
    assert "[ui] warning: careful" in run.stderr


CONFIRM_GATE = """
def extension(pi):
    @pi.on("tool_call")
    async def ask(event, ctx):
        if not await ctx.ui.confirm("Run?", event.input.get("command", "")):
            return {"block": True, "reason": "declined"}
"""


def test_rpc_confirm_dialog(pi: PiHome) -> None:
    ext = write_ext(pi.project, "gate", CONFIRM_GATE)
    pi.server.enqueue(
        Turn([ToolCall("bash", {"command": "touch yes"})]),
        Turn([ToolCall("bash", {"command": "touch no"})]),
        Turn([Text("done")]),
    )
    client = RpcClient(pi, "--no-session", "-e", str(ext))
    try:
        client.call({"type": "prompt", "message": "go"})
        first = client.wait_for(lambda line: line.get("type") == "extension_ui_request" and line["method"] == "confirm")
        assert first["title"] == "Run?" and first["message"] == "touch yes"
        client.send({"type": "extension_ui_response", "id": first["id"], "confirmed": True})
        second = client.wait_for(lambda line: line.get("type") == "extension_ui_request" and line["method"] == "confirm")
        client.send({"type": "extension_ui_response", "id": second["id"], "cancelled": True})
        client.event("agent_end")
    finally:
        client.close()
    assert (pi.project / "yes").exists() and not (pi.project / "no").exists()
    assert "declined" in json.dumps(pi.server.requests[2].json["messages"])


def test_rpc_select_timeout_and_eof(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "sel",
        """
        def extension(pi):
            @pi.command("pick")
            async def pick(args, ctx):
                timeout = float(args) if args else None
                value = await ctx.ui.select("Deploy to?", ["staging", "prod"], timeout=timeout)
                ctx.ui.notify(f"picked {value}")
        """,
    )
    client = RpcClient(pi, "--no-session", "-e", str(ext))
    try:
        client.call({"type": "prompt", "message": "/pick 0.2"})
        request = client.wait_for(lambda line: line.get("method") == "select")
        assert request["timeout"] == 200 and request["options"] == ["staging", "prod"]
        started = time.monotonic()
        note = client.wait_for(lambda line: line.get("method") == "notify")
        assert note["message"] == "picked None" and time.monotonic() - started < 30  # unanswered: it would wait for good
        client.send({"type": "extension_ui_response", "id": request["id"], "value": "prod"})  # late: ignored
        client.call({"type": "prompt", "message": "/pick"})
        client.wait_for(lambda line: line.get("method") == "select")
    finally:
        code = client.close()
    assert code == 0
    notes = [line["message"] for line in client.seen if line.get("method") == "notify"]
    assert notes[0] == "picked None"


DECO = """
def extension(pi):
    @pi.command("deco")
    def deco(args, ctx):
        ctx.ui.set_widget("todo", ["[ ] one"])
        ctx.ui.set_widget("foot", ["below"], placement="below_editor")
        ctx.ui.set_widget("todo", None)
        ctx.ui.set_status("mode", "PLAN")
        ctx.ui.set_status("mode", None)
        ctx.ui.set_title("pi - planning")
        ctx.ui.set_working_message("Thinking deeply...")
        ctx.ui.notify("decorated")
"""


def test_rpc_widget_status_title_requests(pi: PiHome) -> None:
    ext = write_ext(pi.project, "deco", DECO)
    client = RpcClient(pi, "--no-session", "-e", str(ext))
    try:
        client.call({"type": "prompt", "message": "/deco"})
        client.wait_for(lambda line: line.get("method") == "notify")
    finally:
        client.close()
    ui = [line for line in client.seen if line.get("type") == "extension_ui_request"]
    shapes = [{k: v for k, v in line.items() if k not in ("type", "id")} for line in ui]
    assert shapes == [
        {"method": "setWidget", "widgetKey": "todo", "widgetLines": ["[ ] one"], "widgetPlacement": "aboveEditor"},
        {"method": "setWidget", "widgetKey": "foot", "widgetLines": ["below"], "widgetPlacement": "belowEditor"},
        {"method": "setWidget", "widgetKey": "todo", "widgetPlacement": "aboveEditor"},
        {"method": "setStatus", "statusKey": "mode", "statusText": "PLAN"},
        {"method": "setStatus", "statusKey": "mode"},
        {"method": "setTitle", "title": "pi - planning"},
        {"method": "notify", "message": "decorated", "notifyType": "info"},  # set_working_message: a no-op
    ]
    assert all(len(line["id"]) == 36 for line in ui)


def test_print_mode_widget_status_title_are_no_ops(pi: PiHome) -> None:
    ext = write_ext(pi.project, "deco", DECO)
    run = pi.run("-e", str(ext), "-p", "/deco")
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert run.stderr.strip() == "[deco] decorated"
