"""TUI test helpers: a real AgentSession on the faux provider in a temporary home and project."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_coder.ai.models import create_models
from pi_coder.ai.providers.faux import FauxProvider, faux_provider
from pi_coder.core import AgentSession, create_agent_session
from pi_coder.settings import load_settings

SessionFactory = Callable[..., tuple[AgentSession, FauxProvider]]


@pytest.fixture
def project(cwd: Path) -> Path:
    """The root ``cwd`` fixture's empty project (no provider key set), with its home folder created."""
    (cwd.parent / "home").mkdir(exist_ok=True)
    return cwd


@pytest.fixture
def make_session(project: Path) -> SessionFactory:
    """``make_session(responses, tool_names=[...], **kwargs) -> (session, faux)``."""

    def factory(responses: list[Any] | None = None, **kwargs: Any) -> tuple[AgentSession, FauxProvider]:
        faux = kwargs.pop("faux", None) or faux_provider(list(responses or []), **kwargs.pop("faux_options", {}))
        models = create_models(include_builtin=False, env={}, models_toml=Path("/nonexistent/models.toml"))
        models.set_provider(faux)
        kwargs.setdefault("tool_names", [])
        kwargs.setdefault("model", faux.model)
        kwargs.setdefault("no_session", True)
        session = create_agent_session(str(project), settings=load_settings(str(project)), models=models, **kwargs)
        return session, faux

    return factory
