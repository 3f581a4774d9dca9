"""The TUI while a child runs (a line per child above the editor) and Ctrl+O on its result
(the child's transcript), in a Textual pilot with a real session, extension runtime and server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_coder.core.agent_session import AgentSession
from tests.subagents.routed import RoutedServer
from tests.support.sse_server import Text, ToolCall, Turn
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


@pytest.fixture
def server() -> Iterator[RoutedServer]:
    with RoutedServer() as routed:
        yield routed


def _session(tmp_path: Path, server: RoutedServer) -> AgentSession:
    from pi_coder.ai.models import create_models
    from pi_coder.core.factory import create_agent_session, plan_for
    from pi_coder.extensions.loader import discover, load_extensions
    from pi_coder.extensions.runner import ExtensionRunner
    from pi_coder.settings import Settings
    from pi_coder.subagents.definitions import load_agents
    from pi_coder.subagents.extension import configure

    project, config = tmp_path / "project", tmp_path / "config"
    project.mkdir()
    (config / "agents").mkdir(parents=True)
    (config / "agents" / "alpha.md").write_text(
        "---\nname: alpha\ndescription: Runs commands\ntools: bash\n---\nYou are ROUTE-ALPHA.\n", encoding="utf-8"
    )
    toml = tmp_path / "models.toml"
    toml.write_text(
        f'[providers.local]\napi = "anthropic-messages"\nbase_url = "{server.anthropic_base_url}"\n'
        'api_key = "none"\nmodels = [{ id = "test-model" }]\n',
        encoding="utf-8",
    )
    models = create_models(include_builtin=False, env={}, models_toml=toml)
    configure(load_agents(project, config, project_trusted=True))
    runner = ExtensionRunner(str(project), models=models, project_trusted=True)
    sources, _ = discover(
        cli_specs=["pi_coder.subagents.extension"], cwd=str(project), config_dir=config, no_extensions=True, project_trusted=True
    )
    load_extensions(runner, sources)
    session = create_agent_session(
        plan_for(
            project,
            settings=Settings(),
            models=models,
            model=models.get_model("local", "test-model"),
            tool_names=["read", "bash"],
            session_dir=str(tmp_path / "sessions"),
        )
    )
    runner.bind(session)
    return session


async def test_a_running_child_has_a_live_line_and_ctrl_o_shows_its_transcript(
    tmp_path: Path, server: RoutedServer
) -> None:
    session = _session(tmp_path, server)
    server.hold("ROUTE-ALPHA")
    server.route("ROUTE-ALPHA", Turn([ToolCall("bash", {"command": "echo child-ran"})]), Turn([Text("alpha answer")]))
    task = {"description": "check things", "prompt": "run it", "subagent_type": "alpha"}
    server.enqueue(Turn([ToolCall("task", task, id="t1")]), Turn([Text("parent done")]))
    app = make_app(session)
    async with app.run_test(size=(140, 45)) as pilot:
        app.editor.set_text("go")
        await pilot.press("enter")
        # the child's second request is held: its line stays up with what it did so far
        await wait_until(pilot, lambda: "alpha · check things · " in screen_text(app), timeout=30, what="live line")
        await wait_until(pilot, lambda: server.seen.get("ROUTE-ALPHA", 0) >= 2, timeout=30, what="second request")
        assert "alpha · check things · " in screen_text(app)
        server.release("ROUTE-ALPHA")
        await wait_until(pilot, lambda: "parent done" in screen_text(app), timeout=30, what="parent answer")
        await wait_until(pilot, lambda: "alpha · check things · " not in screen_text(app), what="line gone")
        assert "child session" not in screen_text(app)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "── child session" in screen_text(app), what="transcript")
        text = screen_text(app)
        assert "› run it" in text and "→ bash" in text and "child-ran" in text
    await session.close()
