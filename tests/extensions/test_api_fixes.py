"""Fixes of issue 27 found by porting Pi's example extensions: each test failed before its fix."""

from __future__ import annotations

import json

from tests.extensions.conftest import write_ext
from tests.modes.pirun import PiHome, RpcClient, user_texts
from tests.support.sse_server import Text, Turn


def test_get_commands_lists_prompts_and_skills(pi: PiHome) -> None:
    prompts = pi.project / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review it\n---\nReview $1\n")
    ext = write_ext(
        pi.project,
        "cmds",
        """
        def extension(pi):
            @pi.command("mine", "Mine")
            def mine(args, ctx):
                ctx.ui.notify(" ".join(f"{c['source']}:{c['name']}" for c in pi.get_commands()))
        """,
    )
    run = pi.run("-a", "-e", str(ext), "-p", "/mine")
    assert run.returncode == 0, run.stderr
    assert "extension:mine" in run.stderr and "prompt:review" in run.stderr


def test_set_active_tools_enables_builtins_that_were_off(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "tools",
        """
        def extension(pi):
            @pi.on("session_start")
            def start(event, ctx):
                names = [t.name for t in pi.get_all_tools()]
                ctx.ui.notify("all=" + ",".join(sorted(names)))
                pi.set_active_tools(["read", "grep", "find", "ls"])
        """,
    )
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("--no-subagents", "-e", str(ext), "-p", "hi")  # the built-ins only
    assert run.returncode == 0, run.stderr
    assert "all=bash,edit,find,grep,ls,read,write" in run.stderr
    assert "unknown tools" not in run.stderr
    assert [t["name"] for t in pi.server.requests[0].json["tools"]] == ["read", "grep", "find", "ls"]


def test_unknown_event_name_is_a_load_error(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "typo",
        """
        def extension(pi):
            pi.on("tool_calls", lambda event, ctx: None)
        """,
    )
    run = pi.run("-e", str(ext), "-p", "hi")
    assert "unknown event 'tool_calls'" in run.stderr and "tool_call" in run.stderr


def test_register_provider_unknown_keyword_is_a_load_error(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "prov",
        """
        def extension(pi):
            pi.register_provider("p", api="openai-completions", base_url="http://127.0.0.1:1", oauth={})
        """,
    )
    run = pi.run("-e", str(ext), "-p", "hi")
    assert run.returncode == 1
    assert "oauth" in run.stderr and "Failed to load extension" in run.stderr


def test_register_provider_with_its_own_stream(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "echo",
        """
        from pi_coder.extensions import text_stream

        def extension(pi):
            def stream(model, context, options):
                last = context.messages[-1]
                said = last.content if isinstance(last.content, str) else last.content[0].text
                return text_stream(model, ["echo: ", said], signal=options.signal)

            pi.register_provider("echo", api="echo-api", models=[{"id": "e1"}], stream_simple=stream)
        """,
    )
    run = pi.run("-e", str(ext), "--model", "echo/e1", "-p", "hello")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "echo: hello"
    assert not pi.server.requests


def test_set_model_does_not_save_the_default(pi: PiHome) -> None:
    pi.write_models(
        "[providers.other]\n"
        'api = "anthropic-messages"\n'
        f'base_url = "{pi.server.anthropic_base_url}"\n'
        'api_key = "none"\n'
        'models = [{ id = "other-model" }]\n'
    )
    ext = write_ext(
        pi.project,
        "switch",
        """
        def extension(pi):
            @pi.on("session_start")
            def start(event, ctx):
                pi.set_model(ctx.models.get_model("other", "other-model"))
        """,
    )
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "--model", "local/test-model", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert pi.server.requests[0].json["model"] == "other-model"
    settings = pi.home / "settings.toml"
    assert "other-model" not in (settings.read_text() if settings.exists() else "")


def test_set_thinking_level_does_not_save_the_default(pi: PiHome) -> None:
    pi.write_models(
        "[providers.deep]\n"
        'api = "anthropic-messages"\n'
        f'base_url = "{pi.server.anthropic_base_url}"\n'
        'api_key = "none"\n'
        'models = [{ id = "deep-model", reasoning = true }]\n'
    )
    ext = write_ext(
        pi.project,
        "think",
        """
        def extension(pi):
            @pi.on("session_start")
            def start(event, ctx):
                pi.set_thinking_level("low")
        """,
    )
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "--model", "deep/deep-model", "-p", "hi")
    assert run.returncode == 0, run.stderr
    thinking = pi.server.requests[0].json.get("thinking") or {}
    assert thinking.get("budget_tokens") == 2048  # low, for this session
    settings = pi.home / "settings.toml"
    assert "default_thinking_level" not in (settings.read_text() if settings.exists() else "")


def test_compaction_usage_is_stored(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "compact",
        """
        from pi_coder.extensions import CompactionResult

        def extension(pi):
            @pi.on("session_before_compact")
            def before(event, ctx):
                usage = {"input": 5, "output": 7, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12,
                         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
                return {"compaction": CompactionResult(summary="S", usage=usage)}
        """,
    )
    (pi.home / "settings.toml").write_text("[compaction]\nkeep_recent_tokens = 1\n")
    pi.server.enqueue(Turn([Text("one")]), Turn([Text("two")]))
    client = RpcClient(pi, "-e", str(ext))
    try:
        for text in ("a", "b"):
            client.call({"type": "prompt", "message": text})
            client.event("agent_settled")
        assert client.call({"type": "compact"})["success"]
    finally:
        client.close()
    entries = [json.loads(line) for line in pi.session_files()[0].read_text().splitlines()]
    (compaction,) = [e for e in entries if e["type"] == "compaction"]
    assert compaction["usage"]["totalTokens"] == 12


def test_send_user_message_with_content_blocks(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "blocks",
        """
        from pi_coder.extensions import ImageContent, TextContent

        PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

        def extension(pi):
            @pi.command("look")
            def look(args, ctx):
                pi.send_user_message([TextContent(text="what is this"), ImageContent(data=PIXEL, mime_type="image/png")])
        """,
    )
    pi.server.enqueue(Turn([Text("a pixel")]))
    run = pi.run("-e", str(ext), "-p", "/look")
    assert run.returncode == 0, run.stderr
    assert "failed" not in run.stderr
    assert user_texts(pi.server.requests[0].json) == ["what is this"]
    assert '"image"' in json.dumps(pi.server.requests[0].json["messages"])


def test_new_session_with_session_gets_a_fresh_context(pi: PiHome) -> None:
    ext = write_ext(
        pi.project,
        "fresh",
        """
        def extension(pi):
            @pi.command("fresh")
            async def fresh(args, ctx):
                old = ctx.session.session_id
                def after(new_ctx):
                    new_ctx.ui.notify(f"old={old} new={new_ctx.session.session_id}")
                await ctx.new_session(with_session=after)
        """,
    )
    client = RpcClient(pi, "-e", str(ext))
    try:
        client.call({"type": "prompt", "message": "/fresh"})
        note = client.wait_for(lambda line: line.get("method") == "notify" and "old=" in line["message"])
    finally:
        client.close()
    old, new = (part.split("=")[1] for part in note["message"].split())
    assert old and new and old != new
