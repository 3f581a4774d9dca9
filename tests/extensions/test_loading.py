"""Loading and error reporting (extensions §1; §9 scenarios 1-6)."""

from __future__ import annotations

import json
import os

from tests.extensions.conftest import write_ext
from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import Text, Turn

LOGGER = """
from pathlib import Path

def extension(pi):
    @pi.on("input")
    def log(event, ctx):
        with open(Path(ctx.cwd) / "order.log", "a") as out:
            out.write("{name} ")
"""


def test_global_extension_command_listed_in_get_commands(pi: PiHome) -> None:
    write_ext(
        pi.home / "extensions",
        "hi",
        """
        async def extension(pi):
            pi.register_command("hi", lambda args, ctx: None, description="Say hi")
        """,
    )
    client = RpcClient(pi, "--no-session", "--no-subagents")  # no /agents
    try:
        data = client.call({"type": "get_commands"})["data"]
    finally:
        assert client.close() == 0
    assert {"name": "hi", "source": "extension"}.items() <= data["commands"][0].items()


def test_sources_load_in_pi_order(pi: PiHome) -> None:
    a = write_ext(pi.project, "a", LOGGER.format(name="a"))
    write_ext(pi.home / "extensions", "a", LOGGER.format(name="a-global"))
    write_ext(pi.project / ".pi" / "extensions", "b", LOGGER.format(name="b"))
    write_ext(pi.home / "extensions", "c", LOGGER.format(name="c"))
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-a", "-e", str(a), "-p", "hi")
    assert run.returncode == 0, run.stderr
    # the global a.py is another file: it loads too, after b (project) and in its folder's order
    assert (pi.project / "order.log").read_text().split() == ["a", "b", "a-global", "c"]


def test_project_extensions_need_trust(pi: PiHome) -> None:
    write_ext(pi.project / ".pi" / "extensions", "x", "open('marker', 'w').close()\ndef extension(pi):\n    pass\n")
    pi.server.enqueue(Turn([Text("ok")]), Turn([Text("ok")]))
    assert pi.run("-p", "hi").returncode == 0
    assert not (pi.project / "marker").exists()
    assert pi.run("-a", "-p", "hi").returncode == 0
    assert (pi.project / "marker").exists()


def test_failed_factory_is_rolled_back_and_reported_once(pi: PiHome) -> None:
    bad = write_ext(
        pi.project,
        "bad",
        """
        from pydantic import BaseModel
        from pi_coder.extensions import AgentToolResult, ToolDefinition

        class P(BaseModel):
            pass

        async def run(*args):
            return AgentToolResult()

        def extension(pi):
            pi.register_tool(ToolDefinition(name="x", label="x", description="x", parameters=P, execute=run))
            raise RuntimeError("broken factory")
        """,
    )
    good = write_ext(
        pi.project,
        "good",
        """
        from pydantic import BaseModel
        from pi_coder.extensions import AgentToolResult, ToolDefinition

        class P(BaseModel):
            pass

        async def run(*args):
            return AgentToolResult()

        def extension(pi):
            pi.register_tool(ToolDefinition(name="y", label="y", description="y", parameters=P, execute=run))
        """,
    )
    pi.server.enqueue(Turn([Text("answer")]))
    # Print mode stops at a failed load (as Pi: tests/extensions/test_print_signals.py); RPC goes on
    # without the broken extension's registrations.
    client = RpcClient(pi, "-e", str(bad), "-e", str(good))
    try:
        client.call({"type": "prompt", "message": "hi"})
        client.event("agent_settled")
    finally:
        client.close()
    errors = [line for line in client.seen if line.get("type") == "extension_error"]
    assert [(e["event"], e["error"]) for e in errors] == [("load", "broken factory")]
    tools = [t["name"] for t in pi.server.requests[0].json["tools"]]
    assert "y" in tools and "x" not in tools
    assert "broken factory" in (pi.home / "logs" / "extensions.log").read_text()


def test_no_extensions_keeps_only_cli(pi: PiHome) -> None:
    write_ext(pi.home / "extensions", "g", LOGGER.format(name="g"))
    x = write_ext(pi.project, "x", LOGGER.format(name="x"))
    pi.server.enqueue(Turn([Text("ok")]))
    assert pi.run("-ne", "-e", str(x), "-p", "hi").returncode == 0
    assert (pi.project / "order.log").read_text().split() == ["x"]


def test_raising_turn_end_reported_once_as_json(pi: PiHome) -> None:
    x = write_ext(
        pi.project,
        "x",
        """
        def extension(pi):
            @pi.on("turn_end")
            def boom(event, ctx):
                raise ValueError("always")
        """,
    )
    (pi.project / "f.txt").write_text("data")
    from tests.support.sse_server import ToolCall

    pi.server.enqueue(
        Turn([ToolCall("read", {"path": "f.txt"})]), Turn([ToolCall("read", {"path": "f.txt"})]), Turn([Text("done")])
    )
    run = pi.run("-e", str(x), "--mode", "json", "-p", "go")
    assert run.returncode == 0
    records = [json.loads(line) for line in run.stdout.splitlines()]
    errors = [r for r in records if r["type"] == "extension_error"]
    assert errors == [{"type": "extension_error", "extensionPath": str(x.resolve()), "event": "turn_end", "error": "always"}]
    assert sum(r["type"] == "turn_end" for r in records) == 3


def test_version_loads_no_extension(pi: PiHome) -> None:
    write_ext(pi.home / "extensions", "m", "open('marker', 'w').close()\ndef extension(pi):\n    pass\n")
    run = pi.run("--version")
    assert run.returncode == 0 and not (pi.project / "marker").exists()


def test_missing_extension_stops_a_print_run(pi: PiHome) -> None:
    run = pi.run("-e", "nowhere/ext.py", "-p", "hi")  # as Pi 1.6: exit 1 with the -ne hint
    assert run.returncode == 1 and not pi.server.requests
    assert 'Failed to load extension "nowhere/ext.py": extension not found: nowhere/ext.py' in run.stderr
    assert "pi -ne" in run.stderr


def test_extension_flags(pi: PiHome) -> None:
    x = write_ext(
        pi.project,
        "plan",
        """
        def extension(pi):
            pi.register_flag("plan", "Plan first")
            pi.register_flag("who", "Name", type="str")
            flag, who = pi.get_flag("plan"), pi.get_flag("who")

            @pi.on("input")
            def show(event, ctx):
                ctx.ui.notify(f"plan={flag} who={who} text={event.text}")
        """,
    )
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(x), "--plan", "--who", "ana", "-p", "fix it")
    assert run.returncode == 0, run.stderr
    assert "[plan] plan=True who=ana text=fix it" in run.stderr
    assert pi.server.requests[0].json["messages"][-1]["content"][0]["text"] == "fix it"
    bad = pi.run("-e", str(x), "--frob", "x", "-p", "hi")
    assert bad.returncode == 1 and "Unknown option: --frob" in bad.stderr


def test_print_path_imports_each_module_once_and_no_textual(pi: PiHome) -> None:
    body = """
        import builtins
        builtins.__dict__.setdefault("_pi_ext_count", 0)
        builtins._pi_ext_count += 1

        def extension(pi):
            @pi.on("session_shutdown")
            def done(event, ctx):
                import builtins, sys
                with open("seen", "a") as out:
                    out.write(f"{builtins._pi_ext_count} {'textual' in sys.modules}\\n")
        """
    write_ext(pi.home / "extensions", "g", body)
    x = write_ext(pi.project, "x", body.replace("_pi_ext_count", "_pi_ext_count_x"))
    pi.server.enqueue(Turn([Text("ok")]))
    # the same file twice on the command line and once more through settings: imported once
    (pi.home / "settings.toml").write_text(f'extensions = ["{x}"]\n')
    assert pi.run("-e", str(x), "-e", str(x), "-p", "hi").returncode == 0
    assert (pi.project / "seen").read_text().split("\n")[:2] == ["1 False", "1 False"]


TRUSTING = """
import builtins

builtins.__dict__.setdefault("_pi_trust_imports", 0)
builtins._pi_trust_imports += 1

def extension(pi):
    @pi.on("project_trust")
    def vote(event, ctx):
        with open("voted", "a") as out:
            out.write(f"{{event.cwd}} {{builtins._pi_trust_imports}}\\n")
        return {{"trusted": "{answer}", "remember": {remember}}}
"""


def test_project_trust_handler_decides_and_remembers(pi: PiHome) -> None:
    """§9 scenario 49: a global extension's ``project_trust`` answer lets the project's extensions load."""
    write_ext(pi.home / "extensions", "trusting", TRUSTING.format(answer="yes", remember=True))
    write_ext(pi.project / ".pi" / "extensions", "x", "open('marker', 'w').close()\ndef extension(pi):\n    pass\n")
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-p", "hi")
    assert run.returncode == 0, run.stderr
    assert (pi.project / "marker").exists()
    assert "not trusted" not in run.stderr
    cwd = os.path.realpath(pi.project)
    assert (pi.project / "voted").read_text() == f"{cwd} 1\n"  # asked once, the module imported once
    assert json.loads((pi.home / "trust.json").read_text()) == {cwd: True}


def test_project_trust_no_keeps_the_project_out_and_saves_nothing(pi: PiHome) -> None:
    write_ext(pi.home / "extensions", "trusting", TRUSTING.format(answer="no", remember=False))
    write_ext(pi.project / ".pi" / "extensions", "x", "open('marker', 'w').close()\ndef extension(pi):\n    pass\n")
    pi.server.enqueue(Turn([Text("ok")]), Turn([Text("ok")]))
    run = pi.run("-p", "hi")
    assert run.returncode == 0, run.stderr
    assert not (pi.project / "marker").exists()
    assert not (pi.home / "trust.json").exists()
    # -a decides first: no handler is asked.
    (pi.project / "voted").unlink()
    assert pi.run("-a", "-p", "hi").returncode == 0
    assert (pi.project / "marker").exists() and not (pi.project / "voted").exists()
