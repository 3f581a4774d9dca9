"""Helpers for the screen tests: deterministic session files, several faux providers, the app."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pi_coder.ai.models import Models, create_models
from pi_coder.ai.providers.faux import FauxProvider, faux_provider
from pi_coder.ai.registry import Provider
from pi_coder.ai.types import Model
from pi_coder.core import AgentSession, create_agent_session
from pi_coder.paths import session_dir_for_cwd
from pi_coder.settings import load_settings
from pi_coder.tui.app import PiApp

FIXED_NOW = datetime(2025, 3, 10, 12, 0, 0, tzinfo=UTC)
"""The clock the session picker is given in tests (session files are written relative to it)."""


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class SessionWriter:
    """Builds a session file with fixed ids and timestamps, entry by entry.

    Each entry is a child of the previous one unless ``parent=`` is given; entry ``n`` gets the
    timestamp ``start + n`` seconds.
    """

    def __init__(self, cwd: str, session_id: str, start: datetime, *, directory: Path | None = None) -> None:
        self.cwd = cwd
        self.session_id = session_id
        self.start = start
        self.directory = directory if directory is not None else session_dir_for_cwd(cwd)
        self.lines: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": session_id, "timestamp": _iso(start), "cwd": cwd}
        ]
        self.last: str | None = None
        self.count = 0

    def _entry(self, kind: str, entry_id: str, parent: str | None | bool, **fields: Any) -> str:
        self.count += 1
        moment = self.start + timedelta(seconds=self.count)
        parent_id = self.last if parent is True else parent
        self.lines.append({"type": kind, "id": entry_id, "parentId": parent_id, "timestamp": _iso(moment), **fields})
        self.last = entry_id
        return entry_id

    def _ms(self) -> int:
        return int((self.start + timedelta(seconds=self.count + 1)).timestamp() * 1000)

    def model_change(self, entry_id: str, provider: str = "faux", model_id: str = "faux-1") -> str:
        return self._entry("model_change", entry_id, True, provider=provider, modelId=model_id)

    def thinking(self, entry_id: str, level: str = "off") -> str:
        return self._entry("thinking_level_change", entry_id, True, thinkingLevel=level)

    def user(self, entry_id: str, text: str, parent: str | None | bool = True) -> str:
        message = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": self._ms()}
        return self._entry("message", entry_id, parent, message=message)

    def assistant(self, entry_id: str, text: str, parent: str | None | bool = True, **extra: Any) -> str:
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": text}] if text else extra.pop("content", []),
            "api": "faux",
            "provider": "faux",
            "model": "faux-1",
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": extra.pop("stop_reason", "stop"),
            "timestamp": self._ms(),
        }  # fmt: skip
        return self._entry("message", entry_id, parent, message=message)

    def tool_result(self, entry_id: str, call_id: str, name: str, text: str) -> str:
        message = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": False,
            "timestamp": self._ms(),
        }
        return self._entry("message", entry_id, True, message=message)

    def label(self, entry_id: str, target: str, label: str) -> str:
        return self._entry("label", entry_id, True, targetId=target, label=label)

    def custom(self, entry_id: str, custom_type: str, data: Any = None) -> str:
        """An extension's ``custom`` entry (``pi.append_entry``)."""
        return self._entry("custom", entry_id, True, customType=custom_type, data=data)

    def name(self, entry_id: str, name: str) -> str:
        return self._entry("session_info", entry_id, True, name=name)

    def write(self) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        stamp = _iso(self.start).replace(":", "-").replace(".", "-")
        path = self.directory / f"{stamp}_{self.session_id}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


def branchy_session(cwd: str, session_id: str = "11111111-2222-3333-4444-555555555555") -> Path:
    """A session with two branches after the first answer; the leaf is on the "try B" branch."""
    w = SessionWriter(cwd, session_id, FIXED_NOW - timedelta(hours=3))
    w.model_change("e0000001")
    w.thinking("e000000t")
    w.user("e0000002", "hello there")
    w.assistant("e0000003", "Hi! How can I help?")
    w.user("e0000004", "try plan A")
    w.assistant(
        "e0000005",
        "",
        content=[{"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "src/app.py"}}],
        stop_reason="toolUse",
    )
    w.tool_result("e0000006", "call_1", "read", "print('hi')")
    w.assistant("e0000007", "Plan A is done.")
    w.user("e0000008", "try plan B", parent="e0000003")
    w.assistant("e0000009", "Plan B is done.")
    return w.write()


def faux_models(*specs: tuple[str, str, bool]) -> tuple[Models, dict[str, FauxProvider]]:
    """Models with one faux provider per distinct provider name in ``(provider, model_id, reasoning)``."""
    models = create_models(include_builtin=False, env={}, models_toml=Path("/nonexistent/models.toml"))
    providers: dict[str, FauxProvider] = {}
    for provider, model_id, reasoning in specs:
        if provider not in providers:
            providers[provider] = faux_provider([], name=provider, model_id=model_id, reasoning=reasoning)
        else:
            first = providers[provider].models[0]
            providers[provider].models.append(first.model_copy(update={"id": model_id, "name": model_id, "reasoning": reasoning}))
    for faux in providers.values():
        models.set_provider(faux)
    return models, providers


def keyless_provider(name: str = "locked", model_id: str = "locked-model") -> Provider:
    """A provider that needs a key and has none (its models must not be offered)."""
    model = Model(id=model_id, name=model_id, api="openai-completions", provider=name, context_window=1000, max_tokens=100)
    return Provider(name=name, api="openai-completions", models=[model], env_vars=("LOCKED_API_KEY",))


def make_app(session: AgentSession, **options: Any) -> PiApp:
    """The app every TUI test drives: version 0.0.0, folder ``~/project``, no branch, no animation."""
    options.setdefault("version", "0.0.0")
    options.setdefault("cwd_display", "~/project")
    options.setdefault("branch", "")
    options.setdefault("animate", False)
    return PiApp(session, **options)


def make_app_with_extensions(
    session: AgentSession, project: Path, specs: list[str], files: dict[str, str] | None = None, **options: Any
) -> PiApp:
    """:func:`make_app` with the extensions ``specs`` loaded and bound (``files``: name -> source, written first)."""
    from pi_coder.extensions.loader import discover, load_extensions
    from pi_coder.extensions.runner import ExtensionRunner

    for name, source in (files or {}).items():
        (project / name).write_text(textwrap.dedent(source))
    runner = ExtensionRunner(str(project), models=session.models)
    sources, problems = discover(cli_specs=specs, cwd=str(project), config_dir=project / "none")
    assert not problems, problems
    load_extensions(runner, sources)
    runner.bind(session)
    return make_app(session, **options)


def session_for(project: Path, models: Models, model: Model | None, **kwargs: Any) -> AgentSession:
    kwargs.setdefault("tool_names", [])
    return create_agent_session(str(project), settings=load_settings(str(project)), models=models, model=model, **kwargs)
