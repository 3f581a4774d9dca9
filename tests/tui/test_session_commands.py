"""/clone, /export (HTML and JSONL), /import, /changelog and /debug (Textual pilot, real files)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from pi_coder.ai.models import create_models
from pi_coder.paths import logs_dir, session_dir_for_cwd
from pi_coder.session.store import SessionStore
from tests.tui.helpers import wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import (
    FIXED_NOW,
    SessionWriter,
    branchy_session,
    faux_models,
    make_app,
    session_for,
)
from tests.tui.test_model_commands import run_command

BRANCH = ["e0000001", "e000000t", "e0000002", "e0000003", "e0000008", "e0000009"]


def _lines(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def _transcript(app) -> str:
    return " ".join(screen_text(app).split())


async def test_clone_copies_the_branch_into_a_new_session(project: Path, make_session) -> None:
    original = branchy_session(str(project))
    before = original.read_text()
    session, _ = make_session([], store=SessionStore.open(original), model=None)
    app = make_app(session)
    async with app.run_test(size=(140, 30)) as pilot:
        await run_command(app, pilot, "/clone")
        await wait_until(pilot, lambda: session.session_file != str(original), what="cloned")
        await wait_until(pilot, lambda: "Cloned to new session" in _transcript(app), what="notice")
        header, *entries = _lines(session.session_file)
        assert header["parentSession"] == str(original) and header["id"] != "11111111-2222-3333-4444-555555555555"
        assert [e["id"] for e in entries] == BRANCH
        assert [m.role for m in session.messages if m.role != "system"] == ["user", "assistant", "user", "assistant"]
    assert original.read_text() == before


async def test_export_jsonl_writes_the_branch_as_a_session_file(project: Path, make_session) -> None:
    original = branchy_session(str(project))
    session, _ = make_session([], store=SessionStore.open(original), model=None)
    app = make_app(session)
    async with app.run_test(size=(140, 30)) as pilot:
        await run_command(app, pilot, "/export out/branch.jsonl")
        target = project / "out" / "branch.jsonl"
        await wait_until(pilot, lambda: target.exists(), what="export")
        await wait_until(pilot, lambda: f"Session exported to: {target}" in _transcript(app), what="notice")
        header, *entries = _lines(target)
        assert header == _lines(original)[0]  # same id and cwd: the same session, this branch only
        assert [e["id"] for e in entries] == BRANCH
        assert target.stat().st_mode & 0o777 == 0o600
        reopened = SessionStore.open(target)
        texts = [m.text() if hasattr(m, "text") else m.content for m in reopened.build_session_context().messages]
        assert len(texts) == 4 and reopened.leaf_id == "e0000009"

        await run_command(app, pilot, "/export page.html")
        await wait_until(pilot, lambda: (project / "page.html").exists(), what="html")
        assert (project / "page.html").read_text().lstrip().lower().startswith("<!doctype html")


async def test_export_jsonl_drops_labels_of_entries_off_the_branch(project: Path, make_session) -> None:
    w = SessionWriter(str(project), "22222222-2222-3333-4444-555555555555", FIXED_NOW - timedelta(hours=1))
    w.user("u1", "first")
    w.assistant("a1", "one")
    w.user("u2", "side", parent="a1")
    w.assistant("a2", "side answer")
    w.label("l1", "a2", "side-label")
    w.user("u3", "main", parent="a1")
    w.label("l2", "a1", "kept-label")
    path = w.write()
    session, _ = make_session([], store=SessionStore.open(path), model=None)
    app = make_app(session)
    async with app.run_test(size=(140, 30)) as pilot:
        await run_command(app, pilot, "/export b.jsonl")
        await wait_until(pilot, lambda: (project / "b.jsonl").exists(), what="export")
        exported = _lines(project / "b.jsonl")[1:]
        assert [e["id"] for e in exported[:4]] == ["u1", "a1", "u3", "l2"]
        assert {e["type"] for e in exported[4:]} <= {"model_change", "thinking_level_change"}


async def test_import_forks_the_file_into_this_folder_and_switches(project: Path, make_session, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    w = SessionWriter(str(elsewhere), "33333333-2222-3333-4444-555555555555", FIXED_NOW, directory=tmp_path / "out")
    w.user("u1", "question from elsewhere")
    w.assistant("a1", "answer from elsewhere")
    source = w.write()
    before = source.read_text()
    session, _ = make_session([], no_session=False, model=None)
    app = make_app(session)
    async with app.run_test(size=(160, 30)) as pilot:
        await run_command(app, pilot, f"/import {source}")
        await wait_until(pilot, lambda: session.session_id != "" and "Imported" in _transcript(app), what="imported")
        new_file = Path(session.session_file)
        assert new_file.parent == session_dir_for_cwd(str(project))
        header, *entries = _lines(new_file)
        assert header["cwd"] == str(project) and header["parentSession"] == str(source)
        assert header["id"] != "33333333-2222-3333-4444-555555555555"
        assert [e["id"] for e in entries[:2]] == ["u1", "a1"]
        assert {e["type"] for e in entries[2:]} <= {"model_change", "thinking_level_change"}
        assert [m.role for m in session.messages if m.role != "system"] == ["user", "assistant"]
        await wait_until(pilot, lambda: "answer from elsewhere" in _transcript(app), what="transcript rebuilt")
    assert source.read_text() == before


@pytest.mark.parametrize(
    ("arg", "message"),
    [("", "Usage: /import"), ("missing.jsonl", "no such file"), ("bad.jsonl", "Import failed: Cannot fork")],
)
async def test_import_errors_are_one_line(project: Path, make_session, arg: str, message: str) -> None:
    (project / "bad.jsonl").write_text("this is not json\n")
    session, _ = make_session([])
    before = session.session_id
    app = make_app(session)
    async with app.run_test(size=(160, 30)) as pilot:
        await run_command(app, pilot, f"/import {arg}".strip())
        await wait_until(pilot, lambda: message in _transcript(app), what=message)
        assert "Traceback" not in _transcript(app)
        assert session.session_id == before


async def test_changelog_shows_the_projects_changelog(project: Path, make_session) -> None:
    session, _ = make_session([])
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await run_command(app, pilot, "/changelog")
        from pi_coder.core.changelog import read_changelog
        from pi_coder.tui.widgets.markdown_view import StreamingMarkdown

        def shown() -> list[str]:
            return [block.source for block in app.query(StreamingMarkdown) if block.has_class("info-block")]

        await wait_until(pilot, lambda: read_changelog().strip() in shown(), what="changelog block")
        await wait_until(pilot, lambda: "credentials file" in _transcript(app), what="changelog on screen")


async def test_debug_writes_a_redacted_report_without_any_key(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = project.parent / "home"
    env_key, stored_key, cli_key, toml_key = (
        "sk-env-SECRET-1111111111",
        "sk-stored-SECRET-2222222",
        "sk-cli-SECRET-3333333333",
        "sk-toml-SECRET-444444444",
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", env_key)
    (home / "credentials.json").write_text(json.dumps({"openai": {"type": "api_key", "key": stored_key}}))
    (home / "models.toml").write_text(
        '[providers.local]\napi = "openai-completions"\nbase_url = "http://127.0.0.1:9/v1"\n'
        f'api_key = "{toml_key}"\nmodels = [{{ id = "m1" }}]\n'
    )
    models = create_models(models_toml=home / "models.toml", api_key_override={"google": cli_key})
    _, providers = faux_models(("beta", "beta-smart", True))
    models.set_provider(providers["beta"])
    session = session_for(project, models, models.get_model("beta", "beta-smart"), no_session=True)
    app = make_app(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await run_command(app, pilot, "/debug")
        await wait_until(pilot, lambda: "Written to" in _transcript(app), what="report shown")
        reports = sorted(logs_dir().glob("pi-debug-*.md"))
        assert len(reports) == 1 and reports[0].stat().st_mode & 0o777 == 0o600
        text = reports[0].read_text()
        shown = _transcript(app)
        for key in (env_key, stored_key, cli_key, toml_key):
            assert key not in text and key not in shown
        assert "SECRET" not in text
        assert "- Model: beta-smart" in text and "- Provider: beta" in text
        assert f"- Folder: {project}" in text and "settings.toml" in text
        for name in ("pi_coder:", "Python:", "textual:", "httpx:", "Extensions: 0", "MCP servers: 0", "Skills: 0"):
            assert name in text
        assert "- Providers with a key: " in text and "local (1 models)" in text
