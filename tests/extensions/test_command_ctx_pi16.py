"""Command-context members added for Pi 1.6 parity: ``navigate_tree(replace_instructions=)``, ``new_session(setup=)``."""

from __future__ import annotations

import json

from tests.extensions.conftest import write_ext
from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import Text, Turn


def _notified(client: RpcClient, needle: str) -> dict:
    for line in client.seen:
        if line.get("method") == "notify" and needle in line["message"]:
            return line
    return client.wait_for(lambda line: line.get("method") == "notify" and needle in line["message"])


TREE = """
def extension(pi):
    @pi.command("back")
    async def back(args, ctx):
        first = next(e for e in ctx.session.entries() if getattr(e, "type", "") == "message")
        result = await ctx.navigate_tree(first.id, summarize=True, custom_instructions="ONLY-THESE-WORDS",
                                         replace_instructions=args == "replace")
        ctx.ui.notify(f"navigated cancelled={result.cancelled}")
"""


def _summary_request_text(pi: PiHome) -> str:
    return json.dumps(pi.server.requests[-1].json["messages"])


def test_navigate_tree_replace_instructions_replaces_the_default_prompt(pi: PiHome) -> None:
    ext = write_ext(pi.project, "tree", TREE)
    pi.server.enqueue(Turn([Text("one")]), Turn([Text("the summary")]), Turn([Text("two")]), Turn([Text("summary 2")]))
    client = RpcClient(pi, "-e", str(ext))
    try:
        client.call({"type": "prompt", "message": "first question"})
        client.event("agent_settled")
        client.call({"type": "prompt", "message": "/back replace"})
        assert _notified(client, "navigated")["message"] == "navigated cancelled=False"
        replaced = _summary_request_text(pi)
        client.call({"type": "prompt", "message": "second question"})
        client.event("agent_settled")
        client.seen.clear()
        client.call({"type": "prompt", "message": "/back add"})
        assert _notified(client, "navigated")["message"] == "navigated cancelled=False"
        added = _summary_request_text(pi)
    finally:
        client.close()
    assert "ONLY-THESE-WORDS" in replaced and "ONLY-THESE-WORDS" in added
    assert "Additional focus" not in replaced and "Additional focus" in added
    assert len(replaced) < len(added) - 200  # the default summary prompt is gone


SETUP = """
from pi_coder.ai.types import UserMessage

def extension(pi):
    @pi.on("session_start")
    def started(event, ctx):
        texts = [m.content for m in ctx.session.build_context().messages if getattr(m, "role", "") == "user"]
        if texts:
            ctx.ui.notify(f"started with {texts}")

    @pi.command("handoff")
    async def handoff(args, ctx):
        def setup(store):
            store.append_message(UserMessage(content="Context from previous session"))

        async def after(new_ctx):
            kinds = [getattr(e, "type", "") for e in new_ctx.session.entries()]
            new_ctx.ui.notify(f"fresh messages={kinds.count('message')}")

        await ctx.new_session(setup=setup, with_session=after)
"""


def test_new_session_setup_writes_entries_before_session_start(pi: PiHome) -> None:
    ext = write_ext(pi.project, "handoff", SETUP)
    pi.server.enqueue(Turn([Text("answer")]))
    client = RpcClient(pi, "-e", str(ext))
    try:
        client.call({"type": "prompt", "message": "/handoff"})
        assert _notified(client, "started with")["message"] == "started with ['Context from previous session']"
        assert _notified(client, "fresh messages")["message"] == "fresh messages=1"
        client.call({"type": "prompt", "message": "go on"})
        client.event("agent_settled")
    finally:
        client.close()
    sent = json.dumps(pi.server.requests[0].json["messages"])
    assert "Context from previous session" in sent and "go on" in sent


def test_get_system_prompt_options_lists_the_prompt_inputs(pi: PiHome) -> None:
    (pi.project / "AGENTS.md").write_text("Project rule: be brief.\n")
    ext = write_ext(
        pi.project,
        "opts",
        """
        import json
        from pathlib import Path
        from pydantic import BaseModel

        class Args(BaseModel):
            pass

        def extension(pi):
            from pi_coder.extensions import ToolDefinition

            pi.register_tool(ToolDefinition(name="hello", label="Hello", description="Say hello", parameters=Args,
                                            execute=lambda *a: None, prompt_snippet="Greets the user",
                                            prompt_guidelines=["Greet only when asked"]))

            @pi.on("before_agent_start")
            def seen(event, ctx):
                options = ctx.get_system_prompt_options()
                options.selected_tools.clear()  # a copy
                again = ctx.get_system_prompt_options()
                Path(ctx.cwd, "options.json").write_text(json.dumps({
                    "cwd": again.cwd,
                    "append": again.append_prompt,
                    "tools": again.selected_tools,
                    "snippet": again.tool_snippets.get("hello"),
                    "guidelines": again.prompt_guidelines,
                    "context": [(str(f.path), f.content) for f in again.context_files],
                }))
        """,
    )
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "--no-subagents", "--append-system-prompt", "EXTRA RULE", "-p", "hi")
    assert run.returncode == 0, run.stderr
    options = json.loads((pi.project / "options.json").read_text())
    assert options["cwd"] == str(pi.project)
    assert options["append"] == "EXTRA RULE"
    assert "read" in options["tools"] and "hello" in options["tools"]
    assert options["snippet"] == "Greets the user"
    assert "Greet only when asked" in options["guidelines"]
    assert [content for path, content in options["context"] if path.endswith("AGENTS.md")] == ["Project rule: be brief.\n"]
