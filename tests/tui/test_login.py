"""/login and /logout: a key pasted in the TUI goes to a 0600 credentials file and makes the
provider's models usable; /model re-reads models.toml and the credentials file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from pi_coder.ai.models import create_models
from pi_coder.ai.providers.faux import faux_provider
from pi_coder.tui.screens.dialogs import InputDialog
from pi_coder.tui.screens.model_picker import ModelPicker
from pi_coder.tui.screens.provider_picker import ProviderPicker
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app, session_for

SECRET = "sk-test-0123456789abcdef"


def _locked_session(project: Path):
    home = project.parent / "home"
    models = create_models(include_builtin=False, env={}, models_toml=home / "models.toml")
    faux = faux_provider(None, name="mocka", model_id="claude-mock")
    faux.requires_key = True
    models.set_provider(faux)
    return session_for(project, models, None), home


async def test_login_writes_private_credentials_and_the_model_answers(project: Path) -> None:
    session, home = _locked_session(project)
    assert session.model is None and session.available_models() == []
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/login")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ProviderPicker), what="provider choice")
        assert "mocka" in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, InputDialog), what="key field")
        await pilot.press(*SECRET)
        await pilot.pause()
        assert SECRET not in screen_text(app)  # masked
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.model is not None, what="model switched")
        path = home / "credentials.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert json.loads(path.read_text()) == {"mocka": {"type": "api_key", "key": SECRET}}  # Pi's auth.json shape
        assert (session.model.provider, session.model.id) == ("mocka", "claude-mock")
        assert "Key for mocka saved" in screen_text(app)
        await type_text(pilot, "hello there")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "hello there" in (session.last_assistant_text() or ""), what="answer")
        await wait_until(pilot, lambda: not session.is_streaming, what="idle")
    for name in ("settings.toml",):
        target = home / name
        assert not target.exists() or SECRET not in target.read_text()
    for jsonl in home.rglob("*.jsonl"):
        assert SECRET not in jsonl.read_text()


async def test_login_lists_every_catalog_provider_searchable_and_marks_configured_ones(project: Path) -> None:
    from pi_coder.ai.catalog import BUILTIN_PROVIDERS

    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    (home / "credentials.json").write_text(json.dumps({"deepseek": {"type": "api_key", "key": SECRET}}))
    models = create_models(env={"GROQ_API_KEY": "gsk-test"}, models_toml=home / "models.toml")
    session = session_for(project, models, None)
    app = make_app(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_text(pilot, "/login")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ProviderPicker), what="provider list")
        await pilot.pause()
        rows = {line.split()[1] if line.split()[0] == "→" else line.split()[0]: line for line in
                (row.strip(" │") for row in screen_text(app).splitlines()) if line and line.split()[0] in
                {p.name for p in BUILTIN_PROVIDERS} | {"→"}}  # fmt: skip
        assert set(rows) == {provider.name for provider in BUILTIN_PROVIDERS}
        assert "✓ GROQ_API_KEY set" in rows["groq"] and "✓ key stored" in rows["deepseek"]
        assert "✓" not in rows["mistral"] and "✓" not in rows["anthropic"]
        await pilot.press(*"mistr")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, ProviderPicker) and [entry.key for entry in picker.shown] == ["mistral"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, InputDialog), what="key field")
        assert "mistral" in screen_text(app)
        assert SECRET not in screen_text(app)
        await pilot.press("escape")


async def test_logout_removes_the_stored_key(project: Path) -> None:
    session, home = _locked_session(project)
    (home / "credentials.json").write_text(json.dumps({"mocka": SECRET}))
    session.models.load_credentials()
    assert session.models.has_key("mocka")
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/logout mocka")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "removed" in screen_text(app), what="logout notice")
        assert json.loads((home / "credentials.json").read_text()) == {}
        assert not session.models.has_key("mocka")


async def test_model_picker_rereads_models_toml_and_credentials(project: Path) -> None:
    session, home = _locked_session(project)
    app = make_app(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        (home / "models.toml").write_text(
            '[providers.local]\napi = "openai-completions"\nbase_url = "http://127.0.0.1:9/v1"\n'
            'api_key = "none"\nmodels = [{ id = "qwen-added" }]\n'
        )
        (home / "credentials.json").write_text(json.dumps({"mocka": SECRET}))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPicker), what="picker")
        await pilot.pause()
        keys = [entry.key for entry in app.screen.shown]
        assert "local/qwen-added" in keys and "mocka/claude-mock" in keys
