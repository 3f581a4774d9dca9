"""The SDK in process: create a session, prompt, steer, follow up, abort, events, usage, extensions."""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pi_coder
from tests.modes.pirun import PiHome, user_texts
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer, monkeypatch: pytest.MonkeyPatch) -> PiHome:
    home = PiHome(tmp_path, sse_server, "anthropic")
    for key in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PI_CODER_HOME", str(home.home))
    return home


def make(pi: PiHome, **options: Any) -> pi_coder.Session:
    return pi_coder.create_session(cwd=pi.project, model="local/test-model", **options)


async def test_prompt_events_messages_and_usage(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("Hello there.")], usage={"input": 30, "output": 4}))
    seen: list[str] = []
    deltas: list[str] = []

    def listen(event: Any) -> None:
        seen.append(event.type)
        if isinstance(event, pi_coder.MessageUpdate) and event.assistant_message_event.type == "text_delta":
            deltas.append(event.assistant_message_event.delta)

    async with make(pi, in_memory=True) as session:
        unsubscribe = session.subscribe(listen)
        await session.prompt("hi")
        unsubscribe()
        assert session.last_assistant_text == "Hello there."
        assert [m.role for m in session.messages] == ["user", "assistant"]
        assert isinstance(session.messages[1], pi_coder.AssistantMessage)
        assert (session.usage.input, session.usage.output) == (30, 4)
        assert session.session_file is None
    assert seen[0] == "agent_start" and "agent_end" in seen and "message_update" in seen
    assert "".join(deltas) == "Hello there."


async def test_session_file_is_written_and_reopened(pi: PiHome, tmp_path: Path) -> None:
    file = tmp_path / "s.jsonl"
    pi.server.enqueue(Turn([Text("one")]), Turn([Text("two")]))
    async with make(pi, session_file=file) as session:
        await session.prompt("first")
    assert file.is_file()
    async with make(pi, session_file=file) as session:
        await session.prompt("second")
        assert [m.role for m in session.messages] == ["user", "assistant", "user", "assistant"]


async def test_steer_and_follow_up_while_streaming(pi: PiHome) -> None:
    pi.server.enqueue(
        Turn([Text("working on it, slowly")], delay=0.05, delta_chars=2),
        Turn([Text("steered")]),
        Turn([Text("followed")]),
    )
    async with make(pi, in_memory=True) as session:
        started = asyncio.Event()
        session.subscribe(lambda e: started.set() if e.type == "message_update" else None)
        run = asyncio.create_task(session.prompt("start"))
        await asyncio.wait_for(started.wait(), 20)
        session.steer("also look at tests")
        session.follow_up("then summarise")
        await asyncio.wait_for(run, 30)
        assert session.last_assistant_text == "followed"
    assert user_texts(pi.server.requests[1].json)[-1] == "also look at tests"
    assert user_texts(pi.server.requests[2].json)[-1] == "then summarise"


async def test_abort_stops_a_run(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("never")], hang=math.inf))
    async with make(pi, in_memory=True) as session:
        run = asyncio.create_task(session.prompt("wait forever"))
        while not session.is_streaming:
            await asyncio.sleep(0.01)
        await session.abort()
        await asyncio.wait_for(run, 20)
        last = session.last_assistant_message
        assert last is not None and last.stop_reason == "aborted"


async def test_inline_extension_and_tools(pi: PiHome) -> None:
    from pydantic import BaseModel

    from pi_coder.extensions import AgentToolResult, ToolDefinition

    class Params(BaseModel):
        city: str

    async def weather(tool_call_id: str, params: Params, *rest: Any) -> AgentToolResult:
        return AgentToolResult(content=[pi_coder.TextContent(text=f"Sunny in {params.city}")])

    def extension(api: pi_coder.ExtensionAPI) -> None:
        api.register_tool(
            ToolDefinition(name="weather", label="Weather", description="The weather", parameters=Params, execute=weather)
        )

    pi.server.enqueue(Turn([ToolCall("weather", {"city": "Oslo"})]), Turn([Text("It is sunny.")]))
    async with make(pi, in_memory=True, extensions=[extension], tools=["read", "weather"]) as session:
        assert session.agent_session.tool_names == ["read", "weather"]
        await session.prompt("weather?")
        result = session.messages[2]
        assert isinstance(result, pi_coder.ToolResultMessage) and result.content[0].text == "Sunny in Oslo"


async def test_settings_override_without_saving(pi: PiHome) -> None:
    async with make(pi, in_memory=True, settings={"compaction": {"enabled": False}, "steering_mode": "all"}) as session:
        assert session.agent_session.settings.compaction.enabled is False
        assert session.agent_session.steering_mode == "all"
    assert not (pi.home / "settings.toml").exists()
    with pytest.raises(pi_coder.UserError, match="unknown setting 'colour'"):
        make(pi, in_memory=True, settings={"colour": "red"})
    with pytest.raises(pi_coder.UserError, match="invalid value for setting retry"):
        make(pi, in_memory=True, settings={"retry": {"max_retries": "many"}})
    fallback = pi_coder.create_session(cwd=pi.project, model="local/nothing", in_memory=True)
    assert any("nothing" in notice for notice in fallback.notices), fallback.notices
    await fallback.close()


def test_the_public_names_are_exactly_the_exports(tmp_path: Path) -> None:
    public = [name for name in pi_coder.__all__ if name != "__version__"]
    assert all(getattr(pi_coder, name) is not None for name in public)
    stub = (Path(pi_coder.__file__).with_suffix(".pyi")).read_text()
    assert all(name in stub for name in pi_coder.__all__)
    # importing pi_coder (what `pi --version` does first) loads none of it
    probe = "import sys, pi_coder; print(sorted(m for m in sys.modules if m.startswith(('pi_coder.', 'pydantic'))))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_trust_decides_what_of_the_project_loads(pi: PiHome) -> None:
    (pi.project / ".pi" / "prompts").mkdir(parents=True)
    (pi.project / ".pi" / "prompts" / "ship.md").write_text("Ship it.\n")
    untrusted = make(pi, in_memory=True)
    assert not any(t.name == "ship" for t in untrusted.agent_session.prompt_templates)
    assert any("is not trusted" in n and "trust=True" in n for n in untrusted.notices)
    await untrusted.close()
    trusted = make(pi, in_memory=True, trust=True)
    assert any(t.name == "ship" for t in trusted.agent_session.prompt_templates)
    await trusted.close()
