"""``plan_startup``: command-line choices + settings + models + store -> a frozen StartupPlan.

The function reads only its arguments, so these tests build the inputs in memory (a working
directory that does not exist proves no file is read) and check the plan's values; the last
tests assemble a session from a plan with ``create_agent_session(plan)``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pi_coder.ai.models import Models
from pi_coder.ai.providers.faux import faux_provider
from pi_coder.core import create_agent_session
from pi_coder.core.startup import PlanOptions, StartupPlan, plan_startup, select_tools
from pi_coder.errors import UserError
from pi_coder.session.store import SessionStore
from pi_coder.settings import LoadedSettings, Settings
from tests.core._agent_session_support import make_models

NOWHERE = "/nonexistent/project"


def _models(*, reasoning: bool = False, max_level: bool = False) -> Models:
    provider = faux_provider(name="faux", model_id="faux-1", reasoning=reasoning)
    if max_level:
        levels = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}
        provider.model.thinking_level_map = levels  # type: ignore[assignment]
    return make_models(provider)


def _plan(options: PlanOptions | None = None, settings: Settings | LoadedSettings | None = None, **kw: object) -> StartupPlan:
    models = kw.pop("models", None) or _models()
    store = kw.pop("store", None) or SessionStore.in_memory(NOWHERE)
    return plan_startup(
        options or PlanOptions(),
        cwd=NOWHERE,
        settings=settings or Settings(),
        models=models,  # type: ignore[arg-type]
        store=store,  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def test_defaults_give_the_default_tools_the_available_model_and_no_notices() -> None:
    plan = _plan()
    assert plan.model is not None and (plan.model.provider, plan.model.id) == ("faux", "faux-1")
    assert plan.thinking_level == "off"  # not a reasoning model: clamped
    assert plan.tool_names == ("read", "bash", "edit", "write")
    assert plan.context_files and plan.discover_prompt_templates
    assert plan.append_system_prompts == () and plan.session_name is None and plan.theme is None
    assert plan.notices == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.model = None  # type: ignore[misc]


def test_thinking_max_is_accepted_and_clamped_per_model() -> None:
    assert _plan(PlanOptions(thinking="max"), models=_models(reasoning=True, max_level=True)).thinking_level == "max"
    assert _plan(PlanOptions(thinking="max"), models=_models(reasoning=True)).thinking_level == "high"
    assert _plan(PlanOptions(thinking="max")).thinking_level == "off"


def test_settings_choose_the_thinking_level_and_warnings_become_notices() -> None:
    loaded = LoadedSettings(
        settings=Settings(default_thinking_level="low"),
        cwd=Path(NOWHERE),
        global_path=Path("/nonexistent/settings.toml"),
        project_path=Path(NOWHERE, ".pi/settings.toml"),
        warnings=["settings.toml:3: bad value"],
    )
    plan = _plan(settings=loaded, models=_models(reasoning=True))
    assert plan.thinking_level == "low"
    assert plan.notices == ("settings.toml:3: bad value",)


def test_a_resumed_store_gives_its_model_and_level() -> None:
    models = make_models(faux_provider(name="a", model_id="m1", reasoning=True), faux_provider(name="b", model_id="m2", reasoning=True))
    store = SessionStore.in_memory(NOWHERE)
    store.append_model_change("b", "m2")
    store.append_thinking_level_change("high")
    plan = _plan(models=models, store=store)
    assert plan.model is not None and plan.model.id == "m2" and plan.thinking_level == "high"
    assert plan.store is store


@pytest.mark.parametrize(
    ("entries", "flags", "expected"),
    [
        (None, {}, ("read", "bash", "edit", "write")),
        (["+grep", "-write"], {}, ("read", "bash", "edit", "grep")),
        (["*"], {}, ("read", "bash", "edit", "write", "grep", "find", "ls")),
        (["gr*", "ls"], {}, ("grep", "ls")),
        (["read"], {"no_builtin_tools": True}, ("read",)),
        (None, {"no_builtin_tools": True}, ()),
        (["+ls"], {"no_tools": True}, ("ls",)),
        (["mcp__server__*"], {}, ("read", "bash", "edit", "write")),  # MCP entries leave the built-ins alone
        (None, {"exclude": ["b*", "edit"]}, ("read", "write")),
        (["*"], {"exclude": ["*"]}, ()),
    ],
)
def test_tool_selection(entries: list[str] | None, flags: dict[str, object], expected: tuple[str, ...]) -> None:
    assert select_tools(entries, **flags) == expected  # type: ignore[arg-type]


def test_unknown_tools_warn_and_mixed_forms_fail() -> None:
    plan = _plan(PlanOptions(tools=["+teleport", "+ls"]))
    assert plan.tool_names == ("read", "bash", "edit", "write", "ls")
    assert plan.notices == ('Unknown tool "teleport". Valid tools: read, bash, edit, write, grep, find, ls',)
    with pytest.raises(UserError, match="cannot mix"):
        _plan(PlanOptions(tools=["read", "+grep"]))


def test_prompt_resources_and_theme_choices_are_recorded() -> None:
    settings = Settings(themes=["~/themes"], prompts=["~/prompts"])
    options = PlanOptions(
        system_prompt="You are terse.",
        append_system_prompt=["one", "two.md"],
        no_context_files=True,
        prompt_templates=["review.md"],
        no_prompt_templates=True,
        themes=["mine.json"],
        use_theme="light",
        name="  Refactor auth  ",
        verbose=True,
    )
    plan = _plan(options, settings)
    assert plan.system_prompt == "You are terse." and plan.append_system_prompts == ("one", "two.md")
    assert not plan.context_files
    assert plan.prompt_template_paths == ("review.md",) and not plan.discover_prompt_templates
    assert plan.theme == "light" and plan.theme_paths == ("~/themes", "mine.json")
    assert plan.session_name == "Refactor auth" and plan.verbose
    assert _plan(PlanOptions(themes=["x.json"], no_themes=True), settings).theme_paths == ("x.json",)
    assert _plan(PlanOptions(), settings).theme_paths is None  # the setting stays in charge (and /reload)


def test_session_dir_falls_back_to_the_setting() -> None:
    assert _plan(settings=Settings(session_dir="/s")).session_dir == "/s"
    assert _plan(settings=Settings(session_dir="/s"), session_dir="/cli").session_dir == "/cli"


def test_create_agent_session_assembles_the_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Use tabs.\n")
    (project / "two.md").write_text("From a file.\n")
    (project / "t").mkdir()
    (project / "t" / "review.md").write_text("Review $1 carefully.\n")
    settings = Settings()
    options = PlanOptions(
        tools=["+grep", "-bash"],
        append_system_prompt=["First addition.", "two.md"],
        no_context_files=True,
        prompt_templates=[str(project / "t")],
        no_prompt_templates=True,
        use_theme="light",
        name="Named",
    )
    plan = plan_startup(
        options, cwd=str(project), settings=settings, models=_models(), store=SessionStore.in_memory(str(project))
    )
    session = create_agent_session(plan)
    assert session.tool_names == ["read", "edit", "write", "grep"]
    assert session.session_name == "Named"
    assert session.context_files == []
    prompt = session.system_prompt
    assert prompt.index("First addition.") < prompt.index("From a file.") and "Use tabs." not in prompt
    assert [t.name for t in session.prompt_templates] == ["review"]
    assert session.settings.theme == "light"


def test_max_as_the_default_thinking_setting_is_clamped_too() -> None:
    assert _plan(settings=Settings(default_thinking_level="max"), models=_models(reasoning=True)).thinking_level == "high"
    deep = _models(reasoning=True, max_level=True)
    assert _plan(settings=Settings(default_thinking_level="max"), models=deep).thinking_level == "max"
