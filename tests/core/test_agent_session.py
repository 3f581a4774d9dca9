"""AgentSession with the faux provider and real session files in a tmp PI_CODER_HOME."""

from __future__ import annotations

import asyncio
import json
import tomllib
from pathlib import Path

import pytest

from pi_coder.ai.types import AssistantMessage
from pi_coder.core.events import QueueChanged, SessionSwitched
from pi_coder.session.store import SessionStore
from tests.core._agent_session_support import (
    Gate,
    faux_message,
    faux_provider,
    make_models,
    make_session,
    read_lines,
    texts,
    usage,
)


def _exists(path: str | None) -> bool:
    return path is not None and Path(path).exists()




async def test_prompt_runs_persists_and_forwards_events(cwd: Path) -> None:
    """A prompt runs the agent; every message lands in the file; events reach subscribers as JSON."""
    faux = faux_provider(["Hello there"])
    session = make_session(cwd, make_models(faux))
    events: list[dict] = []
    session.subscribe(lambda e: events.append(json.loads(json.dumps(e.to_json_dict()))))

    assert session.session_file is not None and not _exists(session.session_file)
    await session.prompt("hi")

    assert texts(session.messages) == [("user", "hi"), ("assistant", "Hello there")]
    assert session.messages[0].role == "system" and "Current working directory" in session.messages[0].content
    lines = read_lines(session.session_file)
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3 and lines[0]["cwd"] == str(cwd)
    assert [line["type"] for line in lines[1:]] == [
        "model_change",
        "thinking_level_change",
        "message",
        "message",
    ]
    assert lines[1]["provider"] == "faux" and lines[1]["modelId"] == "faux-1"
    assert [line["message"]["role"] for line in lines[3:]] == ["user", "assistant"]
    assert all(line["message"]["role"] != "system" for line in lines if line["type"] == "message")
    kinds = [e["type"] for e in events]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    assert "message_update" in kinds and kinds.count("message_end") == 2
    # The provider saw the system prompt first, then the prompt.
    assert [m.role for m in faux.state.contexts[0].messages] == ["system", "user"]


async def test_steer_and_follow_up_while_streaming(cwd: Path) -> None:
    gate = Gate("first")
    faux = faux_provider([gate, "second", "third"])
    session = make_session(cwd, make_models(faux))
    queue_events: list[QueueChanged] = []
    session.subscribe(lambda e: queue_events.append(e) if isinstance(e, QueueChanged) else None)

    run = asyncio.create_task(session.prompt("start"))
    await asyncio.wait_for(gate.started.wait(), 5)
    assert session.is_streaming
    with pytest.raises(RuntimeError, match="Agent is already processing"):
        await session.prompt("no behaviour")
    await session.prompt("later", streaming_behavior="follow_up")
    await session.prompt("steer me", streaming_behavior="steer")
    assert session.queued_messages() == [("steer", "steer me"), ("follow_up", "later")]
    gate.release.set()
    await asyncio.wait_for(run, 10)

    assert texts(session.messages) == [
        ("user", "start"),
        ("assistant", "first"),
        ("user", "steer me"),
        ("assistant", "second"),
        ("user", "later"),
        ("assistant", "third"),
    ]
    assert session.queued_messages() == []
    assert not session.is_streaming
    assert queue_events[-1].steering == [] and queue_events[-1].follow_up == []
    assert any(e.steering == ["steer me"] and e.follow_up == ["later"] for e in queue_events)
    assert [line["message"]["role"] for line in read_lines(session.session_file) if line["type"] == "message"] == [
        "user", "assistant", "user", "assistant", "user", "assistant",
    ]  # fmt: skip


async def test_follow_up_queued_at_the_very_end_is_still_delivered(cwd: Path) -> None:
    """A follow-up queued while the last assistant message ends is run before prompt() returns."""
    faux = faux_provider(["one", "two"])
    session = make_session(cwd, make_models(faux))

    def on_event(event) -> None:
        if event.type == "agent_end" and faux.state.call_count == 1:
            session.follow_up("after end")

    session.subscribe(on_event)
    await session.prompt("go")
    assert texts(session.messages)[-2:] == [("user", "after end"), ("assistant", "two")]


async def test_abort_returns_queued_texts_and_stops(cwd: Path) -> None:
    gate = Gate("never shown")
    faux = faux_provider([gate, "unused"])
    session = make_session(cwd, make_models(faux))

    run = asyncio.create_task(session.prompt("start"))
    await asyncio.wait_for(gate.started.wait(), 5)
    session.steer("fix it")
    session.follow_up("then this")
    restored = session.abort()
    await asyncio.wait_for(run, 10)
    await session.wait_for_idle()

    assert restored == ["fix it", "then this"]
    assert session.queued_messages() == []
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
    assert faux.state.call_count == 1
    assert ("user", "fix it") not in texts(session.messages)
    # Nothing is lost: the next prompt works and does not replay the aborted queue.
    await session.prompt("again")
    assert texts(session.messages)[-2:] == [("user", "again"), ("assistant", "unused")]


async def test_model_and_thinking_changes_are_persisted_and_saved(cwd: Path, tmp_path: Path) -> None:
    plain = faux_provider(["a", "b"], name="plain", model_id="basic")
    smart = faux_provider([], name="smart", model_id="thinker", reasoning=True)
    session = make_session(cwd, make_models(plain, smart), model=plain.model)
    assert session.thinking_level == "off"  # clamped: non-reasoning model
    assert session.available_thinking_levels() == ["off"]
    assert session.cycle_thinking_level() is None
    await session.prompt("hello")

    session.set_model(smart.model)
    session.set_thinking_level("xhigh")  # not allowed for this model: nearest lower
    assert session.thinking_level == "high"
    assert session.cycle_thinking_level() == "off"
    session.set_thinking_level("low")

    lines = read_lines(session.session_file)
    changes = [(line["type"], line.get("provider") or line.get("thinkingLevel")) for line in lines[1:] if line["type"] != "message"]
    assert changes == [
        ("model_change", "plain"),
        ("thinking_level_change", "off"),
        ("model_change", "smart"),
        ("thinking_level_change", "high"),
        ("thinking_level_change", "off"),
        ("thinking_level_change", "low"),
    ]
    saved = tomllib.loads((tmp_path / "home" / "settings.toml").read_text())
    assert saved["default_provider"] == "smart" and saved["default_model"] == "thinker"
    assert saved["default_thinking_level"] == "low"
    assert session.settings.default_model == "thinker"

    # Switching back to the non-reasoning model re-clamps thinking to off.
    session.set_model(plain.model)
    assert session.thinking_level == "off"
    assert read_lines(session.session_file)[-1] == {**read_lines(session.session_file)[-1], "thinkingLevel": "off"}


async def test_cycle_model_uses_scope_with_its_thinking_level(cwd: Path) -> None:
    a = faux_provider([], name="a", model_id="m1", reasoning=True)
    b = faux_provider([], name="b", model_id="m2", reasoning=True)
    session = make_session(cwd, make_models(a, b), model=a.model, scoped_models=[(a.model, None), (b.model, "minimal")])
    assert session.cycle_model() == (b.model, "minimal")
    result = session.cycle_model()
    assert result is not None and result[0] == a.model
    assert session.cycle_model(-1) == (b.model, "minimal")


async def test_resume_rebuilds_context_and_next_request_carries_it(cwd: Path) -> None:
    faux = faux_provider(["first answer", "second answer"])
    models = make_models(faux)
    first = make_session(cwd, models)
    await first.prompt("remember 42")
    await first.close()

    store = SessionStore.open(first.session_file)
    second = make_session(cwd, models, store=store)
    assert texts(second.messages) == texts(first.messages)
    assert second.messages[0].role == "system"
    assert second.model == faux.model
    await second.prompt("what was it?")

    sent = faux.state.contexts[-1].messages
    assert [m.role for m in sent] == ["system", "user", "assistant", "user"]
    assert texts(sent) == [("user", "remember 42"), ("assistant", "first answer"), ("user", "what was it?")]
    lines = read_lines(first.session_file)
    assert [line["type"] for line in lines].count("model_change") == 1  # resume appends no duplicate
    assert [line["type"] for line in lines].count("thinking_level_change") == 1


async def test_resume_with_unavailable_model_warns_and_falls_back(cwd: Path) -> None:
    gone = faux_provider(["hi"], name="gone", model_id="old")
    first = make_session(cwd, make_models(gone))
    await first.prompt("x")
    other = faux_provider([], name="other", model_id="new")
    second = make_session(cwd, make_models(other), store=SessionStore.open(first.session_file))
    assert second.model == other.model
    assert any(n.startswith("Could not restore model gone/old (model no longer exists).") for n in second.startup_notices)


async def test_switch_session_restores_and_emits(cwd: Path) -> None:
    faux = faux_provider(["one", "two"])
    models = make_models(faux)
    session = make_session(cwd, models)
    await session.prompt("in first")
    first_file = session.session_file
    switched: list[SessionSwitched] = []
    session.subscribe(lambda e: switched.append(e) if isinstance(e, SessionSwitched) else None)

    await session.new_session()
    assert texts(session.messages) == []
    assert session.session_file != first_file
    await session.prompt("in second")
    await session.switch_session(first_file)
    assert texts(session.messages) == [("user", "in first"), ("assistant", "one")]
    assert [e.reason for e in switched] == ["new", "switch"]
    assert switched[-1].to_json_dict() == {"reason": "switch", "sessionFile": first_file, "type": "session_switched"}


async def test_new_session_starts_with_model_and_thinking_entries(cwd: Path) -> None:
    faux = faux_provider(["r1", "r2"])
    session = make_session(cwd, make_models(faux))
    await session.prompt("a")
    await session.new_session()
    await session.prompt("b")
    lines = read_lines(session.session_file)
    assert [line["type"] for line in lines] == ["session", "model_change", "thinking_level_change", "message", "message"]
    assert texts(session.messages) == [("user", "b"), ("assistant", "r2")]


async def test_fork_writes_new_file_with_parent_and_returns_text(cwd: Path) -> None:
    faux = faux_provider(["answer one", "answer two"])
    session = make_session(cwd, make_models(faux))
    await session.prompt("question one")
    await session.prompt("question two")
    original = session.session_file
    candidates = session.fork_candidates()
    assert [text for _, text in candidates] == ["question one", "question two"]

    text = await session.fork(candidates[1][0])
    assert text == "question two"
    assert session.session_file != original
    lines = read_lines(session.session_file)
    assert lines[0]["parentSession"] == original
    assert texts(session.messages) == [("user", "question one"), ("assistant", "answer one")]
    assert len(read_lines(original)) == 7  # the source file is untouched
    with pytest.raises(ValueError):
        await session.fork(lines[1]["id"])  # a model_change is not a user message


async def test_navigate_tree_to_user_message_returns_its_text(cwd: Path) -> None:
    faux = faux_provider(["answer one", "answer two", "answer three"])
    session = make_session(cwd, make_models(faux))
    await session.prompt("question one")
    await session.prompt("question two")
    target = session.fork_candidates()[1][0]
    assert await session.navigate_tree(session.store.leaf_id) is None  # already there
    text = await session.navigate_tree(target)
    assert text == "question two"
    assert texts(session.messages) == [("user", "question one"), ("assistant", "answer one")]
    await session.prompt("question two, again")
    assert texts(session.messages)[-1] == ("assistant", "answer three")
    tree = session.store.get_tree()
    assert len(tree) == 1  # one root, and the branch point now has two children


async def test_stats_totals_and_context_estimate(cwd: Path) -> None:
    faux = faux_provider(
        [faux_message("one", usage=usage(100, 20, 50, 10)), faux_message("two", usage=usage(300, 40))],
        context_window=1000,
    )
    session = make_session(cwd, make_models(faux))
    await session.prompt("first")
    await session.prompt("second")
    stats = session.stats()
    assert (stats.user_messages, stats.assistant_messages, stats.total_messages) == (2, 2, 4)
    assert (stats.input, stats.output, stats.cache_read, stats.cache_write) == (400, 60, 50, 10)
    assert stats.total_tokens == 520
    assert stats.context_tokens == 340  # last usage total; nothing after it
    assert stats.context_window == 1000 and stats.context_percent == 34.0
    session.follow_up("x" * 40)  # queued messages are not in the context
    assert session.stats().context_tokens == 340
    data = stats.to_json_dict()
    assert data["tokens"] == {"input": 400, "output": 60, "cacheRead": 50, "cacheWrite": 10, "total": 520}


async def test_no_model_gives_an_error_turn_and_writes_nothing(cwd: Path) -> None:
    session = make_session(cwd, make_models())
    assert session.model is None
    await session.prompt("hello?")
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert "No model configured" in (last.error_message or "")
    assert not _exists(session.session_file)


async def test_templates_are_expanded(cwd: Path, tmp_path: Path) -> None:
    prompts = tmp_path / "home" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("Review $1 carefully")
    faux = faux_provider(["ok"])
    session = make_session(cwd, make_models(faux))
    await session.prompt("/review main.py")
    assert texts(session.messages)[0] == ("user", "Review main.py carefully")


async def test_session_name_and_last_assistant_text(cwd: Path) -> None:
    faux = faux_provider(["  the answer  "])
    session = make_session(cwd, make_models(faux))
    await session.prompt("q")
    session.set_session_name("  My session ")
    assert session.session_name == "My session"
    assert session.last_assistant_text() == "the answer"
    assert session.user_prompt_history() == ["q"]


async def test_default_tools_are_declared_and_a_tool_turn_is_persisted(cwd: Path) -> None:
    from pi_coder.ai.providers.faux import faux_tool_call

    (cwd / "note.txt").write_text("file body\n")
    faux = faux_provider([faux_message(faux_tool_call("read", {"path": "note.txt"}, id="call_1")), "done"])
    session = make_session(cwd, make_models(faux), tools=None)
    assert session.tool_names == ["read", "bash", "edit", "write"]
    system = session.messages[0]
    assert [t.name for t in system.tools_added] == ["read", "bash", "edit", "write"]
    assert "- read:" in system.content

    await session.prompt("read the note")
    roles = [line["message"]["role"] for line in read_lines(session.session_file) if line["type"] == "message"]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    result = session.messages[3]
    assert result.role == "toolResult" and "file body" in result.content[0].text
    # The second request carried the tool result; no reconciliation message was needed.
    assert [m.role for m in faux.state.contexts[1].messages] == ["system", "user", "assistant", "toolResult"]
    stats = session.stats()
    assert (stats.tool_calls, stats.tool_results) == (1, 1)


async def test_resume_with_cli_model_keeps_the_session_thinking_level(cwd: Path) -> None:
    a = faux_provider(["one"], name="a", model_id="m1", reasoning=True)
    b = faux_provider([], name="b", model_id="m2", reasoning=True)
    models = make_models(a, b)
    first = make_session(cwd, models, model=a.model)
    first.set_thinking_level("high")
    await first.prompt("x")

    second = make_session(cwd, models, store=SessionStore.open(first.session_file), model=b.model)
    assert (second.model, second.thinking_level) == (b.model, "high")
    last = read_lines(first.session_file)[-1]
    assert (last["type"], last["provider"], last["modelId"]) == ("model_change", "b", "m2")

    third = make_session(cwd, models, store=SessionStore.open(first.session_file), thinking_level="low")
    assert (third.model, third.thinking_level) == (b.model, "low")


async def test_missing_key_error_turn_is_not_written(cwd: Path) -> None:
    from pi_coder.ai.registry import Provider
    from pi_coder.ai.types import Model

    models = make_models()
    locked = Model(id="big", api="openai-completions", provider="vendor")
    models.set_provider(Provider(name="vendor", api="openai-completions", env_vars=("VENDOR_API_KEY",), models=[locked]))
    session = make_session(cwd, models, model=locked)
    await session.prompt("hello")
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert "VENDOR_API_KEY" in (last.error_message or "")
    assert not _exists(session.session_file)


async def test_run_hooks_can_drop_a_failed_reply_and_continue(cwd: Path) -> None:
    from pi_coder.core import RunHook

    class RetryOnce(RunHook):
        def __init__(self) -> None:
            self.seen: list[str | None] = []
            self.before = 0
            self.aborted = False

        async def before_prompt(self, session) -> None:
            self.before += 1

        async def after_run(self, session, message) -> bool:
            self.seen.append(message.stop_reason if message else None)
            if message is not None and message.stop_reason == "error" and len(self.seen) == 1:
                assert session.is_streaming and session.drop_last_assistant() is message
                return True
            return False

        def abort(self) -> None:
            self.aborted = True

        async def compact(self, session, instructions):
            return f"compacted: {instructions}"

    failure = faux_message("", stop_reason="error", error_message="503 service unavailable")
    faux = faux_provider([failure, "recovered"])
    session = make_session(cwd, make_models(faux))
    hook = RetryOnce()
    session._hooks.insert(0, hook)  # ahead of the built-in retry and compaction hooks
    await session.prompt("x")
    assert hook.before == 1 and hook.seen == ["error", "stop"]
    assert texts(session.messages) == [("user", "x"), ("assistant", "recovered")]
    assert [m.role for m in faux.state.contexts[1].messages] == ["system", "user"]
    assert await session.compact("focus") == "compacted: focus"
    assert hook.aborted  # compact() stops whatever runs first


async def test_a_level_clamped_by_a_model_is_not_saved_and_comes_back(cwd: Path, tmp_path: Path) -> None:
    """Ctrl+P to a model without thinking and back: the user's level returns; settings keep it."""
    smart = faux_provider([], name="smart", model_id="thinker", reasoning=True)
    plain = faux_provider([], name="plain", model_id="basic")
    session = make_session(cwd, make_models(smart, plain), model=smart.model)
    session.set_thinking_level("medium")
    settings_file = tmp_path / "home" / "settings.toml"
    assert tomllib.loads(settings_file.read_text())["default_thinking_level"] == "medium"
    session.cycle_model()
    assert session.thinking_level == "off"  # clamped for the model without thinking
    assert tomllib.loads(settings_file.read_text())["default_thinking_level"] == "medium"
    session.cycle_model()
    assert session.thinking_level == "medium"
    assert tomllib.loads(settings_file.read_text())["default_thinking_level"] == "medium"
