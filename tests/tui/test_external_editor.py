"""Ctrl+G edits the prompt in an external editor (setting, $VISUAL, $EDITOR); Ctrl+Z suspends."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pi_coder.tui.external_editor import editor_command
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app


def _fake_editor(folder: Path, name: str, prefix: str) -> Path:
    script = folder / name
    script.write_text(f'#!/bin/sh\n{{ printf "{prefix}"; cat "$1"; }} > "$1.new" && mv "$1.new" "$1"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


async def test_ctrl_g_runs_editor_and_puts_the_result_back(make_session, project: Path, monkeypatch) -> None:
    script = _fake_editor(project.parent, "fake-editor", "edited: ")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(script))
    session, _ = make_session()
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await type_text(pilot, "line one\nline two")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: app.editor.text.startswith("edited: "), what="edited text")
        assert app.editor.text == "edited: line one\nline two"


async def test_external_editor_setting_wins_over_env(make_session, project: Path, monkeypatch) -> None:
    script = _fake_editor(project.parent, "from-setting", "setting: ")
    other = _fake_editor(project.parent, "from-env", "env: ")
    monkeypatch.setenv("VISUAL", str(other))
    (project.parent / "home" / "settings.toml").write_text(f'external_editor = "{script}"\n')
    session, _ = make_session()
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await type_text(pilot, "draft")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: app.editor.text != "draft", what="edited text")
        assert app.editor.text == "setting: draft"


async def test_failing_editor_keeps_the_prompt(make_session, project: Path, monkeypatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "false")
    session, _ = make_session()
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await type_text(pilot, "keep me")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: "prompt is unchanged" in screen_text(app), what="warning")
        assert app.editor.text == "keep me"


@pytest.mark.parametrize(
    ("setting", "env", "expected"),
    [
        (None, {"VISUAL": "code -w", "EDITOR": "vi"}, ["code", "-w"]),
        (None, {"EDITOR": "vi"}, ["vi"]),
        ("nvim -u NONE", {"VISUAL": "code"}, ["nvim", "-u", "NONE"]),
        (None, {}, None),
    ],
)
def test_editor_command_order(setting, env, expected) -> None:
    assert editor_command(setting, env) == expected


async def test_ctrl_z_suspends(make_session, monkeypatch) -> None:
    session, _ = make_session()
    app = make_app(session)
    calls: list[str] = []
    monkeypatch.setattr(type(app), "action_suspend_process", lambda self: calls.append("suspend"))
    async with app.run_test(size=(80, 24)) as pilot:
        await type_text(pilot, "x")
        await pilot.press("ctrl+z")
        await wait_until(pilot, lambda: calls == ["suspend"], what="suspend")
        assert app.editor.text == "x"


async def test_ctrl_x_copies_the_last_answer(make_session, monkeypatch) -> None:
    from pi_coder.ai.providers.faux import faux_message

    session, _ = make_session([faux_message("the answer to copy")])
    app = make_app(session)
    copied: list[str] = []
    monkeypatch.setattr(type(app), "copy_to_clipboard", lambda self, text: copied.append(text))
    async with app.run_test(size=(80, 24)) as pilot:
        await type_text(pilot, "question")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not session.is_streaming and session.last_assistant_text(), what="answer")
        await pilot.press("ctrl+x")
        await wait_until(pilot, lambda: copied == ["the answer to copy"], what="copy")
        assert "Copied last agent message" in screen_text(app)
